// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A figure that is not a number (a percentile of no samples) must not cost the run its
// report: encoding/json refuses NaN and infinities.
func TestWriteUnmeasured(t *testing.T) {
	dir := t.TempDir()
	r := New("test", "a bed.", nil, dir)
	r.Add("1. Cadence", "", "delay p99", Percentile(nil, 99), "s", "< 2 s")
	r.Add("1. Cadence", "", "queries per check", math.Inf(1), "", "")
	r.Add("1. Cadence", "", "checks", 3, "", "")
	if err := r.Write("results.json", "report.md"); err != nil {
		t.Fatalf("write: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 3 || !back.Results[0].Unmeasured || !back.Results[1].Unmeasured || back.Results[2].Unmeasured || back.Results[2].Value != 3 {
		t.Errorf("results read back as %+v: want the first two not measured, the third 3", back.Results)
	}
	if !back.Results[0].Missed() {
		t.Error("a goal whose figure was not measured counts as met")
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| delay p99 | not measured | < 2 s | missed: not measured |") {
		t.Errorf("report.md does not show the p99 as not measured:\n%s", md)
	}
}
