// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "results.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name)
	}
	oldDir := write("old", `{"results":[
		{"benchmark":"1. Fleet","params":"10000 clusters","metric":"RSS","value":257,"unit":"MiB"},
		{"benchmark":"2. Sync","params":"","metric":"p99","value":0.5,"unit":"s"},
		{"benchmark":"3. Gone","params":"","metric":"x","value":1}]}`)
	newDir := write("new", `{"results":[
		{"benchmark":"1. Fleet","params":"10000 clusters","metric":"RSS","value":231.3,"unit":"MiB"},
		{"benchmark":"2. Sync","params":"","metric":"p99","value":0.5,"unit":"s"},
		{"benchmark":"4. New","params":"","metric":"y","value":2}]}`)
	// The strategies' figures, in a file of their own beside the new run's.
	strategies := `{"results":[{"benchmark":"0. Strategies","params":"no proxy","metric":"failed requests","value":12}]}`
	if err := os.WriteFile(filepath.Join(newDir, "strategies.json"), []byte(strategies), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := readSeries(oldDir)
	if err != nil {
		t.Fatal(err)
	}
	if new, err := readSeries(filepath.Join(newDir, "results.json")); err != nil || len(new) != 3 {
		t.Fatalf("read one file: %d figures, %v; want 3", len(new), err)
	}
	new, err := readSeries(newDir)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := compare(&out, old, new); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"BENCHMARK", "CHANGE", "NOISE"},
		{"1. Fleet", "10000 clusters", "RSS", "257 MiB", "231.300 MiB", "-10.0%", "?"},
		{"2. Sync", "p99", "0.500 s", "0.500 s", "~"},
		{"4. New", "-", "2", "added"},
		{"0. Strategies", "no proxy", "failed requests", "-", "12", "added"},
		{"3. Gone", "1", "-", "gone"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, parts := range want {
		for _, p := range parts {
			if !strings.Contains(lines[i], p) {
				t.Errorf("line %d %q lacks %q", i+1, lines[i], p)
			}
		}
	}
	if _, err := readSeries(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing folder was read")
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := readSeries(filepath.Join(dir, "empty")); err == nil || !strings.Contains(err.Error(), "strategies.json") {
		t.Errorf("a folder without results: %v, want an error naming the files it looked for", err)
	}
}

// TestSeries checks the median and range of a series of runs, its summary, the noise
// band of a comparison and the goals' check.
func TestSeries(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, rss, p99 float64) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf(`{"results":[
			{"benchmark":"1. Fleet","params":"","metric":"RSS","value":%g,"unit":"MiB","goal":"< 256 MiB"},
			{"benchmark":"2. Sync","params":"","metric":"p99","value":%g,"unit":"s","goal":"≤ 1 s"},
			{"benchmark":"3. Words","params":"","metric":"x","value":1,"goal":"as low as it goes"}]}`, rss, p99)
		if err := os.WriteFile(filepath.Join(path, "results.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run("old/run-1", 240, 0.5)
	run("old/run-2", 250, 0.6)
	run("old/run-3", 245, 0.7)
	newRuns := run("new/run-1", 260, 0.4) + "," + run("new/run-2", 270, 0.5) + "," + run("new/run-3", 262, 0.5)

	old, err := readSeries(filepath.Join(dir, "old"))
	if err != nil {
		t.Fatal(err)
	}
	if r := old[0]; r.Value != 245 || r.Min != 240 || r.Max != 250 || r.Runs != 3 {
		t.Errorf("RSS over the old runs: %+v, want median 245 in 240-250 of 3 runs", r)
	}
	if err := summarize(filepath.Join(dir, "old"), filepath.Join(dir, "old")); err != nil {
		t.Fatal(err)
	}
	// The series' folder now reads as its summary.
	summary, err := readSeries(filepath.Join(dir, "old"))
	if err != nil || len(summary) != 3 || summary[1].Value != 0.6 || summary[1].Runs != 3 {
		t.Fatalf("the summary reads back as %+v, %v", summary, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "old", "summary.md"))
	if err != nil || !strings.Contains(string(md), "245 MiB [240-250, 3 runs]") || !strings.Contains(string(md), "met, 11 MiB to spare") {
		t.Errorf("summary.md lacks the RSS's median, range and verdict:\n%s", md)
	}

	new, err := readSeries(newRuns)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := compare(&out, old, new); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	// RSS: +6.9% against a band of ±2.0% (old) and ±1.9% (new): beyond the noise.
	if !strings.Contains(lines[1], "+6.9%") || !strings.Contains(lines[1], "±2.0% !") {
		t.Errorf("the RSS row is %q, want +6.9%% flagged beyond a ±2.0%% band", lines[1])
	}
	// p99: -16.7% against a band of ±16.7% (old): within the noise.
	if !strings.Contains(lines[2], "-16.7%") || strings.Contains(lines[2], "!") {
		t.Errorf("the p99 row is %q, want -16.7%% within the noise", lines[2])
	}

	out.Reset()
	missed, err := checkGoals(&out, new)
	if err != nil {
		t.Fatal(err)
	}
	if missed != 1 || !strings.Contains(out.String(), "MISSED by 6 MiB") || !strings.Contains(out.String(), "2 goals: 1 met, 1 missed") {
		t.Errorf("check: %d missed, printed:\n%s\nwant the RSS missed by 6 MiB, p99 met", missed, out.String())
	}
}

// A figure a run could not measure is left out of the median and range; one that no
// run measured stays unmeasured, and its goal counts as missed.
func TestSeriesUnmeasured(t *testing.T) {
	dir := t.TempDir()
	for i, p99 := range []string{`"value":0.5`, `"value":0,"unmeasured":true`, `"value":0.7`} {
		path := filepath.Join(dir, fmt.Sprintf("run-%d", i+1))
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		text := `{"results":[
			{"benchmark":"2. Sync","params":"","metric":"p99",` + p99 + `,"unit":"s","goal":"≤ 1 s"},
			{"benchmark":"5. Idle","params":"","metric":"p99","value":0,"unmeasured":true,"unit":"s","goal":"≤ 1 s"}]}`
		if err := os.WriteFile(filepath.Join(path, "results.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := readSeries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("read %d figures, want 2: %+v", len(rs), rs)
	}
	if r := rs[0]; r.Unmeasured || r.Runs != 2 || r.Value != 0.6 || r.Min != 0.5 || r.Max != 0.7 {
		t.Errorf("the p99 measured in two runs of three: %+v, want the median 0.6 of 2 runs in 0.5-0.7", r)
	}
	if r := rs[1]; !r.Unmeasured || r.Figure() != "not measured" {
		t.Errorf("the p99 measured in no run: %+v, want it not measured", r)
	}
	var out strings.Builder
	if err := compare(&out, rs, rs); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out.String(), "\n"); !strings.Contains(lines[2], "not measured") || strings.Contains(lines[2], "~") {
		t.Errorf("the comparison's row of the unmeasured p99 is %q, want it not measured and no change computed", lines[2])
	}
	out.Reset()
	missed, err := checkGoals(&out, rs)
	if err != nil {
		t.Fatal(err)
	}
	if missed != 1 || !strings.Contains(out.String(), "MISSED: not measured") {
		t.Errorf("check: %d missed, printed:\n%s\nwant the unmeasured p99 missed", missed, out.String())
	}
}
