// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"math"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// drainWith drains c2 (interval 30s, 3 passes in a row, a minimum drain of 2m that
// started an hour ago unless edit says otherwise) through a check per value, feeding
// each decision back as the next input, with expectation c. It returns the estimate
// after each check and when c2 was removed (zero if it was not).
func drainWith(t *testing.T, c v1alpha1.Comparison, values []string, edit func(*builder) *builder) (estimates []*metav1.Time, removed time.Time) {
	t.Helper()
	b := input().real("c1").proxy("c1", "c2").ready("c1").
		policy(func(p *Policy) { p.Expectation = &c }).
		rows(draining("c2").started(ago(time.Hour)))
	if edit != nil {
		b = edit(b)
	}
	in := b.build()
	for i, v := range values {
		in.Now = now.Add(time.Duration(i) * in.Policy.Interval)
		result := v1alpha1.EvaluationNoData
		if value, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(value) {
			result = v1alpha1.EvaluationFail
			if c.Met(value) {
				result = v1alpha1.EvaluationPass
			}
		}
		in.Evaluations = map[string]Evaluation{"c2": {Result: result, Value: v, Query: queryOf("c2")}}
		out := Decide(in)
		row := findRow(t, out.Clusters, "c2")
		if row.Phase == v1alpha1.ClusterRemoved {
			if row.EstimatedRemovalTime != nil {
				t.Errorf("a Removed row carries an estimate: %v", row.EstimatedRemovalTime)
			}
			return estimates, row.RemovalTime.Time
		}
		estimates = append(estimates, row.EstimatedRemovalTime)
		// Between two checks, a sync changes nothing of it.
		in.Now, in.Proxy, in.Previous, in.Evaluations = in.Now.Add(in.Policy.Interval/2), out.Proxy, out.Clusters, nil
		again := findRow(t, Decide(in).Clusters, "c2")
		checkEqual(t, "the estimate between two checks", again.EstimatedRemovalTime, row.EstimatedRemovalTime)
	}
	return estimates, time.Time{}
}

// TestEstimateFallingShare: a share that falls 10 points a check (50, 40, 30, ...)
// meets "<= 5" at the check of 0; with 3 passes in a row, the cluster goes two checks
// later. The estimate is unknown for the first two checks, then exact.
func TestEstimateFallingShare(t *testing.T) {
	lessThan5 := v1alpha1.Comparison{Operator: "<=", Threshold: 5}
	estimates, removed := drainWith(t, lessThan5, []string{"50", "40", "30", "20", "10", "0", "0", "0", "0"}, nil)
	if removed.IsZero() {
		t.Fatal("c2 was never removed")
	}
	if estimates[0] != nil || estimates[1] != nil {
		t.Errorf("estimates from fewer than 3 values: %v, %v", estimates[0], estimates[1])
	}
	for i, e := range estimates[2:] {
		if e == nil || !e.Time.Equal(removed) {
			t.Errorf("after check %d: estimate %v, removed at %s", i+3, e, removed)
		}
	}
}

// TestEstimateUnknown: no estimate where the trend says nothing.
func TestEstimateUnknown(t *testing.T) {
	lessThan5 := v1alpha1.Comparison{Operator: "<=", Threshold: 5}
	for name, tc := range map[string]struct {
		c      v1alpha1.Comparison
		values []string
		edit   func(*builder) *builder
	}{
		"a flat share":           {c: lessThan5, values: []string{"30", "30", "30", "30"}},
		"a rising share":         {c: lessThan5, values: []string{"10", "20", "30", "40"}},
		"no data":                {c: lessThan5, values: []string{"NaN", "", "NaN", "NaN"}},
		"an equality":            {c: v1alpha1.Comparison{Operator: "==", Threshold: 0}, values: []string{"3", "2", "1"}},
		"a crossing far off":     {c: lessThan5, values: []string{"1000", "999", "998", "997"}},
		"a rise toward a >= 100": {c: v1alpha1.Comparison{Operator: ">=", Threshold: 100}, values: []string{"90", "80", "70"}},
		"DNS still publishing it": {c: lessThan5, values: []string{"50", "40", "30"},
			edit: func(b *builder) *builder { return b.dns(time.Minute) }},
	} {
		t.Run(name, func(t *testing.T) {
			estimates, removed := drainWith(t, tc.c, tc.values, tc.edit)
			if !removed.IsZero() {
				t.Fatalf("c2 removed at %s", removed)
			}
			for i, e := range estimates {
				if e != nil {
					t.Errorf("after check %d: an estimate of %s", i+1, e)
				}
			}
		})
	}
}

// TestEstimateFloors: the estimate is never before the minimum drain ends; a rising
// value toward ">= 100" is estimated as a falling one is; one that already passes
// counts the passes still needed.
func TestEstimateFloors(t *testing.T) {
	lessThan5 := v1alpha1.Comparison{Operator: "<=", Threshold: 5}
	// The drain started just now and lasts at least an hour: the share falls long before.
	estimates, _ := drainWith(t, lessThan5, []string{"50", "40", "30"}, func(b *builder) *builder {
		return input().real("c1").proxy("c1", "c2").ready("c1").
			policy(func(p *Policy) { p.Expectation = &lessThan5; p.MinDrainDuration = time.Hour }).
			rows(draining("c2").started(ago(0)))
	})
	if e := estimates[2]; e == nil || !e.Time.Equal(now.Add(time.Hour)) {
		t.Errorf("estimate %v, want the end of the minimum drain %s", e, now.Add(time.Hour))
	}

	atLeast100 := v1alpha1.Comparison{Operator: ">=", Threshold: 100}
	estimates, removed := drainWith(t, atLeast100, []string{"70", "80", "90", "100", "110", "120"}, nil)
	if removed.IsZero() || estimates[2] == nil || !estimates[2].Time.Equal(removed) || !estimates[3].Time.Equal(removed) {
		t.Errorf("rising to >= 100: estimates %v, removed at %s", estimates, removed)
	}
}
