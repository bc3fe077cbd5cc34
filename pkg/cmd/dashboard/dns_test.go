// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// With spec.dns, the chart marks when DNS let go of the cluster, and the minimum drain
// ends the longer of minDrainDuration and the TTL after it; nothing ends before.
func TestChartFollowsDNS(t *testing.T) {
	start := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	rules := decision.Policy{MinDrainDuration: time.Minute, DNSTTL: 5 * time.Minute}
	row := trafficv1alpha1.ClusterStatus{Name: "c1", Phase: trafficv1alpha1.ClusterDraining,
		DrainStartTime: &metav1.Time{Time: start}}

	c := buildChart(rules, true, row, chartInput{}, 5)
	if c.DNSWithdrawal != nil || c.MinDrainEnd != 0 {
		t.Errorf("still in DNS: withdrawal %v, minimum drain end %v; want none", c.DNSWithdrawal, c.MinDrainEnd)
	}
	row.DNSWithdrawalTime = &metav1.Time{Time: start.Add(2 * time.Minute)}
	c = buildChart(rules, true, row, chartInput{}, 5)
	if c.DNSWithdrawal == nil || *c.DNSWithdrawal != unix(start.Add(2*time.Minute)) ||
		c.MinDrainEnd != unix(start.Add(7*time.Minute)) {
		t.Errorf("out of DNS: withdrawal %v, minimum drain end %v; want %v and %v", c.DNSWithdrawal, c.MinDrainEnd,
			unix(start.Add(2*time.Minute)), unix(start.Add(7*time.Minute)))
	}
	if c = buildChart(rules, false, row, chartInput{}, 5); c.DNSWithdrawal != nil || c.MinDrainEnd != unix(start.Add(time.Minute)) {
		t.Errorf("without spec.dns: withdrawal %v, minimum drain end %v", c.DNSWithdrawal, c.MinDrainEnd)
	}
}
