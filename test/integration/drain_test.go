// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
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
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	watch := f.watchClusters(t, m.ns, m.proxy)

	m.moveToC2(t)
	drained := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil && r.ConsecutiveSuccesses >= 2
	})
	firstDrain := fixture.PolicyRow(drained, m.c1).DrainStartTime.Time

	// Back to cluster1: it is Active, with nothing left of its drain.
	f.selectClusters(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site1})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c1}, 30*time.Second)
	movedBack := time.Now()
	returned := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r1, r2 := fixture.PolicyRow(p, m.c1), fixture.PolicyRow(p, m.c2)
		return r1 != nil && r1.Phase == trafficv1alpha1.ClusterActive && r2 != nil && r2.Phase == trafficv1alpha1.ClusterDraining
	})
	if r := fixture.PolicyRow(returned, m.c1); !reflect.DeepEqual(*r, trafficv1alpha1.ClusterStatus{Name: m.c1, Phase: trafficv1alpha1.ClusterActive}) {
		t.Errorf("cluster1 came back but kept drain state: %+v", *r)
	}
	if returned.Status.ActiveClusters != 1 || returned.Status.DrainingClusters != 1 {
		t.Errorf("want 1 active and 1 draining cluster after the return:\n%s", fixture.PolicyStatus(returned))
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 10*time.Second)

	// Leaving again starts a new drain: its clock starts after the return.
	m.moveToC2(t)
	again := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil
	})
	if start := fixture.PolicyRow(again, m.c1).DrainStartTime.Time; start.Before(movedBack.Truncate(time.Second)) || !start.After(firstDrain) {
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
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	})

	m.moveToC2(t)
	m.waitFailing(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)
	goneBefore := m.removals(t, p, "ManagedClusterGone")

	deleted := time.Now()
	f.deleteManagedCluster(t, m.c1)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 15*time.Second)
	t.Logf("cluster1 left the proxy %s after its ManagedCluster was deleted", time.Since(deleted).Round(time.Millisecond))

	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := fixture.PolicyRow(got, m.c1)
	if r.RemovalTime == nil || r.DrainStartTime == nil || r.RemovalTime.Sub(r.DrainStartTime.Time) >= p.Spec.MinDrainDuration.Duration {
		t.Errorf("cluster1's row should show a removal well before minDrainDuration: %+v", *r)
	}
	if !strings.Contains(r.Message, "ManagedCluster no longer exists") {
		t.Errorf("cluster1's row should say its ManagedCluster is gone, says %q", r.Message)
	}
	if r2 := fixture.PolicyRow(got, m.c2); r2 == nil || r2.Phase != trafficv1alpha1.ClusterActive {
		t.Errorf("cluster2 should stay Active:\n%s", fixture.PolicyStatus(got))
	}
	m.wantRemovalRecorded(t, p, "ManagedClusterGone", goneBefore)
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
	ctx := t.Context()
	p := m.start(t, nil)
	m.moveToC2(t)
	m.waitFailing(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)
	before := f.snapshotProxy(t, m.ns, m.proxy)
	if len(before.decisions) != 1 || before.policyLabel != p.Name {
		t.Fatalf("unexpected proxy before the deletion: %+v", before)
	}

	policies := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns)
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
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
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
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := fixture.PolicyRow(got, m.c1)
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
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
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
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil && r.ConsecutiveSuccesses >= 1
	})
	r0 := *fixture.PolicyRow(before, m.c1)
	deadline := r0.DrainStartTime.Add(p.Spec.MinDrainDuration.Duration)

	old := manager
	old.proc.Kill()
	killed := time.Now()
	if !old.proc.Exited() {
		t.Fatal("the manager still runs after SIGKILL")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
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
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.LastEvaluationTime != nil && r.LastEvaluationTime.After(killed.Add(time.Second))
	})
	r1 := *fixture.PolicyRow(carried, m.c1)
	if r1.DrainStartTime == nil || !r1.DrainStartTime.Equal(r0.DrainStartTime) {
		t.Errorf("drainStartTime changed over the restart: %v, then %v", r0.DrainStartTime, r1.DrainStartTime)
	}
	if r1.ConsecutiveSuccesses <= r0.ConsecutiveSuccesses {
		t.Errorf("the run of successes did not carry over the restart: %d before, %d after the new manager's check", r0.ConsecutiveSuccesses, r1.ConsecutiveSuccesses)
	}

	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	// The manager writes the proxy's decisions before the policy's status.
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := fixture.PolicyRow(got, m.c1)
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
	ctx := t.Context()
	p, err := f.Cluster.ClusterV1beta1().Placements(ns).Get(ctx, proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read proxy Placement: %v", err)
	}
	s := proxyState{placementRV: p.ResourceVersion, policyLabel: p.Labels[trafficv1alpha1.PolicyLabel], decisions: map[string]string{}}
	owners := p.OwnerReferences
	list, err := f.Cluster.ClusterV1beta1().PlacementDecisions(ns).List(ctx, metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + proxy})
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
	list, err := f.Kube.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
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
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := f.Kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
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
