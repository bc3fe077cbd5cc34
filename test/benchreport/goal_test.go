// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"math"
	"testing"
)

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		goal       string
		value      float64
		unit       string
		unmeasured bool
		want       string
		missed     bool
	}{
		{goal: "< 256 MiB", value: 231.5, unit: "MiB", want: "met, 24.500 MiB to spare"},
		{goal: "< 256 MiB", value: 288, unit: "MiB", want: "missed by 32 MiB", missed: true},
		{goal: "< 2 s", value: 2, unit: "s", want: "missed by 0 s", missed: true},
		{goal: "≤ 1.2", value: 1.2, want: "met, 0 to spare"},
		{goal: "<= 1.2", value: 2.08, want: "missed by 0.880", missed: true},
		{goal: "≤ 3 s (floor + 1 s)", value: 1, unit: "s", want: "met, 2 s to spare"},
		{goal: "≥ 1,000", value: 999, want: "missed by 1", missed: true},
		{goal: "≤ 1.2", value: math.NaN(), want: "missed by NaN", missed: true},
		{goal: "< 2 s", unit: "s", unmeasured: true, want: "missed: not measured", missed: true},
		{goal: "0 failed requests in every world", value: 3, want: ""},
		{goal: "", value: 3, want: ""},
	} {
		r := Result{Goal: tc.goal, Value: tc.value, Unit: tc.unit, Unmeasured: tc.unmeasured}
		if got := r.Verdict(); got != tc.want {
			t.Errorf("%q at %v: verdict %q, want %q", tc.goal, tc.value, got, tc.want)
		}
		if got := r.Missed(); got != tc.missed {
			t.Errorf("%q at %v: missed %v, want %v", tc.goal, tc.value, got, tc.missed)
		}
	}
}
