// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// result is one number a benchmark measured.
type result struct {
	Benchmark string  `json:"benchmark"`
	Params    string  `json:"params"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit,omitempty"`
	Goal      string  `json:"goal,omitempty"`
}

// report is everything one run measured.
type report struct {
	Sizes   sizes                `json:"sizes"`
	Started time.Time            `json:"started"`
	Results []result             `json:"results"`
	Tables  []table              `json:"tables,omitempty"`
	raw     map[string][]float64 // samples behind percentiles, by name
	// dir is where the report goes; heapTop, when set, is printed after the tables.
	dir     string
	heapTop string
}

// table is a side-by-side view of some results, printed after the list of all of them.
type table struct {
	Title  string     `json:"title"`
	Intro  string     `json:"intro,omitempty"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

func (t table) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", t.Title)
	if t.Intro != "" {
		b.WriteString(t.Intro + "\n\n")
	}
	b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|" + strings.Repeat("---|", len(t.Header)) + "\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func (r *report) add(benchmark, params, metric string, value float64, unit, goal string) {
	r.Results = append(r.Results, result{Benchmark: benchmark, Params: params, Metric: metric, Value: value, Unit: unit, Goal: goal})
}

// write writes report.md and results.json into dir.
func (r *report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw := map[string][]float64{}
	for k, v := range r.raw {
		raw[k] = v
	}
	b, err := json.MarshalIndent(struct {
		*report
		Raw map[string][]float64 `json:"samples"`
	}{r, raw}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# traffic-migration benchmarks (%s mode, %s)\n\n", r.Sizes.Mode, r.Started.Format(time.RFC3339))
	fmt.Fprintf(&md, "Test bed: real etcd, kube-apiserver, Prometheus (1s scrapes), OCM placement controller and the manager binary on one machine. Raw numbers: results.json.\n\n")
	md.WriteString("| Benchmark | Setup | Metric | Value | Goal |\n|---|---|---|---|---|\n")
	for _, x := range r.Results {
		fmt.Fprintf(&md, "| %s | %s | %s | %s %s | %s |\n", x.Benchmark, x.Params, x.Metric, format(x.Value), x.Unit, x.Goal)
	}
	for _, t := range r.Tables {
		md.WriteString("\n" + t.markdown())
	}
	if r.heapTop != "" {
		md.WriteString("\n## Where the manager's memory goes\n\n" + r.heapTop)
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(md.String()), 0o644)
}

func format(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// percentile is the nearest-rank percentile of xs; 0 gives the minimum.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}
