// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"time"

	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

func testPolicy() *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 4},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef: trafficv1alpha1.PlacementReference{Name: "gw"},
			TrafficShare: &trafficv1alpha1.TrafficShare{Metric: "m", MaxPercent: 5},
		},
	}
}

func rows(phases map[string]trafficv1alpha1.ClusterPhase) []trafficv1alpha1.ClusterStatus {
	var out []trafficv1alpha1.ClusterStatus
	for _, name := range []string{"a", "b", "c", "d"} {
		if p, ok := phases[name]; ok {
			out = append(out, trafficv1alpha1.ClusterStatus{Name: name, Phase: p})
		}
	}
	return out
}

// want is what a case expects of one condition: status and reason.
type want struct {
	status metav1.ConditionStatus
	reason string
}

func TestBuildStatus(t *testing.T) {
	draining := decision.Output{Clusters: rows(map[string]trafficv1alpha1.ClusterPhase{"a": trafficv1alpha1.ClusterActive, "b": trafficv1alpha1.ClusterDraining})}
	tests := map[string]struct {
		mutate     func(p *trafficv1alpha1.TrafficMigrationPolicy)
		state      state
		out        decision.Output
		applyErr   error
		conditions map[string]want
		active     int32
		draining   int32
	}{
		"reconciled, nothing draining": {
			out: decision.Output{Clusters: rows(map[string]trafficv1alpha1.ClusterPhase{"a": trafficv1alpha1.ClusterActive, "c": trafficv1alpha1.ClusterRemoved})},
			conditions: map[string]want{
				trafficv1alpha1.ConditionReady:               {metav1.ConditionTrue, trafficv1alpha1.ReasonReconciled},
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionUnknown, trafficv1alpha1.ReasonNothingToEvaluate},
				trafficv1alpha1.ConditionDraining:            {metav1.ConditionFalse, trafficv1alpha1.ReasonNoClustersDraining},
				trafficv1alpha1.ConditionHeld:                {metav1.ConditionFalse, trafficv1alpha1.ReasonWithinDeadline},
			},
			active: 1,
		},
		"draining with a failed check": {
			out:   draining,
			state: state{evaluations: map[string]promcheck.Check{"b": {Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonUnauthorized, Message: "401"}}},
			conditions: map[string]want{
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionFalse, trafficv1alpha1.ReasonUnauthorized},
				trafficv1alpha1.ConditionDraining:            {metav1.ConditionTrue, trafficv1alpha1.ReasonClustersDraining},
			},
			active: 1, draining: 1,
		},
		"draining with passing checks": {
			out:   draining,
			state: state{evaluations: map[string]promcheck.Check{"b": {Result: trafficv1alpha1.EvaluationPass, Reason: trafficv1alpha1.ReasonQuerySucceeded}}},
			conditions: map[string]want{
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionTrue, trafficv1alpha1.ReasonQuerySucceeded},
			},
			active: 1, draining: 1,
		},
		"draining with passing checks and a window too short for the samples": {
			out: draining,
			state: state{
				evaluations: map[string]promcheck.Check{"b": {Result: trafficv1alpha1.EvaluationPass, Reason: trafficv1alpha1.ReasonQuerySucceeded}},
				windowNote:  promcheck.WindowTooShort("1m", 30*time.Second),
			},
			conditions: map[string]want{
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionTrue, trafficv1alpha1.ReasonWindowTooShort},
			},
			active: 1, draining: 1,
		},
		"draining with a failed check and a window too short: the failure says more": {
			out: draining,
			state: state{
				evaluations: map[string]promcheck.Check{"b": {Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonTimeout}},
				windowNote:  promcheck.WindowTooShort("1m", 30*time.Second),
			},
			conditions: map[string]want{
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionFalse, trafficv1alpha1.ReasonTimeout},
			},
			active: 1, draining: 1,
		},
		"draining, no check due: the condition stays as it was": {
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Conditions = []metav1.Condition{{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonTimeout}}
			},
			out: draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionPrometheusReachable: {metav1.ConditionFalse, trafficv1alpha1.ReasonTimeout},
			},
			active: 1, draining: 1,
		},
		"suspended": {
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.Suspend = true },
			out:    draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionDraining: {metav1.ConditionTrue, trafficv1alpha1.ReasonSuspended},
			},
			active: 1, draining: 1,
		},
		"held past the deadline": {
			out: decision.Output{Clusters: rows(map[string]trafficv1alpha1.ClusterPhase{"a": trafficv1alpha1.ClusterActive, "d": trafficv1alpha1.ClusterHeld})},
			conditions: map[string]want{
				trafficv1alpha1.ConditionHeld:     {metav1.ConditionTrue, trafficv1alpha1.ReasonMaxDrainDurationExceeded},
				trafficv1alpha1.ConditionDraining: {metav1.ConditionTrue, trafficv1alpha1.ReasonClustersDraining},
			},
			active: 1, draining: 1,
		},
		"proxy name taken: rows kept, nothing counted anew": {
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Clusters = rows(map[string]trafficv1alpha1.ClusterPhase{"a": trafficv1alpha1.ClusterActive})
			},
			state: state{conflict: "taken"},
			out:   draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionReady: {metav1.ConditionFalse, trafficv1alpha1.ReasonProxyPlacementConflict},
			},
			active: 1,
		},
		"proxy write failed: rows kept": {
			applyErr: errors.New("conflict"),
			out:      draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionReady: {metav1.ConditionFalse, trafficv1alpha1.ReasonApplyFailed},
			},
		},
		"real Placement missing": {
			state: state{realProblem: "Placement gw not found"},
			out:   draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionReady: {metav1.ConditionFalse, trafficv1alpha1.ReasonPlacementNotFound},
			},
			active: 1, draining: 1,
		},
		"expectedMetricsResult unreadable": {
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.TrafficShare, p.Spec.MetricsQuery, p.Spec.ExpectedMetricsResult = nil, "q", "about five"
			},
			out: draining,
			conditions: map[string]want{
				trafficv1alpha1.ConditionReady: {metav1.ConditionFalse, trafficv1alpha1.ReasonInvalidQuery},
			},
			active: 1, draining: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := testPolicy()
			if tc.mutate != nil {
				tc.mutate(p)
			}
			st := tc.state
			st.proxyName = "gw-proxy"
			got := buildStatus(p, &st, tc.out, tc.applyErr, "")
			for typ, w := range tc.conditions {
				c := meta.FindStatusCondition(got.Conditions, typ)
				if c == nil || c.Status != w.status || c.Reason != w.reason {
					t.Errorf("%s: got %+v, want %s/%s", typ, c, w.status, w.reason)
				}
				if c != nil && c.ObservedGeneration != 4 && c.Reason != trafficv1alpha1.ReasonTimeout {
					t.Errorf("%s: observedGeneration %d, want 4", typ, c.ObservedGeneration)
				}
			}
			if got.ActiveClusters != tc.active || got.DrainingClusters != tc.draining || got.ProxyPlacement.NumberOfClusters != tc.active+tc.draining {
				t.Errorf("counts: active %d draining %d proxy %d, want %d %d", got.ActiveClusters, got.DrainingClusters, got.ProxyPlacement.NumberOfClusters, tc.active, tc.draining)
			}
			if got.ObservedGeneration != 4 || got.ProxyPlacement.Name != "gw-proxy" {
				t.Errorf("observedGeneration %d, proxy %q", got.ObservedGeneration, got.ProxyPlacement.Name)
			}
			// The same inputs again give the same status: a second sync writes nothing.
			p.Status = got
			again := buildStatus(p, &st, tc.out, tc.applyErr, "")
			if !equalStatus(got, again) {
				t.Errorf("a second build changed the status:\n%+v\n%+v", got, again)
			}
		})
	}
}

func equalStatus(a, b trafficv1alpha1.TrafficMigrationPolicyStatus) bool {
	if len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i] != b.Conditions[i] {
			return false
		}
	}
	return a.ActiveClusters == b.ActiveClusters && a.DrainingClusters == b.DrainingClusters && *a.ProxyPlacement == *b.ProxyPlacement
}

// TestPhaseChanges: one event per phase and sync, naming at most maxNamesInEvent
// clusters; a single cluster keeps its own message; unchanged phases make none.
func TestPhaseChanges(t *testing.T) {
	row := func(name string, phase trafficv1alpha1.ClusterPhase, msg string) trafficv1alpha1.ClusterStatus {
		return trafficv1alpha1.ClusterStatus{Name: name, Phase: phase, Message: msg}
	}
	old := []trafficv1alpha1.ClusterStatus{row("a", trafficv1alpha1.ClusterActive, ""), row("d", trafficv1alpha1.ClusterDraining, "left")}
	updated := []trafficv1alpha1.ClusterStatus{row("a", trafficv1alpha1.ClusterActive, ""), row("d", trafficv1alpha1.ClusterHeld, "past maxDrainDuration")}
	for i := 0; i < 12; i++ {
		updated = append(updated, row(fmt.Sprintf("n%02d", i), trafficv1alpha1.ClusterActive, "in the real Placement"))
	}
	got := phaseChanges(old, updated)
	if len(got) != 2 {
		t.Fatalf("got %d events, want 2 (Active, Held): %+v", len(got), got)
	}
	if got[0].phase != trafficv1alpha1.ClusterActive || len(got[0].rows) != 12 {
		t.Errorf("first event: %s with %d clusters, want Active with 12", got[0].phase, len(got[0].rows))
	}
	if want := "12 clusters are Active: n00, n01, n02, n03, n04, n05, n06, n07, n08, n09 and 2 more: in the real Placement"; got[0].note() != want {
		t.Errorf("note %q, want %q", got[0].note(), want)
	}
	if want := "Cluster d is Held: past maxDrainDuration"; got[1].note() != want {
		t.Errorf("note %q, want %q", got[1].note(), want)
	}
	if got := phaseChanges(updated, updated); len(got) != 0 {
		t.Errorf("nothing changed, yet %d events: %+v", len(got), got)
	}
}
