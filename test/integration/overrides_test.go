// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// The tests of this file drive what an admin can do beyond editing the real Placement
// (docs/design.md section 4 and rules 7 and 8): lose the real Placement, suspend removals,
// force a removal, and put a deadline on a drain. Each policy checks every second and
// needs two passing checks and 2s of drain, so that whatever the manager should do,
// or must not do, it would do within seconds.

// realPlacementLoss is one way the real Placement's decisions stop being known to the
// manager, and how they come back.
type realPlacementLoss struct {
	// lose makes the real decisions unreadable.
	lose func(m *migration, t *testing.T)
	// restore brings them back, selecting the second cluster.
	restore func(m *migration, t *testing.T)
	// message is what the Ready condition's message must hold while they are lost.
	message string
}

// TestRealPlacementLost: cluster1 drains and its checks pass, and only cluster2's
// Gateway, not ready yet, keeps it in the proxy. Then the real Placement goes (deleted,
// or its decisions gone while its scheduling is off), and cluster2's Gateway becomes
// ready: with the real decisions known, the sync that this wakes would remove cluster1
// at once. The proxy keeps both clusters instead, Ready says PlacementNotFound with a
// Warning event, cluster1's row says its removal waits for the real decisions and for
// nothing else, and no check is counted. When the real Placement is back, cluster1's
// gate passes and it leaves the proxy, once. A gapless watch of the proxy sees every
// change from the move to the end.
// Rules: 7 (and 1, 2, 3).
func TestRealPlacementLost(t *testing.T) {
	t.Parallel()
	cases := map[string]realPlacementLoss{
		"deleted": {
			lose:    (*migration).deleteRealPlacement,
			restore: (*migration).recreateRealPlacement,
			message: "not found: the proxy keeps its clusters",
		},
		"no-decisions": {
			lose:    (*migration).unscheduleRealPlacement,
			restore: (*migration).rescheduleRealPlacement,
			message: "has no PlacementDecisions yet: the proxy keeps its clusters",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runRealPlacementLost(t, "lost-"+name, tc)
		})
	}
}

func runRealPlacementLost(t *testing.T, prefix string, loss realPlacementLoss) {
	m := newMigration(t, prefix)
	f := m.f
	// cluster2's Gateway is not ready yet: cluster1 may not leave.
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, false, map[string]string{"cluster": m.c2})
	p := m.startShortDrain(t, 2, nil)
	watch := f.watchClusters(t, m.ns, m.proxy)

	m.moveToC2(t)
	// Its checks passed and its minDrainDuration is over: cluster1's removal waits for
	// a ready Gateway elsewhere, and for nothing else.
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.ConsecutiveSuccesses >= 2 &&
			r.Message == "no other cluster has the Gateway ready"
	})

	loss.lose(m, t)
	lost := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == trafficv1alpha1.ReasonPlacementNotFound &&
			strings.Contains(c.Message, loss.message)
	})
	if e := f.waitForWarning(t, m.ns, p.Name, trafficv1alpha1.ReasonPlacementNotFound, 10*time.Second); !strings.Contains(e.Note, m.placement) {
		t.Errorf("event %s does not name Placement %s: %q", e.Reason, m.placement, e.Note)
	}
	lastCheck := fixture.PolicyRow(lost, m.c1).LastEvaluationTime

	// cluster2's Gateway becomes ready, and Prometheus still says cluster1's share is
	// under 5%: with the real decisions known, cluster1 would leave now.
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c2})
	waitForPromValue(t, c1ShareQuery(m, p), func(v float64) bool { return v <= 5 })
	// The manager took the ready Gateway in: all cluster1's removal waits for now is the
	// real decisions.
	waited := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && (r.Phase != trafficv1alpha1.ClusterDraining || r.Message == "the real Placement's decisions cannot be read")
	})
	if r := fixture.PolicyRow(waited, m.c1); r.Phase != trafficv1alpha1.ClusterDraining {
		t.Fatalf("cluster1 left while the real Placement was gone:\n%s", fixture.PolicyStatus(waited))
	}
	// And it stays so for three intervals more: no sync, no check, no requeue removes it.
	throughout(t, 3*p.Spec.Interval.Duration, func(ctx context.Context) error {
		p, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return nil // a failed read proves nothing either way
		}
		r1, r2 := fixture.PolicyRow(p, m.c1), fixture.PolicyRow(p, m.c2)
		switch {
		case statusOf(condition(p, trafficv1alpha1.ConditionReady)) != metav1.ConditionFalse:
			return fmt.Errorf("the policy is Ready while the real Placement is gone")
		case r1 == nil || r1.Phase != trafficv1alpha1.ClusterDraining:
			return fmt.Errorf("cluster1 is no longer draining")
		case !r1.LastEvaluationTime.Equal(lastCheck):
			return fmt.Errorf("cluster1 was checked at %s, against real decisions nobody can read", r1.LastEvaluationTime)
		case r2 == nil || r2.Phase != trafficv1alpha1.ClusterActive:
			return fmt.Errorf("cluster2 is no longer Active")
		}
		return nil
	})

	restored := time.Now()
	loss.restore(m, t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 30*time.Second)
	// The manager writes the proxy's decisions before the policy's status.
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved &&
			statusOf(condition(p, trafficv1alpha1.ConditionReady)) == metav1.ConditionTrue
	})
	r := fixture.PolicyRow(got, m.c1)
	if !strings.Contains(r.Message, "removal gate passed") || r.RemovalTime == nil || r.RemovalTime.Time.Before(restored) {
		t.Errorf("cluster1 should have left through its gate once the real Placement was back (at %s): %+v", restored.Format(time.StampMilli), *r)
	}
	f.waitForEventNote(t, m.ns, "GatePassed", m.c1, 10*time.Second)
	if notes := f.removalNotes(t, m.ns, m.c1); len(notes) != 1 {
		t.Errorf("want one removal of cluster1 recorded, got %v", notes)
	}
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c2})
	wantLeftNotBefore(t, seen, restored, "before the real Placement was back at %s")
}

// TestSuspend: removals are suspended before the move. cluster1 drains, its checks go
// on and pass three more times than its gate needs after its minDrainDuration, and it
// stays, the Draining condition and its row saying removals are suspended. Additions
// are not suspended: cluster2, then a new cluster3, reach the proxy as soon as the real
// Placement lists them. Once the suspension is lifted, cluster1 leaves, once.
// Rules: 3 (the policy is not suspended), 1; docs/design.md section 4 (suspend).
func TestSuspend(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "suspend")
	f := m.f
	p := m.startShortDrain(t, 2, nil)

	suspended := f.patchPolicy(t, m.ns, p.Name, map[string]any{"spec": map[string]any{"suspend": true}})
	f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Status.ObservedGeneration >= suspended.Generation
	})
	watch := f.watchClusters(t, m.ns, m.proxy)

	m.moveToC2(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 10*time.Second)
	c3 := m.ns + "-c3"
	f.managedCluster(t, c3, map[string]string{m.siteLabel: m.site2})
	f.reportAgent(t, c3, gatewayNamespace, gatewayName, true, map[string]string{"cluster": c3})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c2, c3}, 30*time.Second)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2, c3}, 10*time.Second)

	// Three passing checks, an interval apart, past the two that open the gate.
	got := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && (r.Phase == trafficv1alpha1.ClusterRemoved ||
			(r.Phase == trafficv1alpha1.ClusterDraining && r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses+3 &&
				r.DrainStartTime != nil && r.LastEvaluationTime != nil && r.LastEvaluationTime.Sub(r.DrainStartTime.Time) >= p.Spec.MinDrainDuration.Duration))
	})
	if r := fixture.PolicyRow(got, m.c1); r.Phase == trafficv1alpha1.ClusterRemoved {
		t.Fatalf("cluster1 was removed while removals were suspended:\n%s", fixture.PolicyStatus(got))
	}
	if r := fixture.PolicyRow(got, m.c1); r.Message != "removals suspended" {
		t.Errorf("cluster1's row should say that only the suspension keeps it, says %q", r.Message)
	}
	if c := condition(got, trafficv1alpha1.ConditionDraining); c == nil || c.Status != metav1.ConditionTrue || c.Reason != trafficv1alpha1.ReasonSuspended || !strings.Contains(c.Message, m.c1) {
		t.Errorf("Draining should be True, reason %s, naming cluster1:\n%s", trafficv1alpha1.ReasonSuspended, fixture.PolicyStatus(got))
	}
	f.waitForEventNote(t, m.ns, trafficv1alpha1.ReasonSuspended, m.c1, 10*time.Second)

	resumed := time.Now()
	f.patchPolicy(t, m.ns, p.Name, map[string]any{"spec": map[string]any{"suspend": false}})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2, c3}, 30*time.Second)
	got = f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	if r := fixture.PolicyRow(got, m.c1); !strings.Contains(r.Message, "removal gate passed") || r.RemovalTime == nil || r.RemovalTime.Time.Before(resumed) {
		t.Errorf("cluster1 should have left through its gate after the suspension was lifted at %s: %+v", resumed.Format(time.StampMilli), *r)
	}
	if c := condition(got, trafficv1alpha1.ConditionDraining); c == nil || c.Reason != trafficv1alpha1.ReasonNoClustersDraining {
		t.Errorf("Draining should say no cluster drains:\n%s", fixture.PolicyStatus(got))
	}
	f.waitForEventNote(t, m.ns, "GatePassed", m.c1, 10*time.Second)
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c1, m.c2, c3}, []string{m.c2, c3})
	wantLeftNotBefore(t, seen, resumed, "while removals were suspended (until %s)")
}

// TestForceRemove: cluster1 drains and its checks fail. The admin names it and
// cluster2 in the force-remove annotation. cluster1 leaves the proxy at once and once,
// with a ForceRemoved event and a Removed row that says why; cluster2, which the real
// Placement still lists, stays, and a Warning event says why nothing was done. The
// manager takes both names, which it acted on, out of the annotation.
// docs/design.md section 4 (manual override).
func TestForceRemove(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "force")
	f := m.f
	p := m.startShortDrain(t, 50, nil)
	watch := f.watchClusters(t, m.ns, m.proxy)
	m.moveToC2(t)
	m.waitFailing(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, time.Second)
	removalsBefore := m.removals(t, p, "ForceRemoved")

	forced := time.Now()
	f.forceRemove(t, m.ns, p.Name, m.c1+","+m.c2)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 15*time.Second)
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		_, named := p.Annotations[trafficv1alpha1.ForceRemoveAnnotation]
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved && !named
	})
	r := fixture.PolicyRow(got, m.c1)
	if r.Message != "removed: named in the force-remove annotation" || r.LastResult != trafficv1alpha1.EvaluationFail || r.ConsecutiveSuccesses != 0 {
		t.Errorf("cluster1's row should show a forced removal of a cluster whose checks failed: %+v", *r)
	}
	if r2 := fixture.PolicyRow(got, m.c2); r2 == nil || r2.Phase != trafficv1alpha1.ClusterActive {
		t.Errorf("cluster2 should stay Active:\n%s", fixture.PolicyStatus(got))
	}
	if e := f.waitForWarning(t, m.ns, p.Name, "ForceRemoveInRealDecisions", 10*time.Second); !strings.Contains(e.Note, m.c2) {
		t.Errorf("event %s does not name cluster2: %q", e.Reason, e.Note)
	}

	// Once: one removal recorded, and the proxy lost cluster1 once, after the annotation.
	m.wantRemovalRecorded(t, p, "ForceRemoved", removalsBefore)
	if n := f.eventCount(t, m.ns, "ForceRemoved", m.c1); n != 1 {
		t.Errorf("cluster1's forced removal was recorded %d times, want once", n)
	}
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c2})
	wantLeftNotBefore(t, seen, forced, "before it was named at %s")
}

// TestForceRemoveDeferred: the admin names a draining cluster in the force-remove
// annotation while the real Placement is gone. Nothing is removed while the real
// decisions cannot be read: a Warning event says the removal is deferred, and the name
// stays in the annotation. Once the real Placement is back, the cluster is removed and
// the name taken out.
// Rules: 7; docs/design.md section 4 (manual override).
func TestForceRemoveDeferred(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "force-later")
	f := m.f
	p := m.startShortDrain(t, 50, nil)
	watch := f.watchClusters(t, m.ns, m.proxy)
	m.moveToC2(t)
	m.waitFailing(t, p)

	m.deleteRealPlacement(t)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionReady)
		return c != nil && c.Reason == trafficv1alpha1.ReasonPlacementNotFound
	})
	f.forceRemove(t, m.ns, p.Name, m.c1)
	if e := f.waitForWarning(t, m.ns, p.Name, "ForceRemoveDeferred", 10*time.Second); !strings.Contains(e.Note, m.c1) {
		t.Errorf("event %s does not name cluster1: %q", e.Reason, e.Note)
	}
	// The manager has seen the name; for three intervals more it neither acts on it nor
	// forgets it.
	throughout(t, 3*p.Spec.Interval.Duration, func(ctx context.Context) error {
		p, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		if got := p.Annotations[trafficv1alpha1.ForceRemoveAnnotation]; got != m.c1 {
			return fmt.Errorf("the force-remove annotation says %q, want %q until the real Placement is back", got, m.c1)
		}
		if r := fixture.PolicyRow(p, m.c1); r == nil || r.Phase != trafficv1alpha1.ClusterDraining {
			return fmt.Errorf("cluster1 is no longer draining:\n%s", fixture.PolicyStatus(p))
		}
		return nil
	})

	restored := time.Now()
	m.recreateRealPlacement(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 30*time.Second)
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		_, named := p.Annotations[trafficv1alpha1.ForceRemoveAnnotation]
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved && !named
	})
	if r := fixture.PolicyRow(got, m.c1); r.Message != "removed: named in the force-remove annotation" {
		t.Errorf("cluster1's row should show a forced removal: %+v", *r)
	}
	f.waitForEventNote(t, m.ns, "ForceRemoved", m.c1, 10*time.Second)
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c2})
	wantLeftNotBefore(t, seen, restored, "before the real Placement was back at %s")
}

// TestMaxDrainDurationHold: cluster1's checks fail past its maxDrainDuration (4s) with
// onMaxDrainDuration Hold. It turns Held and stays while three more checks fail after
// the deadline; the Held condition and two Warning events say so. Held is not for ever:
// once its traffic is gone its gate passes and it leaves.
// Rules: 8 (Hold), 3.
func TestMaxDrainDurationHold(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "held")
	f := m.f
	p := m.startShortDrain(t, 50, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.MaxDrainDuration = &metav1.Duration{Duration: 4 * time.Second}
		p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineHold
	})
	watch := f.watchClusters(t, m.ns, m.proxy)
	m.moveToC2(t)

	deadline := p.Spec.MaxDrainDuration.Duration
	got := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		c := condition(p, trafficv1alpha1.ConditionHeld)
		return r != nil && (r.Phase == trafficv1alpha1.ClusterRemoved ||
			(r.Phase == trafficv1alpha1.ClusterHeld && r.LastResult == trafficv1alpha1.EvaluationFail &&
				r.DrainStartTime != nil && r.LastEvaluationTime != nil && r.LastEvaluationTime.Sub(r.DrainStartTime.Time) >= deadline+3*p.Spec.Interval.Duration &&
				c != nil && c.Status == metav1.ConditionTrue && c.Reason == trafficv1alpha1.ReasonMaxDrainDurationExceeded))
	})
	r := fixture.PolicyRow(got, m.c1)
	if r.Phase == trafficv1alpha1.ClusterRemoved {
		t.Fatalf("cluster1 was removed past its deadline although onMaxDrainDuration is Hold:\n%s", fixture.PolicyStatus(got))
	}
	if !strings.Contains(r.Message, "maximum drain duration exceeded") || !strings.Contains(r.Message, "waiting for 2 more passing checks") {
		t.Errorf("cluster1's row should say it is past its deadline and waits for its checks: %q", r.Message)
	}
	if got.Status.DrainingClusters != 1 || !strings.Contains(condition(got, trafficv1alpha1.ConditionHeld).Message, m.c1) {
		t.Errorf("the status should count cluster1 as draining and name it as held:\n%s", fixture.PolicyStatus(got))
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, time.Second)
	for _, reason := range []string{"ClusterHeld", trafficv1alpha1.ReasonMaxDrainDurationExceeded} {
		if e := f.waitForWarning(t, m.ns, p.Name, reason, 10*time.Second); !strings.Contains(e.Note, m.c1) {
			t.Errorf("event %s does not name cluster1: %q", reason, e.Note)
		}
	}

	shifted := time.Now()
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	got = f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		c := condition(p, trafficv1alpha1.ConditionHeld)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved && c != nil && c.Reason == trafficv1alpha1.ReasonWithinDeadline
	})
	if r := fixture.PolicyRow(got, m.c1); !strings.Contains(r.Message, "removal gate passed") {
		t.Errorf("cluster1 should have left through its gate: %+v", *r)
	}
	f.waitForEventNote(t, m.ns, "GatePassed", m.c1, 10*time.Second)
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c2})
	wantLeftNotBefore(t, seen, shifted, "while its checks failed (until %s)")
}

// TestMaxDrainDurationRemove: cluster1's checks fail, and onMaxDrainDuration is Remove.
// It leaves the proxy at its maxDrainDuration (5s), not before, with an event and a
// Removed row that say why.
// Rules: 8 (Remove).
func TestMaxDrainDurationRemove(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "deadline")
	f := m.f
	p := m.startShortDrain(t, 50, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.MaxDrainDuration = &metav1.Duration{Duration: 5 * time.Second}
		p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineRemove
	})
	removalsBefore := m.removals(t, p, "MaxDrainDurationRemove")
	watch := f.watchClusters(t, m.ns, m.proxy)
	m.moveToC2(t)

	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := fixture.PolicyRow(got, m.c1)
	if r.Message != "removed: maximum drain duration exceeded" || r.LastResult != trafficv1alpha1.EvaluationFail || r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses {
		t.Errorf("cluster1's row should show a removal at the deadline of a cluster whose checks failed: %+v", *r)
	}
	if r.DrainStartTime == nil || r.RemovalTime == nil || r.RemovalTime.Sub(r.DrainStartTime.Time) < p.Spec.MaxDrainDuration.Duration {
		t.Fatalf("cluster1 should have been removed no earlier than maxDrainDuration after its drain started: %+v", *r)
	}
	m.wantRemovalRecorded(t, p, "MaxDrainDurationRemove", removalsBefore)
	seen := watch.stop(t)
	wantSightings(t, seen, []string{m.c1}, []string{m.c1, m.c2}, []string{m.c2})
	wantLeftNotBefore(t, seen, r.DrainStartTime.Add(p.Spec.MaxDrainDuration.Duration), "before its deadline %s")
	t.Logf("cluster1 left the proxy %s after its drain started", seen[len(seen)-1].at.Sub(r.DrainStartTime.Time).Round(time.Millisecond))
}

// deleteRealPlacement deletes the real Placement, then its PlacementDecisions, as the
// garbage collector of a real hub does (the test bed's hub runs none).
func (m *migration) deleteRealPlacement(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	placements := m.f.Cluster.ClusterV1beta1().Placements(m.ns)
	if err := placements.Delete(ctx, m.placement, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete Placement %s: %v", m.placement, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := placements.Get(ctx, m.placement, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("Placement %s not gone", m.placement)
	}
	m.deleteRealDecisions(t)
}

// recreateRealPlacement creates the real Placement again, selecting the second cluster,
// and waits until OCM has scheduled it.
func (m *migration) recreateRealPlacement(t *testing.T) {
	t.Helper()
	m.f.placement(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site2})
	m.f.waitForClusters(t, m.ns, m.placement, []string{m.c2}, 30*time.Second)
}

// unscheduleRealPlacement turns OCM's scheduling of the real Placement off and deletes
// its PlacementDecisions: the Placement is there, its decisions are not.
func (m *migration) unscheduleRealPlacement(t *testing.T) {
	t.Helper()
	m.patchRealPlacement(t, map[string]any{"metadata": map[string]any{"annotations": map[string]any{clusterv1beta1.PlacementDisableAnnotation: "true"}}})
	m.deleteRealDecisions(t)
}

// rescheduleRealPlacement turns OCM's scheduling of the real Placement back on and
// waits until its decisions are written again.
func (m *migration) rescheduleRealPlacement(t *testing.T) {
	t.Helper()
	m.patchRealPlacement(t, map[string]any{"metadata": map[string]any{"annotations": map[string]any{clusterv1beta1.PlacementDisableAnnotation: nil}}})
	m.f.waitForClusters(t, m.ns, m.placement, []string{m.c2}, 30*time.Second)
}

func (m *migration) patchRealPlacement(t *testing.T, patch map[string]any) {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.f.Cluster.ClusterV1beta1().Placements(m.ns).Patch(t.Context(), m.placement, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch Placement %s: %v", m.placement, err)
	}
}

// deleteRealDecisions deletes the real Placement's PlacementDecisions and waits until
// none is left.
func (m *migration) deleteRealDecisions(t *testing.T) {
	t.Helper()
	decisions := m.f.Cluster.ClusterV1beta1().PlacementDecisions(m.ns)
	selector := metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + m.placement}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := decisions.DeleteCollection(ctx, metav1.DeleteOptions{}, selector); err != nil {
			return false, nil
		}
		list, err := decisions.List(ctx, selector)
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("delete the PlacementDecisions of Placement %s: %v", m.placement, err)
	}
}

// patchPolicy applies a JSON merge patch to a policy, as kubectl patch --type=merge
// does, and returns the policy as patched.
func (f *fleet) patchPolicy(t *testing.T, ns, name string, patch map[string]any) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Patch(t.Context(), name, types.MergePatchType, b, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch policy %s with %s: %v", name, b, err)
	}
	return p
}

// forceRemove sets the policy's force-remove annotation, as
// kubectl annotate --overwrite does.
func (f *fleet) forceRemove(t *testing.T, ns, policy, clusters string) {
	t.Helper()
	f.patchPolicy(t, ns, policy, map[string]any{"metadata": map[string]any{"annotations": map[string]any{trafficv1alpha1.ForceRemoveAnnotation: clusters}}})
}

// eventCount counts the times an event with the reason, whose note mentions mention,
// was recorded in ns: an event repeated as a series counts for each time.
func (f *fleet) eventCount(t *testing.T, ns, reason, mention string) int {
	t.Helper()
	list, err := f.Kube.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Reason != reason || !strings.Contains(e.Note, mention) {
			continue
		}
		if e.Series != nil && e.Series.Count > 1 {
			n += int(e.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// throughout checks a state for d, at every poll, and fails the test at the first
// poll at which check returns an error. That something does not happen is a property
// over time: it is checked for a bounded period long enough for it to have happened.
func throughout(t *testing.T, d time.Duration, check func(ctx context.Context) error) {
	t.Helper()
	var failed error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, d, true, func(ctx context.Context) (bool, error) {
		failed = check(ctx)
		return failed != nil, nil
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if !wait.Interrupted(err) {
		t.Fatal(err)
	}
}

// wantLeftNotBefore checks that the last change the proxy went through, cluster1
// leaving it, came no sooner than at; why, a format of at, says what happened then.
func wantLeftNotBefore(t *testing.T, seen []clusterSighting, at time.Time, why string) {
	t.Helper()
	if n := len(seen); n > 0 && seen[n-1].at.Before(at) {
		t.Errorf("cluster1 left the proxy at %s, "+why, seen[n-1].at.Format(time.StampMilli), at.Format(time.StampMilli))
	}
}

// removals is the manager's traffic_migration_removals_total of the policy for reason.
func (m *migration) removals(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, reason string) float64 {
	t.Helper()
	return manager.metricValue(t, "traffic_migration_removals_total", map[string]string{"namespace": m.ns, "policy": p.Name, "reason": reason})
}

// wantRemovalRecorded checks that cluster1's removal for reason was recorded, once:
// its event, one removal note, and the policy's removals metric for reason past
// before, its value ahead of the removal.
func (m *migration) wantRemovalRecorded(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, reason string, before float64) {
	t.Helper()
	m.f.waitForEventNote(t, m.ns, reason, m.c1, 10*time.Second)
	if notes := m.f.removalNotes(t, m.ns, m.c1); len(notes) != 1 {
		t.Errorf("want one removal of cluster1 recorded, got %v", notes)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return m.removals(t, p, reason) > before, nil
	})
	if err != nil {
		t.Errorf("traffic_migration_removals_total{reason=%q} stayed at %v", reason, before)
	}
}

// wantSightings fails the test unless the watch saw exactly the states want, in order:
// a flap, a missed removal or one too many shows as a state too many or too few.
func wantSightings(t *testing.T, seen []clusterSighting, want ...[]string) {
	t.Helper()
	for i := range want {
		want[i] = slices.Sorted(slices.Values(want[i]))
	}
	if !slices.EqualFunc(seen, want, func(s clusterSighting, w []string) bool { return slices.Equal(s.clusters, w) }) {
		t.Errorf("the proxy's clusters went through:\n%s\nwant exactly %v", sightingList(seen), want)
	}
}
