// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestSecondSyncWritesNothing: once a policy's proxy and status are written, a sync
// with unchanged inputs writes nothing: no API request that changes anything, and no
// Prometheus query while nothing drains. Two harmless edits wake the policy: an
// annotation on the real Placement and a label on cluster1's ManagedClusterAddOn.
// The test does not call t.Parallel: it counts every write the shared manager makes,
// so it runs alone (Go runs a package's sequential tests before its parallel ones).
// Rules: none (steady state: a second sync with the same inputs writes nothing).
func TestSecondSyncWritesNothing(t *testing.T) {
	m := newMigration(t, "steady")
	f := m.f
	ctx := t.Context()
	evaluations := manager.metricValue(t, "traffic_migration_evaluations_total", nil)
	p := m.policy()
	key := m.ns + "/" + p.Name
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && p.Status.ActiveClusters == 1 && p.Status.DrainingClusters == 0
	})
	syncs, writes := waitManagerIdle(t)

	nudge := []byte(`{"metadata":{"labels":{"test.traffic.open-cluster-management.io/nudge":"1"},"annotations":{"test.traffic.open-cluster-management.io/nudge":"1"}}}`)
	for _, trigger := range []struct {
		name string
		do   func() error
	}{
		{"an unrelated annotation on the real Placement", func() error {
			_, err := f.Cluster.ClusterV1beta1().Placements(m.ns).Patch(ctx, m.placement, types.MergePatchType, nudge, metav1.PatchOptions{})
			return err
		}},
		{"an unrelated label on cluster1's ManagedClusterAddOn, its conditions unchanged", func() error {
			_, err := f.Addon.AddonV1alpha1().ManagedClusterAddOns(m.c1).Patch(ctx, trafficv1alpha1.AddonName, types.MergePatchType, nudge, metav1.PatchOptions{})
			return err
		}},
	} {
		before := f.getPolicy(t, m.ns, p.Name)
		writesBefore := manager.writesByResource(t)
		logBefore := manager.logSize(t)
		if err := trigger.do(); err != nil {
			t.Fatalf("%s: %v", trigger.name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
			return manager.policySyncs(t) > syncs, nil
		})
		if err != nil {
			t.Fatalf("%s did not make the manager sync policy %s", trigger.name, key)
		}
		syncs2, writes2 := waitManagerIdle(t)
		if writes2 != writes {
			t.Errorf("after %s the manager synced %d more times and made %v writes:\n%s\nwhat its log says of them:\n%s",
				trigger.name, syncs2-syncs, writes2-writes, strings.Join(writesSince(writesBefore, manager.writesByResource(t)), "\n"),
				strings.Join(manager.logLinesSince(t, logBefore, "Synced policy", `verb="POST"`, `verb="PATCH"`, `verb="PUT"`, `verb="DELETE"`, "rror"), "\n"))
		}
		if after := f.getPolicy(t, m.ns, p.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("after %s the policy changed (resourceVersion %s to %s):\n%s", trigger.name, before.ResourceVersion, after.ResourceVersion, fixture.PolicyStatus(after))
		}
		t.Logf("%s: %d more syncs, %v writes", trigger.name, syncs2-syncs, writes2-writes)
		syncs, writes = syncs2, writes2
	}
	if got := manager.metricValue(t, "traffic_migration_evaluations_total", nil); got != evaluations {
		t.Errorf("the manager queried Prometheus %v times while nothing drained", got-evaluations)
	}
}

// waitManagerIdle waits until the manager has been idle for a while, neither syncing a
// policy nor writing, and returns the count of its syncs and writes then. Idleness is a
// property over time, so this polls, bounded, until nothing changed for quietFor.
func waitManagerIdle(t *testing.T) (uint64, float64) {
	t.Helper()
	const quietFor = 2 * time.Second
	var syncs uint64
	var writes float64
	changed := time.Time{}
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		s, w := manager.policySyncs(t), manager.metricValue(t, "traffic_migration_api_writes_total", nil)
		if changed.IsZero() || s != syncs || w != writes {
			syncs, writes, changed = s, w, time.Now()
			return false, nil
		}
		return time.Since(changed) >= quietFor, nil
	})
	if err != nil {
		t.Fatalf("the manager did not go idle: %d syncs, %v writes, last change at %s", syncs, writes, changed.Format(time.StampMilli))
	}
	return syncs, writes
}

// policySyncs counts the syncs the policy controller has finished, from its work
// queue's metrics: one per key taken from the queue and processed.
func (m *managerProcess) policySyncs(t *testing.T) uint64 {
	t.Helper()
	families, err := m.MetricFamilies()
	if err != nil {
		t.Fatalf("read the manager's metrics: %v", err)
	}
	var n uint64
	for _, metric := range families["workqueue_work_duration_seconds"].GetMetric() {
		for _, l := range metric.GetLabel() {
			if l.GetName() == "name" && l.GetValue() == policy.ControllerName {
				n += metric.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

// writesByResource are the manager's API writes so far, by "METHOD resource", from
// traffic_migration_api_writes_total.
func (m *managerProcess) writesByResource(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := m.MetricFamilies()
	if err != nil {
		t.Fatalf("read the manager's metrics: %v", err)
	}
	out := map[string]float64{}
	for _, metric := range families["traffic_migration_api_writes_total"].GetMetric() {
		var method, resource string
		for _, l := range metric.GetLabel() {
			switch l.GetName() {
			case "method":
				method = l.GetValue()
			case "resource":
				resource = l.GetValue()
			}
		}
		out[method+" "+resource] += metric.GetCounter().GetValue()
	}
	return out
}

// writesSince lists the writes made since before, as "METHOD resource: n".
func writesSince(before, after map[string]float64) []string {
	var out []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out = append(out, fmt.Sprintf("%s: %v", k, d))
		}
	}
	slices.Sort(out)
	return out
}
