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
)

// TestMetricsObserve: the gauges the alerts read follow the status written: one
// series per condition, clusters by phase, the drain start of draining and held
// clusters only, and minDrainDuration. A series the next status lacks goes; the
// policy's deletion takes all of them.
func TestMetricsObserve(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "move"}}
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 90 * time.Second}
	status := &trafficv1alpha1.TrafficMigrationPolicyStatus{
		DrainingClusters: 2,
		Conditions: []metav1.Condition{
			{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonApplyFailed},
			{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonUnreachable},
		},
		Clusters: []trafficv1alpha1.ClusterStatus{
			{Name: "a", Phase: trafficv1alpha1.ClusterActive},
			{Name: "d", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: &start},
			{Name: "h", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: &start},
			{Name: "r", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: &start},
		},
	}
	m.observe(p, status)
	want := `
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
# HELP traffic_migration_min_drain_duration_seconds A policy's minDrainDuration, in seconds.
# TYPE traffic_migration_min_drain_duration_seconds gauge
traffic_migration_min_drain_duration_seconds{namespace="gw",policy="move"} 90
# HELP traffic_migration_policy_condition 1 for each condition of a policy's status, with its type, status and reason.
# TYPE traffic_migration_policy_condition gauge
traffic_migration_policy_condition{namespace="gw",policy="move",reason="ApplyFailed",status="False",type="Ready"} 1
traffic_migration_policy_condition{namespace="gw",policy="move",reason="Unreachable",status="False",type="PrometheusReachable"} 1
`
	names := []string{"traffic_migration_clusters", "traffic_migration_drain_start_timestamp_seconds", "traffic_migration_min_drain_duration_seconds", "traffic_migration_policy_condition"}
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
	if n := testutil.CollectAndCount(m.drainStart); n != 1 {
		t.Errorf("want only the held cluster's drain start, got %d series", n)
	}

	m.forget("gw", "move")
	for _, name := range names {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series left after the policy's deletion (%v)", name, n, err)
		}
	}
}
