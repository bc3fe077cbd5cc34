// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// TestSlowPrometheusDoesNotDelayAdditions: while a check of a draining cluster waits
// on a Prometheus that does not answer, a cluster added to the real Placement is
// still in the proxy at once.
// Rules: 1, 4.
func TestSlowPrometheusDoesNotDelayAdditions(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "slow-add")
	f := m.f
	p := m.policy()
	front := newPromFront(t, false, holdFor(promcheck.DefaultQueryTimeout+5*time.Second))
	m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL})
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	m.moveToC2(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 30*time.Second)

	// A check of the draining cluster is waiting on Prometheus.
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return front.requests.Load() > 0, nil
	})
	if err != nil {
		t.Fatal("no check reached the slow Prometheus")
	}

	c3 := m.ns + "-c3"
	f.managedCluster(t, c3, map[string]string{m.siteLabel: m.site2})
	f.reportAgent(t, c3, gatewayNamespace, gatewayName, true, map[string]string{"cluster": c3})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c2, c3}, 30*time.Second)
	added := time.Now()
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2, c3}, 60*time.Second)
	// Far less than one query timeout: the addition did not wait for the check.
	if d := time.Since(added); d > promcheck.DefaultQueryTimeout/2 {
		t.Errorf("cluster %s reached the proxy %s after the real Placement: a check waiting on Prometheus delayed an addition", c3, d.Round(time.Millisecond))
	}
}
