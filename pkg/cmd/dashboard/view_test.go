// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
)

// now is the instant the tests' statuses are written at.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(d))
	return &t
}

func secs(d time.Duration) float64 { return unix(now.Add(d)) }

// drainingPolicy is a trafficShare policy (<= 5) whose cluster c1 has drained for
// two minutes with four checks in its history (Fail, Error, Fail, Pass) and whose
// cluster c2 is active.
func drainingPolicy(mutate ...func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	minDrain := metav1.Duration{Duration: 3 * time.Minute}
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "move"},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: "real"},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: "gateway"},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: "prometheus"},
			TrafficShare:     &trafficv1alpha1.TrafficShare{Metric: "requests_total", MaxPercent: 5},
			MinDrainDuration: &minDrain,
		},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{
			Conditions: []metav1.Condition{
				{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled},
				{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonQuerySucceeded},
			},
			ProxyPlacement:   &trafficv1alpha1.ProxyPlacementStatus{Name: "real-proxy", NumberOfClusters: 2},
			ActiveClusters:   1,
			DrainingClusters: 1,
			Clusters: []trafficv1alpha1.ClusterStatus{
				{
					Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: at(-2 * time.Minute),
					LastEvaluationTime: at(-30 * time.Second), LastResult: trafficv1alpha1.EvaluationPass, LastValue: "3.5",
					ResolvedQuery: "100 * share",
					History: []trafficv1alpha1.CheckRecord{
						{Time: *at(-120 * time.Second), Result: trafficv1alpha1.EvaluationFail, Value: "40"},
						{Time: *at(-90 * time.Second), Result: trafficv1alpha1.EvaluationError},
						{Time: *at(-60 * time.Second), Result: trafficv1alpha1.EvaluationFail, Value: "12.25"},
						{Time: *at(-30 * time.Second), Result: trafficv1alpha1.EvaluationPass, Value: "3.5"},
					},
				},
				{Name: "c2", Phase: trafficv1alpha1.ClusterActive},
			},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// TestChartFromHistory: a user who may not read the Secret gets the chart from the
// status history, says so, and sees every check at its time, passed and failed
// points at their values, the check without value on the threshold line, and the
// drain's moments.
func TestChartFromHistory(t *testing.T) {
	page := buildPolicyPage(drainingPolicy(), map[string]chartInput{"c1": {note: "you may not read the policy's Prometheus Secret gw/prometheus"}}, now)
	if !page.HasThreshold || page.Threshold != 5 || page.Check.Expectation != "<= 5" {
		t.Errorf("threshold: got %v %v (%v)", page.Check.Expectation, page.Threshold, page.HasThreshold)
	}
	if page.Check.Summary != "traffic share <= 5% (requests_total by label cluster over 5m)" || page.Check.MinDrainDuration != "3m" || page.Check.Interval != "30s" {
		t.Errorf("check facts: %q, min drain %s, interval %s", page.Check.Summary, page.Check.MinDrainDuration, page.Check.Interval)
	}
	if len(page.Charts) != 1 {
		t.Fatalf("want a chart for the draining cluster only, got %d", len(page.Charts))
	}
	c := page.Charts[0]
	if c.Source != SourceHistory || !strings.Contains(c.SourceNote, "check history") || !strings.Contains(c.SourceNote, "may not read") {
		t.Errorf("the chart must say it comes from the history and why: %s %q", c.Source, c.SourceNote)
	}
	f := func(v float64) *float64 { return &v }
	wantTimes := []float64{secs(-120 * time.Second), secs(-90 * time.Second), secs(-60 * time.Second), secs(-30 * time.Second)}
	if !reflect.DeepEqual(c.Times, wantTimes) {
		t.Errorf("times: got %v, want %v", c.Times, wantTimes)
	}
	checks := map[string][2][]*float64{
		"values":  {c.Values, {f(40), nil, f(12.25), f(3.5)}},
		"passed":  {c.Passed, {nil, nil, nil, f(3.5)}},
		"failed":  {c.Failed, {f(40), nil, f(12.25), nil}},
		"noValue": {c.NoValue, {nil, f(5), nil, nil}},
	}
	for name, pair := range checks {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: got %v, want %v", name, deref(pair[0]), deref(pair[1]))
		}
	}
	if want := []string{"40", "error", "12.25", "3.5"}; !reflect.DeepEqual(c.Texts, want) {
		t.Errorf("texts: got %q, want %q", c.Texts, want)
	}
	if c.DrainStart != secs(-2*time.Minute) || c.MinDrainEnd != secs(time.Minute) || c.Removal != nil || c.MaxDrainEnd != nil {
		t.Errorf("moments: start %v, min end %v, removal %v, max end %v", c.DrainStart, c.MinDrainEnd, c.Removal, c.MaxDrainEnd)
	}
	if len(c.Checks) != 4 || c.Checks[1].Result != "Error" {
		t.Errorf("checks: %+v", c.Checks)
	}
}

// TestChartOfRemovedCluster: a removed cluster keeps its chart, with its removal
// marked, as long as its row stays; a Held cluster's chart marks the deadline.
func TestChartOfRemovedCluster(t *testing.T) {
	p := drainingPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		maxDrain := metav1.Duration{Duration: time.Hour}
		p.Spec.MaxDrainDuration = &maxDrain
		p.Status.Clusters[0].Phase = trafficv1alpha1.ClusterRemoved
		p.Status.Clusters[0].RemovalTime = at(-10 * time.Second)
	})
	c := buildPolicyPage(p, nil, now).Charts[0]
	if c.Removal == nil || *c.Removal != secs(-10*time.Second) || c.Phase != "Removed" {
		t.Errorf("removal: %v, phase %s", c.Removal, c.Phase)
	}
	if c.MaxDrainEnd == nil || *c.MaxDrainEnd != secs(58*time.Minute) {
		t.Errorf("max drain end: %v", c.MaxDrainEnd)
	}
	if c.Source != SourceHistory || !strings.HasSuffix(c.SourceNote, ".") {
		t.Errorf("no input means the history, with no reason: %q", c.SourceNote)
	}
}

// TestChartFromPrometheus: with values from Prometheus, the line is Prometheus's and
// the checks are points on their own times, merged in order.
func TestChartFromPrometheus(t *testing.T) {
	matrix := model.Matrix{{
		Metric: model.Metric{"cluster": "c1"},
		Values: []model.SamplePair{
			{Timestamp: model.TimeFromUnixNano(now.Add(-100 * time.Second).UnixNano()), Value: 30},
			{Timestamp: model.TimeFromUnixNano(now.Add(-50 * time.Second).UnixNano()), Value: 8},
			{Timestamp: model.TimeFromUnixNano(now.Add(-40 * time.Second).UnixNano()), Value: model.SampleValue(nanValue())},
			{Timestamp: model.TimeFromUnixNano(now.Add(-30 * time.Second).UnixNano()), Value: 3},
		},
	}}
	s, note := seriesFromMatrix(matrix)
	if note != "" || len(s.times) != 3 {
		t.Fatalf("want 3 drawable values and no note, got %v %q", s, note)
	}
	c := buildPolicyPage(drainingPolicy(), map[string]chartInput{"c1": {prometheus: s}}, now).Charts[0]
	if c.Source != SourcePrometheus || !strings.Contains(c.SourceNote, "Prometheus") {
		t.Errorf("source: %s %q", c.Source, c.SourceNote)
	}
	wantTimes := []float64{secs(-120 * time.Second), secs(-100 * time.Second), secs(-90 * time.Second), secs(-60 * time.Second), secs(-50 * time.Second), secs(-30 * time.Second)}
	if !reflect.DeepEqual(c.Times, wantTimes) {
		t.Fatalf("times: got %v, want %v", c.Times, wantTimes)
	}
	f := func(v float64) *float64 { return &v }
	if want := []*float64{nil, f(30), nil, nil, f(8), f(3)}; !reflect.DeepEqual(c.Values, want) {
		t.Errorf("values: got %v, want %v", deref(c.Values), deref(want))
	}
	if want := []*float64{nil, nil, nil, nil, nil, f(3.5)}; !reflect.DeepEqual(c.Passed, want) {
		t.Errorf("passed: got %v, want %v", deref(c.Passed), deref(want))
	}
	if want := []string{"40", "30", "error", "12.25", "8", "3.5"}; !reflect.DeepEqual(c.Texts, want) {
		t.Errorf("texts: got %q, want %q", c.Texts, want)
	}

	two := append(matrix, &model.SampleStream{Metric: model.Metric{"cluster": "c2"}})
	if _, note := seriesFromMatrix(two); !strings.Contains(note, "2 series") {
		t.Errorf("two series should be noted, got %q", note)
	}
	if s, note := seriesFromMatrix(model.Vector{}); s != nil || note == "" {
		t.Errorf("a vector is no range answer: %v %q", s, note)
	}
}

// TestChecksOfWithoutHistory: a manager that keeps no history still shows the last
// check, once.
func TestChecksOfWithoutHistory(t *testing.T) {
	row := drainingPolicy().Status.Clusters[0]
	if got := checksOf(row); len(got) != 4 {
		t.Errorf("the last check is in the history: want it once, got %d checks", len(got))
	}
	row.History = nil
	got := checksOf(row)
	if len(got) != 1 || got[0].Value != "3.5" || got[0].Result != trafficv1alpha1.EvaluationPass {
		t.Errorf("want the last check alone, got %+v", got)
	}
}

func TestChartRange(t *testing.T) {
	row := drainingPolicy().Status.Clusters[0]
	r := chartRange(row, now)
	if !r.Start.Equal(now.Add(-2*time.Minute-30*time.Second)) || !r.End.Equal(now) || r.Step != time.Second {
		t.Errorf("a 2m drain: %v to %v by %v", r.Start, r.End, r.Step)
	}
	row.DrainStartTime = at(-10 * time.Hour)
	row.RemovalTime = at(-time.Hour)
	r = chartRange(row, now)
	if !r.End.Equal(now.Add(-time.Hour+10*time.Second)) || !r.Start.Equal(now.Add(-10*time.Hour-30*time.Minute)) {
		t.Errorf("a removed cluster's chart ends after its removal: %v to %v", r.Start, r.End)
	}
	if points := r.End.Sub(r.Start) / r.Step; points > maxPoints+1 {
		t.Errorf("%d points, want at most %d", points, maxPoints)
	}
}

func deref(vs []*float64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

func nanValue() float64 { return math.NaN() }

// TestStalledDrainOnThePage: a stalled drain is marked on its row and its chart, and
// the page says what a stalled drain is; a drain that is not stalled is not marked.
func TestStalledDrainOnThePage(t *testing.T) {
	page := buildPolicyPage(drainingPolicy(), nil, now)
	if page.Charts[0].Stalled || page.Clusters[0].Stalled || page.StalledClusters != nil {
		t.Errorf("a drain that is not stalled is marked: %+v", page.Charts[0])
	}
	page = buildPolicyPage(drainingPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Clusters[0].Stalled = true
	}), nil, now)
	if !page.Charts[0].Stalled || !page.Clusters[0].Stalled || page.Clusters[0].State != "Draining, stalled" ||
		!reflect.DeepEqual(page.StalledClusters, []string{"c1"}) || page.StalledHint != policyview.StalledHint {
		t.Errorf("a stalled drain: chart %+v, row %+v, page stalled %v", page.Charts[0], page.Clusters[0], page.StalledClusters)
	}
}
