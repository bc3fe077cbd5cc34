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

// checkOf is the check of cluster that read v, judged by expectation c: NoData when v
// is not a number.
func checkOf(cluster string, c v1alpha1.Comparison, v string) Check {
	result := v1alpha1.EvaluationNoData
	if value, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(value) {
		result = v1alpha1.EvaluationFail
		if c.Met(value) {
			result = v1alpha1.EvaluationPass
		}
	}
	return Check{Result: result, Value: v, Query: queryOf(cluster)}
}

// drainWith drains c2 (interval 30s, 3 passes in a row, a minimum drain of 2m that
// started an hour ago unless edit says otherwise) through a check per value, feeding
// each decision back as the next input, with expectation c. It returns the estimate
// after each check and when c2 was removed (zero if it was not).
func drainWith(t *testing.T, c v1alpha1.Comparison, values []string, edit func(*builder) *builder) (estimates []*metav1.Time, removed time.Time) {
	t.Helper()
	b := c2Leaves().
		policy(func(p *Policy) { p.Expectation = &c }).
		rows(draining("c2").started(ago(time.Hour)))
	if edit != nil {
		b = edit(b)
	}
	in := b.build()
	for i, v := range values {
		in.Now = now.Add(time.Duration(i) * in.Policy.Interval)
		in.Checks = map[string]Check{"c2": checkOf("c2", c, v)}
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
		in.Now, in.Proxy, in.Previous, in.Checks = in.Now.Add(in.Policy.Interval/2), out.Proxy, out.Clusters, nil
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
		return c2Leaves().
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

// TestEstimateConvexDrains: DNS drains fall fast, then slowly (the clients that
// cache longer). On such drains the estimate at 25, 50 and 75% of the drain is
// nearer the removal than a straight line through the whole history would say, and
// within two checks of it from half-way on.
func TestEstimateConvexDrains(t *testing.T) {
	lessThan1 := v1alpha1.Comparison{Operator: "<=", Threshold: 1}
	for name, share := range map[string]func(k float64) float64{
		"a decay":             func(k float64) float64 { return 80 * math.Pow(0.7, k) },
		"a drop, then a tail": func(k float64) float64 { return 56*math.Pow(0.4, k) + 24*math.Pow(0.8, k) },
		"a slow tail":         func(k float64) float64 { return 72*math.Pow(0.3, k) + 8*math.Pow(0.85, k) },
	} {
		t.Run(name, func(t *testing.T) {
			var values []string
			for k := range 60 {
				values = append(values, strconv.FormatFloat(share(float64(k)), 'f', 4, 64))
			}
			estimates, removed := drainWith(t, lessThan1, values, nil)
			if removed.IsZero() {
				t.Fatal("c2 was never removed")
			}
			interval := 30 * time.Second // drainWith's
			checks := len(estimates)
			for _, at := range []float64{0.25, 0.5, 0.75} {
				i := max(int(at*float64(checks)), minEstimatePoints-1)
				e := estimates[i]
				if e == nil {
					t.Errorf("at %.0f%% (check %d of %d): no estimate", 100*at, i+1, checks)
					continue
				}
				got := e.Time.Sub(removed)
				line := straightLineError(values[:i+1], 1, interval, now, removed)
				t.Logf("at %.0f%% (check %d of %d): estimate off by %v, a straight line through all checks by %v", 100*at, i+1, checks, got, line)
				if got.Abs() > line.Abs() {
					t.Errorf("at %.0f%%: off by %v, more than a straight line's %v", 100*at, got, line)
				}
				if at >= 0.5 && got.Abs() > 2*interval {
					t.Errorf("at %.0f%%: off by %v, more than two checks", 100*at, got)
				}
			}
		})
	}
}

// straightLineError is how far from removed a straight line through every value
// (one a check from start) puts the crossing of threshold, plus the two further
// passes drainWith's policy needs.
func straightLineError(values []string, threshold float64, interval time.Duration, start, removed time.Time) time.Duration {
	var ts, vs []float64
	for i, s := range values {
		v, _ := strconv.ParseFloat(s, 64)
		ts, vs = append(ts, float64(i)*interval.Seconds()), append(vs, v)
	}
	slope, intercept := leastSquares(ts, vs)
	if slope >= 0 {
		return time.Duration(math.MaxInt64)
	}
	crossing := start.Add(time.Duration((threshold - intercept) / slope * float64(time.Second)))
	return crossing.Add(2 * interval).Sub(removed)
}
