// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestSecondSyncWritesNothing: once a policy's proxy and status are written, a sync
// with unchanged inputs writes nothing: no API request that changes anything, and no
// Prometheus query while nothing drains. Two harmless edits wake the policy: an
// annotation on the real Placement and a label on cluster1's ManagedClusterAddOn.
// The test does not call t.Parallel: it counts every write the shared manager makes,
// so it runs alone (Go runs a package's sequential tests before its parallel ones).
// Rules: none of section 5 (steady state; STYLE.md: "prove in a test that a second sync
// with the same inputs writes nothing").
func TestSecondSyncWritesNothing(t *testing.T) {
	m := newMigration(t, "steady")
	f := m.f
	ctx := context.Background()
	evaluations := manager.metricValue(t, "traffic_migration_evaluations_total", nil)
	p := m.policy()
	key := m.ns + "/" + p.Name
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && p.Status.ActiveClusters == 1 && p.Status.DrainingClusters == 0
	})
	syncs, writes := waitManagerIdle(t, key)

	nudge := []byte(`{"metadata":{"labels":{"test.traffic.open-cluster-management.io/nudge":"1"},"annotations":{"test.traffic.open-cluster-management.io/nudge":"1"}}}`)
	for _, trigger := range []struct {
		name string
		do   func() error
	}{
		{"an unrelated annotation on the real Placement", func() error {
			_, err := f.cluster.ClusterV1beta1().Placements(m.ns).Patch(ctx, m.placement, types.MergePatchType, nudge, metav1.PatchOptions{})
			return err
		}},
		{"an unrelated label on cluster1's ManagedClusterAddOn, its conditions unchanged", func() error {
			_, err := f.addon.AddonV1alpha1().ManagedClusterAddOns(m.c1).Patch(ctx, trafficv1alpha1.AddonName, types.MergePatchType, nudge, metav1.PatchOptions{})
			return err
		}},
	} {
		before := f.getPolicy(t, m.ns, p.Name)
		logOffset := manager.logLength(t)
		if err := trigger.do(); err != nil {
			t.Fatalf("%s: %v", trigger.name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
			return manager.policySyncs(t, key) > syncs, nil
		})
		if err != nil {
			t.Fatalf("%s did not make the manager sync policy %s", trigger.name, key)
		}
		syncs2, writes2 := waitManagerIdle(t, key)
		if writes2 != writes {
			t.Errorf("after %s the manager synced %s %d more times and made %v writes; its requests:\n%s",
				trigger.name, key, syncs2-syncs, writes2-writes, strings.Join(manager.loggedWrites(t, logOffset), "\n"))
		}
		if after := f.getPolicy(t, m.ns, p.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("after %s the policy changed (resourceVersion %s to %s):\n%s", trigger.name, before.ResourceVersion, after.ResourceVersion, statusString(after))
		}
		t.Logf("%s: %d more syncs, %v writes", trigger.name, syncs2-syncs, writes2-writes)
		syncs, writes = syncs2, writes2
	}
	if got := manager.metricValue(t, "traffic_migration_evaluations_total", nil); got != evaluations {
		t.Errorf("the manager queried Prometheus %v times while nothing drained", got-evaluations)
	}
}

// waitManagerIdle waits until the manager has been idle for a while, neither syncing the
// policy nor writing, and returns the count of its syncs and writes then. Idleness is a
// property over time, so this polls, bounded, until nothing changed for quietFor.
func waitManagerIdle(t *testing.T, key string) (int, float64) {
	t.Helper()
	const quietFor = 2 * time.Second
	var syncs int
	var writes float64
	changed := time.Time{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		s, w := manager.policySyncs(t, key), manager.metricValue(t, "traffic_migration_api_writes_total", nil)
		if changed.IsZero() || s != syncs || w != writes {
			syncs, writes, changed = s, w, time.Now()
			return false, nil
		}
		return time.Since(changed) >= quietFor, nil
	})
	if err != nil {
		t.Fatalf("the manager did not go idle: %d syncs of %s, %v writes, last change at %s", syncs, key, writes, changed.Format(time.StampMilli))
	}
	return syncs, writes
}

// policySyncs counts the syncs of a policy that the manager has logged ("Synced policy"
// at V(4)).
func (m *managerProcess) policySyncs(t *testing.T, key string) int {
	t.Helper()
	l, err := m.log()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(l, "\n") {
		if strings.Contains(line, `"Synced policy"`) && strings.Contains(line, `policy="`+key+`"`) {
			n++
		}
	}
	return n
}

// logLength is the length of the manager's log so far.
func (m *managerProcess) logLength(t *testing.T) int {
	t.Helper()
	l, err := m.log()
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// loggedWrites lists the lines of the manager's log from offset on that record a
// request other than a GET, as client-go logs them at -v=6 and above.
func (m *managerProcess) loggedWrites(t *testing.T, offset int) []string {
	t.Helper()
	l, err := m.log()
	if err != nil || offset > len(l) {
		return nil
	}
	var out []string
	for _, line := range strings.Split(l[offset:], "\n") {
		if strings.Contains(line, `verb="`) && !strings.Contains(line, `verb="GET"`) && !strings.Contains(line, `verb="WATCH"`) {
			out = append(out, line)
		}
	}
	return out
}
