// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestShareNeedsVolume: with trafficShare.minRequestsPerSecond, a share over too
// little traffic decides nothing. cluster1 carries 1% of 10 requests/s, under the
// policy's minimum of 50: its checks have no data, the PrometheusReachable condition
// says the traffic is too low, and noDataPolicy (Hold) keeps it long past
// minDrainDuration. Once the Gateway serves 100 requests/s, the same 1% passes and
// cluster1 leaves.
func TestShareNeedsVolume(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "volume")
	f := m.f
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.MinRequestsPerSecond = 50 })

	m.traffic.SetByValue(map[string]float64{m.c1: 0.1, m.c2: 9.9})
	m.moveToC2(t)
	// Held: still draining, its last check NoData for the low traffic, well past
	// minDrainDuration and the checks that would have removed it at 1%.
	got := m.waitHeld(t, p, []string{m.c2}, func(p *trafficv1alpha1.TrafficMigrationPolicy, r *trafficv1alpha1.ClusterStatus) bool {
		c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
		return r.LastResult == trafficv1alpha1.EvaluationNoData && c != nil && c.Reason == trafficv1alpha1.ReasonTrafficTooLow
	})
	c := condition(got, trafficv1alpha1.ConditionPrometheusReachable)
	if c.Status != metav1.ConditionFalse {
		t.Errorf("PrometheusReachable should be False while the traffic is too low:\n%s", fixture.PolicyStatus(got))
	}
	if r := fixture.PolicyRow(got, m.c1); r.ConsecutiveSuccesses != 0 {
		t.Errorf("checks over too little traffic counted as successes:\n%s", fixture.PolicyStatus(got))
	}
	t.Logf("cluster1 held %s at 1%% of 10 requests/s: %s", time.Since(fixture.PolicyRow(got, m.c1).DrainStartTime.Time).Round(time.Second), c.Message)

	// Enough traffic: the same share passes.
	m.traffic.SetByValue(map[string]float64{m.c1: 1, m.c2: 99})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 90*time.Second)
}
