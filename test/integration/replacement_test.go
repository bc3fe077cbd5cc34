// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestReplacementMinReadyClusters: with replacement.minReadyClusters 2, cluster1
// stays although its checks pass while only one of the two clusters that replace it
// has the Gateway ready, says why, and leaves once the second is ready.
func TestReplacementMinReadyClusters(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "replacement")
	f := m.f
	c3 := m.ns + "-c3"
	f.managedCluster(t, c3, map[string]string{m.siteLabel: m.site2})
	f.reportAgent(t, c3, gatewayNamespace, gatewayName, false, map[string]string{"cluster": c3})
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.Replacement = &trafficv1alpha1.Replacement{MinReadyClusters: 2}
	})

	// cluster1's traffic is gone; the real Placement now selects cluster2 and cluster3.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	f.selectClusters(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site2})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c2, c3}, 30*time.Second)
	got := m.waitHeld(t, p, []string{m.c2, c3}, func(p *trafficv1alpha1.TrafficMigrationPolicy, r *trafficv1alpha1.ClusterStatus) bool {
		return r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses
	})
	if r := fixture.PolicyRow(got, m.c1); !strings.Contains(r.Message, "waiting for 2 Active clusters with the Gateway ready (1 now: "+m.c2+")") {
		t.Errorf("cluster1 does not say what it waits for:\n%s", fixture.PolicyStatus(got))
	}
	if r := fixture.PolicyRow(got, c3); r == nil || !strings.Contains(r.Message, "does not count") {
		t.Errorf("cluster3's row does not say it does not count:\n%s", fixture.PolicyStatus(got))
	}

	f.reportAgent(t, c3, gatewayNamespace, gatewayName, true, map[string]string{"cluster": c3})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2, c3}, 30*time.Second)
}

// TestReplacementCheck: with replacement.metricsQuery "the new cluster serves more
// than 1 request/s", cluster1 stays although its own checks pass while cluster2, which
// replaces it, serves too little; cluster2's row says its check did not pass; once
// cluster2 serves, cluster1 leaves.
func TestReplacementCheck(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "replcheck")
	f := m.f
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.Replacement = &trafficv1alpha1.Replacement{
			MinReadyClusters:      1,
			MetricsQuery:          fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster={{ index .Cluster.Labels "cluster" | quote }}}[4s]))`, m.traffic.job),
			ExpectedMetricsResult: "> 1",
		}
	})

	// cluster1's share is 0%, but cluster2 serves half a request per second.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 0.5})
	m.moveToC2(t)
	got := m.waitHeld(t, p, []string{m.c2}, func(p *trafficv1alpha1.TrafficMigrationPolicy, r *trafficv1alpha1.ClusterStatus) bool {
		c2 := fixture.PolicyRow(p, m.c2)
		return r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses && c2 != nil && c2.LastResult == trafficv1alpha1.EvaluationFail
	})
	if r := fixture.PolicyRow(got, m.c1); !strings.Contains(r.Message, "waiting for 1 Active clusters with the Gateway ready and passing replacement.metricsQuery (0 now)") {
		t.Errorf("cluster1 does not say what it waits for:\n%s", fixture.PolicyStatus(got))
	}
	c2 := fixture.PolicyRow(got, m.c2)
	if !strings.Contains(c2.Message, "its replacement check did not pass") || !strings.Contains(c2.ResolvedQuery, m.c2) || c2.NextEvaluationTime == nil {
		t.Errorf("cluster2's row does not say why it does not count:\n%s", fixture.PolicyStatus(got))
	}

	// cluster2 serves: cluster1 leaves, and cluster2's row drops its checks.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 50})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r, c2 := fixture.PolicyRow(p, m.c1), fixture.PolicyRow(p, m.c2)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved && c2 != nil && c2.LastEvaluationTime == nil
	})
}
