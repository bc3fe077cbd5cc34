// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command benchcompare reads the reports that make bench writes into each run's folder
// (results.json from test/bench, strategies.json from test/strategies) and
//
//   - compares two runs, or two series of runs: it pairs the figures by benchmark,
//     parameters and metric, and prints one row for each with the old value, the new
//     one, the change and the noise band of the series (their range over the median);
//     a change larger than the band is flagged, as benchstat flags a significant one.
//     A figure that only one side has is listed as added or gone;
//   - summarizes a series of runs: each figure's median and range (summary.json and
//     summary.md), what the docs quote;
//   - checks the goals: every figure whose goal is a bound ("< 256 MiB", "≤ 1.2") is
//     printed as met or missed with its margin, and a miss makes it exit 1.
//
// A series is a list of runs joined by commas, or a folder of a series (holding
// run-1, run-2, ... or a summary.json): its figures are the medians.
//
//	go run ./hack/benchcompare OLD NEW
//	go run ./hack/benchcompare -summary OUT RUN...
//	go run ./hack/benchcompare -check RUN
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"open-cluster-management.io/traffic-migration/test/benchreport"
)

type result = benchreport.Result

func main() {
	summary := flag.String("summary", "", "write the median and range of each figure over the runs given into this folder (summary.json, summary.md)")
	check := flag.Bool("check", false, "print each figure's goal as met or missed; exit 1 on a miss")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchcompare OLD NEW | -summary OUT RUN... | -check RUN\n"+
			"Each OLD, NEW or RUN is a results file, a run's folder, a folder of runs (run-1, run-2, ...), or several joined by commas.")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	var err error
	switch {
	case *summary != "" && len(args) > 0:
		err = summarize(*summary, strings.Join(args, ","))
	case *check && len(args) == 1:
		var rs []result
		if rs, err = readSeries(args[0]); err == nil {
			var missed int
			if missed, err = checkGoals(os.Stdout, rs); err == nil && missed > 0 {
				fmt.Fprintf(os.Stderr, "benchcompare: %d goals missed\n", missed)
				os.Exit(1)
			}
		}
	case *summary == "" && !*check && len(args) == 2:
		var old, new []result
		if old, err = readSeries(args[0]); err == nil {
			if new, err = readSeries(args[1]); err == nil {
				err = compare(os.Stdout, old, new)
			}
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

// reportFiles are the files of a run's folder: the manager's benchmarks'
// (test/bench) and the strategies' (test/strategies). A run may have either or both.
var reportFiles = []string{"results.json", "strategies.json"}

// summaryFile is the summary of a series, in the series' folder.
const summaryFile = "summary.json"

// readSeries reads the figures of a series: one run's, or each figure's median and
// range over several.
func readSeries(spec string) ([]result, error) {
	var runs [][]result
	for _, path := range strings.Split(spec, ",") {
		rs, err := readRuns(path)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	if len(runs) == 1 {
		return runs[0], nil
	}
	return aggregate(runs), nil
}

// readRuns reads a results file, a run's folder, or a series' folder: its summary,
// else each of its runs.
func readRuns(path string) ([][]result, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		rs, err := readFile(path)
		return [][]result{rs}, err
	}
	if rs, err := readFile(filepath.Join(path, summaryFile)); err == nil {
		return [][]result{rs}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	rs, err := readRun(path)
	if err == nil || !errors.Is(err, errNoReport) {
		return [][]result{rs}, err
	}
	subs, _ := filepath.Glob(filepath.Join(path, "run-*"))
	if len(subs) == 0 {
		return nil, err
	}
	var runs [][]result
	for _, sub := range subs {
		rs, err := readRun(sub)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs)
	}
	return runs, nil
}

var errNoReport = errors.New("no report")

// readRun reads the figures of a run's folder.
func readRun(path string) ([]result, error) {
	var all []result
	found := false
	for _, name := range reportFiles {
		rs, err := readFile(filepath.Join(path, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		all = append(all, rs...)
	}
	if !found {
		return nil, fmt.Errorf("%s holds none of %v, nor %s, nor runs (run-*): %w", path, reportFiles, summaryFile, errNoReport)
	}
	return all, nil
}

// readFile reads the figures of one results file.
func readFile(path string) ([]result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r struct {
		Results []result `json:"results"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r.Results, nil
}

// key pairs the figures of two runs.
func key(r result) string { return r.Benchmark + "\x00" + r.Params + "\x00" + r.Metric }

// aggregate is each figure's median and range over the runs that measured it, in the
// order the runs first give them.
func aggregate(runs [][]result) []result {
	var order []string
	first := map[string]result{}
	values := map[string][]float64{}
	for _, rs := range runs {
		for _, r := range rs {
			k := key(r)
			if _, ok := first[k]; !ok {
				order = append(order, k)
				first[k] = r
			}
			if !r.Unmeasured {
				values[k] = append(values[k], r.Value)
			}
		}
	}
	out := make([]result, 0, len(order))
	for _, k := range order {
		r, vs := first[k], values[k]
		if len(vs) == 0 { // measured in none of the runs
			out = append(out, r)
			continue
		}
		r.Value, r.Runs, r.Min, r.Max, r.Unmeasured = median(vs), len(vs), slices.Min(vs), slices.Max(vs), false
		out = append(out, r)
	}
	return out
}

// median is the median of xs (the mean of the middle two of an even number).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// summarize writes the median and range of each figure of the runs into dir.
func summarize(dir, runs string) error {
	rs, err := readSeries(runs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Runs    string   `json:"runs"`
		Results []result `json:"results"`
	}{runs, rs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, summaryFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	md := "# Summary of " + runs + "\n\nEach figure is the median of its runs, with their range in brackets.\n\n" + benchreport.ResultsMarkdown(rs)
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s and summary.md: %d figures\n", filepath.Join(dir, summaryFile), len(rs))
	return nil
}

// checkGoals prints each figure whose goal is a bound, met or missed, and returns how
// many were missed.
func checkGoals(w io.Writer, rs []result) (missed int, err error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tMETRIC\tVALUE\tGOAL\tVERDICT")
	checked := 0
	for _, r := range rs {
		v := r.Verdict()
		if v == "" {
			continue
		}
		checked++
		if r.Missed() {
			missed++
			v = "MISSED" + strings.TrimPrefix(v, "missed")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Benchmark, r.Metric, r.Figure(), r.Goal, v)
	}
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "%d goals: %d met, %d missed\n", checked, checked-missed, missed)
	return missed, nil
}

// compare writes the table of old against new, in new's order and then the figures
// that only old has.
func compare(w io.Writer, old, new []result) error {
	olds := map[string]result{}
	for _, r := range old {
		olds[key(r)] = r
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tPARAMS\tMETRIC\tOLD\tNEW\tCHANGE\tNOISE")
	seen := map[string]bool{}
	for _, n := range new {
		k := key(n)
		seen[k] = true
		o, ok := olds[k]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t%s\tadded\t\n", n.Benchmark, n.Params, n.Metric, n.Figure())
			continue
		}
		c, noise := change(o, n)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Benchmark, n.Params, n.Metric, o.Figure(), n.Figure(), c, noise)
	}
	var gone []result
	for _, o := range old {
		if !seen[key(o)] {
			gone = append(gone, o)
		}
	}
	slices.SortStableFunc(gone, func(a, b result) int { return strings.Compare(key(a), key(b)) })
	for _, o := range gone {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\tgone\t\n", o.Benchmark, o.Params, o.Metric, o.Figure())
	}
	return tw.Flush()
}

// change is the relative change from old to new ("~" when there is none), and the
// noise band: the larger range of the two series over its median, with "!" when the
// change is larger than it; "?" when a side is a single run, whose noise is unknown.
func change(old, new result) (string, string) {
	var c string
	rel := math.NaN()
	switch {
	case old.Unmeasured || new.Unmeasured:
		return "-", ""
	case old.Value == new.Value:
		c = "~"
	case old.Value == 0:
		c = "from 0"
	default:
		rel = 100 * (new.Value - old.Value) / math.Abs(old.Value)
		c = fmt.Sprintf("%+.1f%%", rel)
	}
	if old.Runs < 2 || new.Runs < 2 {
		return c, "?"
	}
	band := max(spread(old), spread(new))
	noise := fmt.Sprintf("±%.1f%%", band)
	if !math.IsNaN(rel) && math.Abs(rel) > band {
		noise += " !"
	}
	return c, noise
}

// spread is a series' range over its median, in percent.
func spread(r result) float64 {
	if r.Value == 0 {
		return math.Inf(1)
	}
	return 100 * (r.Max - r.Min) / 2 / math.Abs(r.Value)
}
