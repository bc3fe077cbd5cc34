// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// TestMetricsObserve: the gauges the alerts and the dashboard read follow the status
// written: one series per condition, clusters by phase, the drain start, last value
// and threshold of draining and held clusters only (no value series for NaN), and
// minDrainDuration. A series the next status lacks goes; the policy's deletion takes
// all of them.
func TestMetricsObserve(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	expected := metav1.NewTime(time.Unix(1_700_000_600, 0))
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "move"}}
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 90 * time.Second}
	p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{Metric: "requests_total", MaxPercent: 5}
	status := &trafficv1alpha1.TrafficMigrationPolicyStatus{
		DrainingClusters: 2,
		Conditions: []metav1.Condition{
			{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonApplyFailed},
			{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonUnreachable},
		},
		Clusters: []trafficv1alpha1.ClusterStatus{
			{Name: "a", Phase: trafficv1alpha1.ClusterActive},
			{Name: "d", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: &start, LastValue: "12.5", EstimatedRemovalTime: &expected},
			{Name: "h", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: &start, LastValue: "NaN"},
			{Name: "r", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: &start, LastValue: "1"},
		},
	}
	m.observe(p, status)
	want := `
# HELP traffic_migration_check_threshold The threshold a draining or held cluster's checks compare their value with (maxPercent, or expectedMetricsResult's number); only while it drains.
# TYPE traffic_migration_check_threshold gauge
traffic_migration_check_threshold{cluster="d",namespace="gw",policy="move"} 5
traffic_migration_check_threshold{cluster="h",namespace="gw",policy="move"} 5
# HELP traffic_migration_check_value The value the last check of a draining or held cluster read (for trafficShare, its share in percent); only while it drains.
# TYPE traffic_migration_check_value gauge
traffic_migration_check_value{cluster="d",namespace="gw",policy="move"} 12.5
# HELP traffic_migration_clusters Clusters in a policy's status, by phase (Active, Draining, Held, Removed).
# TYPE traffic_migration_clusters gauge
traffic_migration_clusters{namespace="gw",phase="Active",policy="move"} 1
traffic_migration_clusters{namespace="gw",phase="Draining",policy="move"} 1
traffic_migration_clusters{namespace="gw",phase="Held",policy="move"} 1
traffic_migration_clusters{namespace="gw",phase="Removed",policy="move"} 1
# HELP traffic_migration_drain_start_timestamp_seconds When a draining or held cluster started to drain, in Unix seconds.
# TYPE traffic_migration_drain_start_timestamp_seconds gauge
traffic_migration_drain_start_timestamp_seconds{cluster="d",namespace="gw",policy="move"} 1.7e+09
traffic_migration_drain_start_timestamp_seconds{cluster="h",namespace="gw",policy="move"} 1.7e+09
# HELP traffic_migration_estimated_removal_timestamp_seconds When a draining or held cluster's checks are expected to let it go, in Unix seconds (its status row's estimatedRemovalTime); no series while that is unknown.
# TYPE traffic_migration_estimated_removal_timestamp_seconds gauge
traffic_migration_estimated_removal_timestamp_seconds{cluster="d",namespace="gw",policy="move"} 1.7000006e+09
# HELP traffic_migration_min_drain_duration_seconds A policy's minDrainDuration, in seconds.
# TYPE traffic_migration_min_drain_duration_seconds gauge
traffic_migration_min_drain_duration_seconds{namespace="gw",policy="move"} 90
# HELP traffic_migration_policy_condition 1 for each condition of a policy's status, with its type, status and reason.
# TYPE traffic_migration_policy_condition gauge
traffic_migration_policy_condition{namespace="gw",policy="move",reason="ApplyFailed",status="False",type="Ready"} 1
traffic_migration_policy_condition{namespace="gw",policy="move",reason="Unreachable",status="False",type="PrometheusReachable"} 1
`
	names := []string{"traffic_migration_check_threshold", "traffic_migration_check_value", "traffic_migration_clusters",
		"traffic_migration_drain_start_timestamp_seconds", "traffic_migration_estimated_removal_timestamp_seconds",
		"traffic_migration_min_drain_duration_seconds", "traffic_migration_policy_condition"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// The next status: Ready again, d removed, h still held.
	status.Conditions[0] = metav1.Condition{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled}
	status.Clusters[1].Phase = trafficv1alpha1.ClusterRemoved
	m.observe(p, status)
	if got := testutil.ToFloat64(m.conditions.WithLabelValues("gw", "move", "Ready", "True", "Reconciled")); got != 1 {
		t.Errorf("Ready True: %v", got)
	}
	if n := testutil.CollectAndCount(m.conditions); n != 2 {
		t.Errorf("want the old Ready series gone, %d condition series left", n)
	}
	for vec, want := range map[string]int{"drain start": testutil.CollectAndCount(m.drainStart), "threshold": testutil.CollectAndCount(m.checkThreshold)} {
		if want != 1 {
			t.Errorf("want only the held cluster's %s, got %d series", vec, want)
		}
	}
	if n := testutil.CollectAndCount(m.checkValue) + testutil.CollectAndCount(m.estimate); n != 0 {
		t.Errorf("want no value or estimate series once the draining cluster left, got %d", n)
	}

	m.forget("gw", "move")
	for _, name := range names {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series left after the policy's deletion (%v)", name, n, err)
		}
	}
}

// TestMetricsRemoved: a removal counts by policy and reason, and its drain's duration,
// from the Removed row written with it, goes to the histogram by outcome.
func TestMetricsRemoved(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "move"}}
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	removed := metav1.NewTime(start.Add(150 * time.Second))
	status := &trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: []trafficv1alpha1.ClusterStatus{
		{Name: "c1", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: &start, RemovalTime: &removed},
	}}
	m.removed(p, decision.Removal{Cluster: "c1", Reason: decision.RemovalGatePassed}, status)
	if got := testutil.ToFloat64(m.removals.WithLabelValues("gw", "move", "GatePassed")); got != 1 {
		t.Errorf("removals{gw,move,GatePassed} = %v, want 1", got)
	}
	want := `
# HELP traffic_migration_drain_duration_seconds How long clusters drained before they left a proxy Placement, by outcome (GatePassed, MaxDrainDurationRemove, HubMaxDrainDurationRemove, ForceRemoved, ManagedClusterGone).
# TYPE traffic_migration_drain_duration_seconds histogram
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="30"} 0
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="60"} 0
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="120"} 0
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="240"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="480"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="960"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="1920"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="3840"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="7680"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="15360"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="30720"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="61440"} 1
traffic_migration_drain_duration_seconds_bucket{outcome="GatePassed",le="+Inf"} 1
traffic_migration_drain_duration_seconds_sum{outcome="GatePassed"} 150
traffic_migration_drain_duration_seconds_count{outcome="GatePassed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "traffic_migration_drain_duration_seconds"); err != nil {
		t.Error(err)
	}
	// A removal whose row has no drain start (never seen draining) is counted, not timed.
	m.removed(p, decision.Removal{Cluster: "other", Reason: decision.RemovalManagedClusterGone}, status)
	if n, err := testutil.GatherAndCount(reg, "traffic_migration_drain_duration_seconds"); err != nil || n != 1 {
		t.Errorf("want one histogram series, got %d (%v)", n, err)
	}
}
