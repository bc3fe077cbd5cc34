// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestDrainingClusterReturns: the admin moves the Gateway off cluster1 and, while
// cluster1 drains, changes their mind and moves it back. cluster1 is Active again with
// its drain state gone, and it was listed by the proxy throughout. Its checks pass
// (so that a run of successes exists to be reset) but minDrainDuration is 10m, so it
// cannot leave while the test runs. A later move starts a new drain, not the old one.
// Rules: 5 (and 1, 2).
func TestDrainingClusterReturns(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "returns")
	f := m.f
	m.traffic.set(map[string]float64{m.c1: 2, m.c2: 98})
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	watch := f.watchClusters(t, m.ns, m.proxy)

	m.moveToC2(t)
	drained := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil && r.ConsecutiveSuccesses >= 2
	})
	firstDrain := row(drained, m.c1).DrainStartTime.Time

	// Back to cluster1: it is Active, with nothing left of its drain.
	f.selectClusters(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site1})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c1}, 30*time.Second)
	movedBack := time.Now()
	returned := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r1, r2 := row(p, m.c1), row(p, m.c2)
		return r1 != nil && r1.Phase == trafficv1alpha1.ClusterActive && r2 != nil && r2.Phase == trafficv1alpha1.ClusterDraining
	})
	if r := row(returned, m.c1); !reflect.DeepEqual(*r, trafficv1alpha1.ClusterStatus{Name: m.c1, Phase: trafficv1alpha1.ClusterActive}) {
		t.Errorf("cluster1 came back but kept drain state: %+v", *r)
	}
	if returned.Status.ActiveClusters != 1 || returned.Status.DrainingClusters != 1 {
		t.Errorf("want 1 active and 1 draining cluster after the return:\n%s", statusString(returned))
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 10*time.Second)

	// Leaving again starts a new drain: its clock starts after the return.
	m.moveToC2(t)
	again := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil
	})
	if start := row(again, m.c1).DrainStartTime.Time; start.Before(movedBack.Truncate(time.Second)) || !start.After(firstDrain) {
		t.Errorf("second drain of cluster1 starts at %s: want a new start after the return at %s (first drain started %s)", start, movedBack, firstDrain)
	}

	for _, s := range watch.stop(t) {
		if !slices.Contains(s.clusters, m.c1) {
			t.Errorf("cluster1 left the proxy at %s: proxy listed %v", s.at.Format(time.StampMilli), s.clusters)
		}
	}
	if evs := f.removalNotes(t, m.ns, m.c1); len(evs) > 0 {
		t.Errorf("cluster1 was removed: %v", evs)
	}
}

// TestManagedClusterDeleted: a draining cluster whose ManagedCluster is deleted leaves
// the proxy within seconds, although its minDrainDuration (10m) is far from over and
// its checks fail: there is nothing left to drain. The removal says why, in the row,
// an event and the removals metric.
// Rules: 6.
func TestManagedClusterDeleted(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "gone")
	f := m.f
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)

	m.moveToC2(t)
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationFail
	})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)
	goneBefore := manager.metricValue(t, "traffic_migration_removals_total", map[string]string{"reason": "ManagedClusterGone"})

	deleted := time.Now()
	f.deleteManagedCluster(t, m.c1)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 15*time.Second)
	t.Logf("cluster1 left the proxy %s after its ManagedCluster was deleted", time.Since(deleted).Round(time.Millisecond))

	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := row(got, m.c1)
	if r.RemovalTime == nil || r.DrainStartTime == nil || r.RemovalTime.Sub(r.DrainStartTime.Time) >= p.Spec.MinDrainDuration.Duration {
		t.Errorf("cluster1's row should show a removal well before minDrainDuration: %+v", *r)
	}
	if !strings.Contains(r.Message, "ManagedCluster no longer exists") {
		t.Errorf("cluster1's row should say its ManagedCluster is gone, says %q", r.Message)
	}
	if r2 := row(got, m.c2); r2 == nil || r2.Phase != trafficv1alpha1.ClusterActive {
		t.Errorf("cluster2 should stay Active:\n%s", statusString(got))
	}
	f.waitForEventNote(t, m.ns, "ManagedClusterGone", m.c1, 10*time.Second)
	if notes := f.removalNotes(t, m.ns, m.c1); len(notes) != 1 {
		t.Errorf("want one removal of cluster1 recorded, got %v", notes)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return manager.metricValue(t, "traffic_migration_removals_total", map[string]string{"reason": "ManagedClusterGone"}) > goneBefore, nil
	})
	if err != nil {
		t.Errorf("traffic_migration_removals_total{reason=\"ManagedClusterGone\"} stayed at %v", goneBefore)
	}
}

// TestPolicyDeletedLeavesProxy: the policy is deleted while cluster1 drains. Its proxy
// Placement and decisions stay exactly as last written (same clusters, same
// resourceVersions), even once cluster1's traffic is gone and a live policy would
// have removed it; nothing that garbage collection could follow points from them to
// the policy. A new policy with the same proxy name adopts them and carries on: its
// drain of cluster1 starts over, later, and ends with the gate.
// Rules: 11 (and 9: a lost drain state starts over, never earlier).
func TestPolicyDeletedLeavesProxy(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "deleted")
	f := m.f
	ctx := context.Background()
	p := m.policy()
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	m.moveToC2(t)
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationFail
	})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)
	before := f.snapshotProxy(t, m.ns, m.proxy)
	if len(before.decisions) != 1 || before.policyLabel != p.Name {
		t.Fatalf("unexpected proxy before the deletion: %+v", before)
	}

	policies := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns)
	if err := policies.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := policies.Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("policy %s not gone", p.Name)
	}

	// cluster1's traffic goes: a live policy would remove it within about 10s (the
	// rest of minDrainDuration 8s, the 4s rate window, 3 checks 1s apart), as the
	// adopting policy below does. That nothing changes is an invariant over time, so it
	// is checked by polling for a bounded time that covers the removal twice over.
	m.traffic.set(map[string]float64{m.c1: 2, m.c2: 98})
	hold := 20 * time.Second
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, hold, true, func(context.Context) (bool, error) {
		now := f.snapshotProxy(t, m.ns, m.proxy)
		if !now.equal(before) {
			t.Fatalf("the proxy changed after its policy was deleted:\nbefore %+v\nnow    %+v", before, now)
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		t.Fatal(err)
	}

	// A new policy with the same proxy name adopts the proxy as it is.
	adopter := m.policy()
	adopter.Name = "adopter"
	adopter.Spec.ProxyPlacementName = m.proxy
	watch := f.watchClusters(t, m.ns, m.proxy)
	adopted := time.Now()
	f.createPolicy(t, adopter)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return f.snapshotProxy(t, m.ns, m.proxy).policyLabel == adopter.Name, nil
	})
	if err != nil {
		t.Fatalf("proxy Placement not adopted by %s: %+v", adopter.Name, f.snapshotProxy(t, m.ns, m.proxy))
	}
	f.waitForEventNote(t, m.ns, "ProxyPlacementAdopted", m.proxy, 10*time.Second)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	// The manager writes the proxy's decisions before the policy's status.
	got := f.waitForPolicy(t, m.ns, adopter.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := row(got, m.c1)
	if r.DrainStartTime == nil || r.RemovalTime == nil || !strings.Contains(r.Message, "gate passed") {
		t.Fatalf("the adopting policy should have removed cluster1 through its gate: %+v", *r)
	}
	if r.DrainStartTime.Time.Before(adopted.Truncate(time.Second)) {
		t.Errorf("the adopting policy's drain of cluster1 starts at %s, before the policy was created at %s", r.DrainStartTime, adopted)
	}
	if d := r.RemovalTime.Sub(r.DrainStartTime.Time); d < adopter.Spec.MinDrainDuration.Duration {
		t.Errorf("cluster1 removed %s after the adopting policy's drain started, before minDrainDuration", d)
	}
	f.waitForEventNote(t, m.ns, "GatePassed", m.c1, 10*time.Second)
	for _, s := range watch.stop(t) {
		if !slices.Contains(s.clusters, m.c2) {
			t.Errorf("cluster2 missing from the proxy at %s: %v", s.at.Format(time.StampMilli), s.clusters)
		}
		if !slices.Contains(s.clusters, m.c1) && s.at.Before(r.DrainStartTime.Add(adopter.Spec.MinDrainDuration.Duration)) {
			t.Errorf("cluster1 gone from the proxy at %s, before the adopting policy's minDrainDuration", s.at.Format(time.StampMilli))
		}
	}
}

// TestLargePlacement: a real Placement of 250 clusters is mirrored in PlacementDecisions
// of at most 100 clusters each, named, split and labelled as OCM's scheduler does for
// the real one, and the proxy Placement's status counts them as the real one's does.
// A real Placement with two decision groups (selected by a label) is mirrored group by
// group: the same group indexes and names on the same slices of clusters.
// Rules: 1 (every real cluster is in the proxy), 10 (the proxy Placement's status);
// PRODUCT.md section 3 (at most 100 per object, decision groups mirrored).
func TestLargePlacement(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	ns := f.namespace(t, "large")
	member, zone := "large-"+ns, "zone-"+ns
	names := make([]string, 250)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", ns, i)
	}
	start := time.Now()
	f.createManyClusters(t, names, func(i int) map[string]string {
		if i < 150 {
			return map[string]string{member: "true", zone: "east"}
		}
		return map[string]string{member: "true", zone: "west"}
	})
	t.Logf("created %d ManagedClusters in %s", len(names), time.Since(start).Round(time.Millisecond))

	f.placement(t, ns, "flat", map[string]string{member: "true"})
	grouped := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: "grouped", Namespace: ns},
		Spec: clusterv1beta1.PlacementSpec{
			Predicates: selectorPredicates(map[string]string{member: "true"}),
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				DecisionGroups: []clusterv1beta1.DecisionGroup{
					{GroupName: "east", ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{zone: "east"}}}},
					{GroupName: "west", ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{zone: "west"}}}},
				},
			}},
		},
	}
	if _, err := f.cluster.ClusterV1beta1().Placements(ns).Create(context.Background(), grouped, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Placement grouped: %v", err)
	}
	f.waitForClusters(t, ns, "flat", names, 60*time.Second)
	f.waitForClusters(t, ns, "grouped", names, 60*time.Second)
	f.createPolicy(t, idlePolicy(ns, "flat"))
	f.createPolicy(t, idlePolicy(ns, "grouped"))

	for _, tc := range []struct {
		placement string
		// want are the proxy's decisions in order: clusters, group index and name.
		want []wantDecision
	}{
		{"flat", []wantDecision{{100, "0", ""}, {100, "0", ""}, {50, "0", ""}}},
		{"grouped", []wantDecision{{100, "0", "east"}, {50, "0", "east"}, {100, "1", "west"}}},
	} {
		proxy := tc.placement + "-proxy"
		f.waitForClusters(t, ns, proxy, names, 60*time.Second)
		var status clusterv1beta1.PlacementStatus
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := f.cluster.ClusterV1beta1().Placements(ns).Get(ctx, proxy, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			status = p.Status
			return p.Status.NumberOfSelectedClusters == int32(len(names)), nil
		})
		if err != nil {
			t.Fatalf("proxy Placement %s: want numberOfSelectedClusters %d, status %+v", proxy, len(names), status)
		}
		f.compareProxyDecisions(t, ns, tc.placement, proxy, tc.want)
	}
}

// wantDecision is what one proxy PlacementDecision should hold.
type wantDecision struct {
	clusters              int
	groupIndex, groupName string
}

// compareProxyDecisions checks that the proxy's decisions are laid out as want and as the
// real Placement's decisions are (decision n of one holds the clusters and group labels
// of decision n of the other), and that the two Placements' statuses agree.
func (f *fleet) compareProxyDecisions(t *testing.T, ns, real, proxy string, want []wantDecision) {
	t.Helper()
	ctx := context.Background()
	decisions := func(placement string) map[string]clusterv1beta1.PlacementDecision {
		list, err := f.cluster.ClusterV1beta1().PlacementDecisions(ns).List(ctx, metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]clusterv1beta1.PlacementDecision{}
		for _, d := range list.Items {
			byName[d.Name] = d
		}
		return byName
	}
	clusterNames := func(d clusterv1beta1.PlacementDecision) []string {
		var out []string
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
		return out
	}
	realDecisions, proxyDecisions := decisions(real), decisions(proxy)
	if len(realDecisions) != len(want) || len(proxyDecisions) != len(want) {
		t.Errorf("%s: want %d decisions in the real and the proxy Placement, got %d and %d", real, len(want), len(realDecisions), len(proxyDecisions))
	}
	for i, w := range want {
		rd, rok := realDecisions[fmt.Sprintf("%s-decision-%d", real, i+1)]
		pd, pok := proxyDecisions[fmt.Sprintf("%s-decision-%d", proxy, i+1)]
		if !rok || !pok {
			t.Errorf("%s: decision %d missing (real %t, proxy %t)", real, i+1, rok, pok)
			continue
		}
		for _, label := range []string{clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel} {
			rv, rhas := rd.Labels[label]
			pv, phas := pd.Labels[label]
			if rv != pv || rhas != phas {
				t.Errorf("%s: label %s: real decision %d has %q (%t), the proxy's %q (%t)", real, label, i+1, rv, rhas, pv, phas)
			}
		}
		if got := (wantDecision{len(pd.Status.Decisions), pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], pd.Labels[clusterv1beta1.DecisionGroupNameLabel]}); got != w {
			t.Errorf("%s: proxy decision %d holds %+v, want %+v", real, i+1, got, w)
		}
		if rc, pc := clusterNames(rd), clusterNames(pd); !slices.Equal(rc, pc) {
			t.Errorf("%s: decision %d lists other clusters in the proxy (%d) than in the real Placement (%d)", real, i+1, len(pc), len(rc))
		}
		if pd.Labels[clusterv1beta1.PlacementLabel] != proxy {
			t.Errorf("%s: proxy decision %d labelled for Placement %q", real, i+1, pd.Labels[clusterv1beta1.PlacementLabel])
		}
	}

	placements := f.cluster.ClusterV1beta1().Placements(ns)
	rp, err := placements.Get(ctx, real, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := placements.Get(ctx, proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Status.NumberOfSelectedClusters != pp.Status.NumberOfSelectedClusters {
		t.Errorf("%s: numberOfSelectedClusters: real %d, proxy %d", real, rp.Status.NumberOfSelectedClusters, pp.Status.NumberOfSelectedClusters)
	}
	mirrored := slices.Clone(rp.Status.DecisionGroups)
	for i := range mirrored {
		mirrored[i].Decisions = nil
		for _, name := range rp.Status.DecisionGroups[i].Decisions {
			mirrored[i].Decisions = append(mirrored[i].Decisions, proxy+strings.TrimPrefix(name, real))
		}
	}
	if len(mirrored) == 0 || !sameJSON(mirrored, pp.Status.DecisionGroups) {
		t.Errorf("%s: the proxy's decisionGroups do not mirror the real ones:\nreal  %+v\nproxy %+v", real, rp.Status.DecisionGroups, pp.Status.DecisionGroups)
	}
}

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

// TestSecretsNeverLeak: the manager reads two Prometheus Secrets, one with a bearer
// token and one with a username and password, both with a CA certificate, and uses
// them for the checks of a draining cluster (a recording proxy in front of Prometheus
// sees the credentials arrive). Neither the token, the password, the CA certificate
// nor their base64 forms appear in the manager's log at -v=10, in any Event of the hub
// or in any policy. The same search over the Secrets themselves finds every one.
// Rules: none of section 5; PRODUCT.md section 4 (the Prometheus Secret and its keys).
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "secrets")
	f := m.f
	ctx := context.Background()
	token := "tok" + rand.String(32)
	username, password := "reader-"+rand.String(6), "pw"+rand.String(32)+"!%"
	caPEM, caDER := throwawayCACert(t)
	auth := newAuthRecorder(t, bed.Prometheus.URL)

	secrets := map[string]map[string]string{
		"prometheus-token": {"url": auth.url, "token": token, "ca.crt": string(caPEM)},
		"prometheus-basic": {"url": auth.url, "username": username, "password": password, "ca.crt": string(caPEM)},
	}
	var policies []string
	for name, data := range secrets {
		f.prometheusSecret(t, m.ns, name, data)
		p := m.policy()
		p.Name = "uses-" + name
		p.Spec.PrometheusSecret.Name = name
		p.Spec.ProxyPlacementName = name + "-proxy"
		f.createPolicy(t, p)
		f.waitForClusters(t, m.ns, p.Spec.ProxyPlacementName, []string{m.c1}, 30*time.Second)
		policies = append(policies, p.Name)
	}

	// cluster1 drains and its checks get answers through both Secrets.
	m.moveToC2(t)
	for _, name := range policies {
		f.waitForPolicy(t, m.ns, name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := row(p, m.c1)
			return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationFail &&
				statusOf(condition(p, trafficv1alpha1.ConditionPrometheusReachable)) == metav1.ConditionTrue
		})
	}
	basic := base64.StdEncoding.EncodeToString([]byte(username + ":" + password))
	for _, header := range []string{"Bearer " + token, "Basic " + basic} {
		if !auth.saw(header) {
			t.Fatalf("Prometheus never received the credentials of a Secret: the checks did not use them")
		}
	}

	caBody := base64.StdEncoding.EncodeToString(caDER)
	caData := base64.StdEncoding.EncodeToString(caPEM)
	needles := map[string]string{
		"the token":                          token,
		"the password":                       password,
		"the token in base64":                base64.StdEncoding.EncodeToString([]byte(token)),
		"the password in base64":             base64.StdEncoding.EncodeToString([]byte(password)),
		"the basic credentials in base64":    basic,
		"the CA certificate (PEM body)":      caBody[70:120], // within the PEM's second line
		"the CA certificate in Secret data":  caData[200:260],
		"the CA certificate's first PEM row": caBody[:64],
	}
	search := func(haystack string) (found []string) {
		for name, needle := range needles {
			if strings.Contains(haystack, needle) {
				found = append(found, name)
			}
		}
		slices.Sort(found)
		return found
	}

	log, err := manager.log()
	if err != nil {
		t.Fatal(err)
	}
	events, err := f.kube.EventsV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	coreEvents, err := f.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allPolicies, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 || len(allPolicies.Items) < len(policies) || !strings.Contains(log, "Synced policy") {
		t.Fatalf("nothing to search: %d events, %d policies, %d bytes of log", len(events.Items), len(allPolicies.Items), len(log))
	}
	for _, h := range []struct{ name, text string }{
		{"the manager's log", log},
		{"the hub's events (events.k8s.io)", jsonString(t, events)},
		{"the hub's events (core)", jsonString(t, coreEvents)},
		{"the policies", jsonString(t, allPolicies)},
	} {
		if found := search(h.text); len(found) > 0 {
			t.Errorf("%s (%d bytes) holds %s", h.name, len(h.text), strings.Join(found, ", "))
		}
	}

	// The search finds what is there: every needle is in the Secrets as the API
	// serves them and in their values.
	var control strings.Builder
	for name := range secrets {
		s, err := f.kube.CoreV1().Secrets(m.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		control.WriteString(jsonString(t, s))
		for _, v := range s.Data {
			control.Write(v)
			control.WriteString("\n")
		}
	}
	control.WriteString(auth.headers()) // as the manager sent them: derived, never stored
	if found := search(control.String()); len(found) != len(needles) {
		t.Errorf("the search is broken: over the Secrets themselves it finds only %v of %d needles", found, len(needles))
	}
}

// TestManagerRestartMidDrain: the manager is killed (SIGKILL) while cluster1 drains with
// passing checks, and a new one takes over. The drain goes on where it was: the same
// drainStartTime, the run of successes carried on. cluster1 leaves the proxy once,
// only after drainStartTime+minDrainDuration, and cluster2 is listed throughout: a
// watch of the proxy's decisions records every change, so a flap cannot hide between
// two reads.
// The test does not call t.Parallel: it replaces the package's shared manager, which
// the parallel tests must not see go away.
// Rules: 9 (and 2, 3).
func TestManagerRestartMidDrain(t *testing.T) {
	m := newMigration(t, "restart")
	f := m.f
	m.traffic.set(map[string]float64{m.c1: 2, m.c2: 98})
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 20 * time.Second}
	p.Spec.ConsecutiveSuccesses = 3
	p.Spec.Interval = &metav1.Duration{Duration: time.Second}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)

	m.moveToC2(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 10*time.Second)
	watch := f.watchClusters(t, m.ns, m.proxy)
	before := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil && r.ConsecutiveSuccesses >= 1
	})
	r0 := *row(before, m.c1)
	deadline := r0.DrainStartTime.Add(p.Spec.MinDrainDuration.Duration)

	old := manager
	old.proc.Kill()
	killed := time.Now()
	if !old.proc.Exited() {
		t.Fatal("the manager still runs after SIGKILL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	restarted, err := startManager(ctx)
	if err != nil {
		t.Fatalf("start a new manager: %v", err)
	}
	manager = restarted
	t.Logf("manager killed %s into the drain with %d successes; the new one was ready %s later",
		killed.Sub(r0.DrainStartTime.Time).Round(time.Millisecond), r0.ConsecutiveSuccesses, time.Since(killed).Round(time.Millisecond))
	if !killed.Before(deadline) {
		t.Fatalf("the manager was killed after minDrainDuration was over: the test proves nothing")
	}

	// The new manager carries the drain on: its first own check adds to the run.
	// Times in rows are rounded up to the second, so a check stamped more than a second
	// after the kill is the new manager's.
	carried := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.LastEvaluationTime != nil && r.LastEvaluationTime.After(killed.Add(time.Second))
	})
	r1 := *row(carried, m.c1)
	if r1.DrainStartTime == nil || !r1.DrainStartTime.Equal(r0.DrainStartTime) {
		t.Errorf("drainStartTime changed over the restart: %v, then %v", r0.DrainStartTime, r1.DrainStartTime)
	}
	if r1.ConsecutiveSuccesses <= r0.ConsecutiveSuccesses {
		t.Errorf("the run of successes did not carry over the restart: %d before, %d after the new manager's check", r0.ConsecutiveSuccesses, r1.ConsecutiveSuccesses)
	}

	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	// The manager writes the proxy's decisions before the policy's status.
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := row(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := row(got, m.c1)
	if r.RemovalTime == nil || r.DrainStartTime == nil {
		t.Fatalf("cluster1's Removed row lacks its times: %+v", *r)
	}
	if !r.DrainStartTime.Equal(r0.DrainStartTime) || r.RemovalTime.Time.Before(deadline) {
		t.Errorf("cluster1's drain ran from %s to %s; want it to start at %s and last at least %s", r.DrainStartTime, r.RemovalTime, r0.DrainStartTime, p.Spec.MinDrainDuration.Duration)
	}
	// The watch holds every change of the proxy's clusters since before the kill: it
	// must have gone from cluster1 and cluster2 to cluster2 alone, once. Any other
	// state between (cluster2 missing, cluster1 gone and back) is a flap.
	sightings := watch.stop(t)
	want := [][]string{slices.Sorted(slices.Values([]string{m.c1, m.c2})), {m.c2}}
	if !slices.EqualFunc(sightings, want, func(s clusterSighting, w []string) bool { return slices.Equal(s.clusters, w) }) {
		t.Fatalf("the proxy's clusters went through:\n%s\nwant exactly %v, then %v", sightingList(sightings), want[0], want[1])
	}
	// The watch received the removal no earlier than it was made: seen before the
	// deadline, it was early.
	gone := sightings[1].at
	if gone.Before(deadline) {
		t.Errorf("cluster1 gone from the proxy at %s; its drain started at %s and may not end before %s", gone.Format(time.StampMilli), r0.DrainStartTime.Format(time.StampMilli), deadline.Format(time.StampMilli))
	}
	t.Logf("cluster1 left the proxy %s after its drain started", gone.Sub(r0.DrainStartTime.Time).Round(time.Millisecond))
}

// idlePolicy is a policy that nothing ever checks: its real Placement's clusters do not
// leave. The Secret it names need not exist.
func idlePolicy(ns, placement string) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: placement, Namespace: ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: placement},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewayNamespace},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: "prometheus"},
			TrafficShare:     &trafficv1alpha1.TrafficShare{Metric: "test_gateway_requests_total", Window: "4s", MaxPercent: 5},
		},
	}
}

// createManyClusters creates ManagedClusters, a few at a time, and deletes them all when
// the test ends. Unlike managedCluster it makes no namespaces: nothing reports for
// these clusters.
func (f *fleet) createManyClusters(t *testing.T, names []string, labelsOf func(i int) map[string]string) {
	t.Helper()
	ctx := context.Background()
	client := f.cluster.ClusterV1().ManagedClusters()
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(names); i += 4 {
					if err := client.Delete(ctx, names[i], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						t.Errorf("delete ManagedCluster %s: %v", names[i], err)
					}
				}
			}()
		}
		wg.Wait()
	})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(names) && !t.Failed(); i += 4 {
				mc := &clusterv1.ManagedCluster{
					ObjectMeta: metav1.ObjectMeta{Name: names[i], Labels: labelsOf(i)},
					Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
				}
				if _, err := client.Create(ctx, mc, metav1.CreateOptions{}); err != nil {
					t.Errorf("create ManagedCluster %s: %v", names[i], err)
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// proxyState is what a consumer or garbage collection could see change on a proxy.
type proxyState struct {
	placementRV string
	policyLabel string
	ownedBy     []string
	// decisions are the resourceVersions of the proxy's decisions, by name.
	decisions map[string]string
	clusters  []string
}

func (s proxyState) equal(o proxyState) bool {
	return s.placementRV == o.placementRV && s.policyLabel == o.policyLabel && slices.Equal(s.ownedBy, o.ownedBy) &&
		maps.Equal(s.decisions, o.decisions) && slices.Equal(s.clusters, o.clusters)
}

// snapshotProxy reads a proxy Placement and its decisions. It fails the test if any of
// them is owned by a TrafficMigrationPolicy: garbage collection would delete it with
// the policy.
func (f *fleet) snapshotProxy(t *testing.T, ns, proxy string) proxyState {
	t.Helper()
	ctx := context.Background()
	p, err := f.cluster.ClusterV1beta1().Placements(ns).Get(ctx, proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read proxy Placement: %v", err)
	}
	s := proxyState{placementRV: p.ResourceVersion, policyLabel: p.Labels[trafficv1alpha1.PolicyLabel], decisions: map[string]string{}}
	owners := p.OwnerReferences
	list, err := f.cluster.ClusterV1beta1().PlacementDecisions(ns).List(ctx, metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + proxy})
	if err != nil {
		t.Fatalf("read proxy decisions: %v", err)
	}
	for _, d := range list.Items {
		s.decisions[d.Name] = d.ResourceVersion
		owners = append(owners, d.OwnerReferences...)
		for _, c := range d.Status.Decisions {
			s.clusters = append(s.clusters, c.ClusterName)
		}
	}
	for _, o := range owners {
		s.ownedBy = append(s.ownedBy, o.Kind+"/"+o.Name)
		if o.Kind == "TrafficMigrationPolicy" || strings.HasPrefix(o.APIVersion, trafficv1alpha1.GroupName+"/") {
			t.Fatalf("proxy %s is owned by %s %s: deleting the policy would delete it", proxy, o.Kind, o.Name)
		}
	}
	slices.Sort(s.clusters)
	slices.Sort(s.ownedBy)
	return s
}

// removalNotes lists the events in ns that record the removal of cluster from a proxy.
func (f *fleet) removalNotes(t *testing.T, ns, cluster string) []string {
	t.Helper()
	list, err := f.kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if strings.HasPrefix(e.Note, "Removed cluster "+cluster+" ") {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

// waitForEventNote waits for an event in ns with the reason whose note mentions mention.
func (f *fleet) waitForEventNote(t *testing.T, ns, reason, mention string, timeout time.Duration) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := f.kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if e.Reason == reason && strings.Contains(e.Note, mention) {
				return true, nil
			}
			seen = append(seen, e.Reason+": "+e.Note)
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no event %s about %s in %s; events:\n%s", reason, mention, ns, strings.Join(seen, "\n"))
	}
}

// counter reads the sum of a metric of the manager over the series that match.
func (m *managerProcess) metricValue(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	v, err := m.metric(name, match)
	if err != nil {
		t.Fatalf("read %s from the manager: %v", name, err)
	}
	return v
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

// authRecorder is a reverse proxy in front of Prometheus that remembers every
// Authorization header it was sent.
type authRecorder struct {
	url  string
	mu   sync.Mutex
	seen map[string]bool
}

func newAuthRecorder(t *testing.T, target string) *authRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &authRecorder{seen: map[string]bool{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen[req.Header.Get("Authorization")] = true
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// headers returns every Authorization header seen, one a line.
func (r *authRecorder) headers() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for h := range r.seen {
		out = append(out, h)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func (r *authRecorder) saw(header string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[header]
}

// throwawayCACert makes a self-signed CA certificate for this test only, in PEM and DER.
func throwawayCACert(t *testing.T) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := cryptorand.Int(cryptorand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "throwaway CA " + rand.String(8), Organization: []string{"traffic-migration tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), der
}

func statusOf(c *metav1.Condition) metav1.ConditionStatus {
	if c == nil {
		return ""
	}
	return c.Status
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
