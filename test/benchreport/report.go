// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package benchreport is the report of a benchmark run: every figure beside its goal,
// as JSON that hack/benchcompare compares between runs, and as Markdown with the
// tables that put figures side by side. The manager's benchmarks (test/bench) and the
// strategies benchmark (test/strategies) each write one.
package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Result is one number a benchmark measured.
type Result struct {
	Benchmark string  `json:"benchmark"`
	Params    string  `json:"params"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit,omitempty"`
	Goal      string  `json:"goal,omitempty"`
	// Runs, Min and Max are set in a summary of several runs (hack/benchcompare
	// -summary): Value is then the median of Runs runs, and Min and Max their range.
	Runs int     `json:"runs,omitempty"`
	Min  float64 `json:"min,omitempty"`
	Max  float64 `json:"max,omitempty"`
	// Unmeasured: the run could not compute the figure (no observations, or a division
	// by zero). JSON has no NaN, so Value is then 0, and a goal counts as missed.
	Unmeasured bool `json:"unmeasured,omitempty"`
}

// Figure is the result's value with its unit, and its range over the runs of a
// summary: "2.1 s [1.8-2.6, 3 runs]".
func (x Result) Figure() string {
	unit := ""
	if x.Unit != "" {
		unit = " " + x.Unit
	}
	if x.Unmeasured {
		return "not measured"
	}
	if x.Runs > 1 {
		return fmt.Sprintf("%s%s [%s-%s, %d runs]", Format(x.Value), unit, Format(x.Min), Format(x.Max), x.Runs)
	}
	return Format(x.Value) + unit
}

// Report is everything one run measured.
type Report struct {
	// Title heads the Markdown; Bed says in a sentence what the run ran on.
	Title string `json:"title"`
	Bed   string `json:"bed"`
	// Machine is the machine the run measured on.
	Machine string `json:"machine"`
	// Commit is the checkout the run measured (git describe: the short commit,
	// "-dirty" when the tree had changes), GoVersion the Go that built the benchmark.
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	// LoadStart and LoadEnd are the machine's load averages (1, 5 and 15 minutes)
	// when the run started and when its report was written: other work on the
	// machine skews every figure.
	LoadStart string    `json:"loadAverageAtStart"`
	LoadEnd   string    `json:"loadAverageAtEnd"`
	Sizes     any       `json:"sizes"`
	Started   time.Time `json:"started"`
	Results   []Result  `json:"results"`
	Tables    []Table   `json:"tables,omitempty"`
	// Raw are the samples behind percentiles, by name.
	Raw map[string][]float64 `json:"samples,omitempty"`
	// Dir is where the report goes.
	Dir string `json:"-"`
	// HeapTop, when set, is printed after the tables.
	HeapTop string `json:"-"`
}

// New starts the report of a run that writes into dir.
func New(title, bed string, sizes any, dir string) *Report {
	return &Report{Title: title, Bed: bed, Machine: Machine(), Commit: Commit(), GoVersion: runtime.Version(), LoadStart: LoadAverage(),
		Sizes: sizes, Started: time.Now().UTC(), Raw: map[string][]float64{}, Dir: dir}
}

// DirEnv names the folder a full run writes into, when set: make bench sets it to
// one folder per run of a series (<date>-<commit>/run-<n>).
const DirEnv = "TRAFFIC_MIGRATION_BENCH_DIR"

// RunDir is the folder of a full run's reports: DirEnv when set, else under root,
// <date>-<commit>, so that runs of other days or checkouts never overwrite it.
func RunDir(root string, started time.Time) string {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir
	}
	return filepath.Join(root, started.UTC().Format("2006-01-02")+"-"+Commit())
}

// Commit describes the checkout the benchmark runs in: its short commit, with
// "-dirty" when the tree has changes, or "unknown" outside a git checkout.
func Commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=7", "--exclude=*").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, as
// /proc/loadavg says, or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// Table is a side-by-side view of some results, printed after the list of all of them.
type Table struct {
	Title  string     `json:"title"`
	Intro  string     `json:"intro,omitempty"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// Markdown writes the table with its title and introduction.
func (t Table) Markdown() string {
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

// Add records a figure; one that is not a number (a percentile of no samples, a mean
// of none) is recorded as not measured, so that the report can still be written.
func (r *Report) Add(benchmark, params, metric string, value float64, unit, goal string) {
	x := Result{Benchmark: benchmark, Params: params, Metric: metric, Value: value, Unit: unit, Goal: goal}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		x.Value, x.Unmeasured = 0, true
	}
	r.Results = append(r.Results, x)
}

// Write writes the report into its Dir: the figures as JSON in jsonName, and as
// Markdown in mdName.
func (r *Report) Write(jsonName, mdName string) error {
	r.LoadEnd = LoadAverage()
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.Dir, jsonName), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s (%s)\n\n", r.Title, r.Started.Format(time.RFC3339))
	fmt.Fprintf(&md, "%s Machine: %s; load average %s at the start, %s at the end. Commit %s, %s. Raw numbers: %s.\n\n",
		r.Bed, r.Machine, r.LoadStart, r.LoadEnd, r.Commit, r.GoVersion, jsonName)
	md.WriteString(ResultsMarkdown(r.Results))
	for _, t := range r.Tables {
		md.WriteString("\n" + t.Markdown())
	}
	if r.HeapTop != "" {
		md.WriteString("\n## Where the manager's memory goes\n\n" + r.HeapTop)
	}
	return os.WriteFile(filepath.Join(r.Dir, mdName), []byte(md.String()), 0o644)
}

// Format writes a figure: whole numbers as such, others with three decimals.
func Format(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// ResultsMarkdown is the table of every figure, beside its goal and whether it meets
// it.
func ResultsMarkdown(results []Result) string {
	var md strings.Builder
	md.WriteString("| Benchmark | Setup | Metric | Value | Goal | Verdict |\n|---|---|---|---|---|---|\n")
	for _, x := range results {
		fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s |\n", x.Benchmark, x.Params, x.Metric, x.Figure(), x.Goal, x.Verdict())
	}
	return md.String()
}

// Percentile is the nearest-rank percentile of xs; 0 gives the minimum.
func Percentile(xs []float64, p float64) float64 {
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

// Machine describes this machine: its processor model, the processors Go may use, and
// its memory.
func Machine() string {
	model := "unknown processor"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	memory := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kib int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kib); err == nil {
			memory = fmt.Sprintf(", %.0f GiB", float64(kib)/(1<<20))
		}
	}
	return fmt.Sprintf("%d processors (%s)%s", runtime.NumCPU(), model, memory)
}
