// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command benchcompare shows what changed between two runs of the benchmarks: it reads
// the results.json and strategies.json that make bench writes into each run's folder
// (or the files given), pairs the figures by benchmark, parameters and metric, and
// prints one row for each with the old value, the new one and the change, as benchstat
// does for Go benchmarks.
// A figure that only one run has is listed as added or gone.
//
//	go run ./hack/benchcompare OLD NEW
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"
)

// result is one figure of a results.json.
type result struct {
	Benchmark string  `json:"benchmark"`
	Params    string  `json:"params"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchcompare OLD NEW (each a results file, or the folder of a run: its results.json and strategies.json)")
		os.Exit(2)
	}
	old, err := read(os.Args[1])
	if err == nil {
		var new []result
		if new, err = read(os.Args[2]); err == nil {
			err = compare(os.Stdout, old, new)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

// reportFiles are the files of a run's folder: the manager's benchmarks'
// (test/bench) and the strategies' (test/strategies). A run may have either or both.
var reportFiles = []string{"results.json", "strategies.json"}

// read reads a results file, or those of a folder.
func read(path string) ([]result, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return readFile(path)
	}
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
		return nil, fmt.Errorf("%s holds none of %v", path, reportFiles)
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

// compare writes the table of old against new, in new's order and then the figures
// that only old has.
func compare(w io.Writer, old, new []result) error {
	key := func(r result) string { return r.Benchmark + "\x00" + r.Params + "\x00" + r.Metric }
	olds := map[string]result{}
	for _, r := range old {
		olds[key(r)] = r
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tPARAMS\tMETRIC\tOLD\tNEW\tCHANGE")
	seen := map[string]bool{}
	for _, n := range new {
		k := key(n)
		seen[k] = true
		o, ok := olds[k]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t%s\tadded\n", n.Benchmark, n.Params, n.Metric, value(n))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Benchmark, n.Params, n.Metric, value(o), value(n), change(o.Value, n.Value))
	}
	var gone []result
	for _, o := range old {
		if !seen[key(o)] {
			gone = append(gone, o)
		}
	}
	slices.SortStableFunc(gone, func(a, b result) int {
		if key(a) < key(b) {
			return -1
		}
		return 0
	})
	for _, o := range gone {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\tgone\n", o.Benchmark, o.Params, o.Metric, value(o))
	}
	return tw.Flush()
}

// value is a figure with its unit.
func value(r result) string {
	s := strconv.FormatFloat(r.Value, 'g', 4, 64)
	if r.Unit != "" {
		s += " " + r.Unit
	}
	return s
}

// change is the relative change from old to new, "~" when there is none.
func change(old, new float64) string {
	switch {
	case old == new:
		return "~"
	case old == 0:
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*(new-old)/math.Abs(old))
}
