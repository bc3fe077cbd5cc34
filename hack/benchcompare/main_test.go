// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
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
	old, err := read(oldDir)
	if err != nil {
		t.Fatal(err)
	}
	if new, err := read(filepath.Join(newDir, "results.json")); err != nil || len(new) != 3 {
		t.Fatalf("read one file: %d figures, %v; want 3", len(new), err)
	}
	new, err := read(newDir)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := compare(&out, old, new); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"BENCHMARK", "CHANGE"},
		{"1. Fleet", "10000 clusters", "RSS", "257 MiB", "231.3 MiB", "-10.0%"},
		{"2. Sync", "p99", "0.5 s", "0.5 s", "~"},
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
	if _, err := read(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing folder was read")
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := read(filepath.Join(dir, "empty")); err == nil || !strings.Contains(err.Error(), "strategies.json") {
		t.Errorf("a folder without results: %v, want an error naming the files it looked for", err)
	}
}
