// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	kevents "k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	"open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/factory"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// The tests below run a sync, let some of the caches see its writes and not others
// (as separate watches deliver them), and run the next sync: it must wait for the
// caches and write nothing, then decide as if every cache had seen them.

// TestStaleDecisionsAfterARemoval: a sync removes c1 from the proxy and records it as
// Removed; the next sync reads the new policy status but the proxy decisions from
// before the removal. It must not take c1 for a cluster that just left the real
// Placement: no new drain, no Draining event, no lost Removed row, no proxy Placement
// status counting c1 again.
func TestStaleDecisionsAfterARemoval(t *testing.T) {
	h := newLagHarness(t, lagPolicy(draining("c1", 3), active("c2")),
		[]string{"c2"}, []decision.Group{{Clusters: []string{"c1", "c2"}}}, "c1", "c2")

	h.sync()
	if got := clustersOf(h.proxyDecisions()); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("after the removal the proxy lists %v, want [c2]: the test no longer removes c1", got)
	}
	removed := h.removedRow("c1")

	h.syncBehindDecisions()
	h.expectSettled("c1", removed)

	h.observe(h.informers.Decisions.Informer())
	h.sync()
	h.expectSettled("c1", removed)
}

// TestStaleDecisionsAfterADelete: a sync removes b, the last cluster of the proxy's
// second decision group, and deletes that group's PlacementDecision; the next sync
// reads a decision cache that still has it. It must not remove b a second time.
func TestStaleDecisionsAfterADelete(t *testing.T) {
	h := newLagHarness(t, lagPolicy(active("a"), draining("b", 3)),
		[]string{"a"}, []decision.Group{{Clusters: []string{"a"}}, {Index: 1, Clusters: []string{"b"}}}, "a", "b")

	h.sync()
	if got := len(h.api.decisions(t, lagNS)); got != 2 { // the real one and the proxy's
		t.Fatalf("after the removal there are %d PlacementDecisions, want 2: the test no longer deletes one", got)
	}
	removed := h.removedRow("b")

	h.syncBehindDecisions()
	h.expectSettled("b", removed)
}

// TestStalePolicyAfterADrainReset: c1 comes back into the real Placement, so a sync
// resets its drain (rule 5); then it leaves again, and the next sync reads the policy
// status from before the reset, where c1 had drained long enough and passed its
// checks. It must write nothing until the policy's cache shows the reset, then start
// c1's drain over, not remove it.
func TestStalePolicyAfterADrainReset(t *testing.T) {
	h := newLagHarness(t, lagPolicy(draining("c1", 3), active("c2")),
		[]string{"c1", "c2"}, []decision.Group{{Clusters: []string{"c1", "c2"}}}, "c1", "c2")

	h.sync()
	if got := h.row("c1"); got.Phase != trafficv1alpha1.ClusterActive {
		t.Fatalf("c1 back in the real Placement is %s, want Active", got.Phase)
	}
	h.takeEvents()

	h.clock.Step(time.Second)
	real := h.api.decision(t, lagNS, proxy.DecisionName("gw", 1))
	real.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "c2"}}
	if _, err := h.api.client.ClusterV1beta1().PlacementDecisions(lagNS).UpdateStatus(context.Background(), real, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.observe(h.informers.Decisions.Informer(), h.informers.Placements.Informer())
	err := h.ctrl.Sync(context.Background(), h.ctrl.SyncContext(), lagNS+"/p")
	if got := clustersOf(h.proxyDecisions()); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("the proxy lists %v, want [c1 c2]: a sync that read the policy from before the reset removed c1", got)
	}
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := h.row("c1"); got.Phase != trafficv1alpha1.ClusterActive {
		t.Fatalf("c1 is %s after a sync that read the policy from before the reset, want it Active as the reset left it: nothing is written while a cache is behind", got.Phase)
	}

	h.observe(h.informers.Policies.Informer())
	h.sync()
	if got := clustersOf(h.proxyDecisions()); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("the proxy lists %v, want [c1 c2]: c1's drain was reset and has just started again", got)
	}
	row := h.row("c1")
	if row.Phase != trafficv1alpha1.ClusterDraining || row.ConsecutiveSuccesses != 0 || !row.DrainStartTime.Equal(&metav1.Time{Time: h.clock.Now()}) {
		t.Errorf("c1's row is %s since %v with %d successes, want Draining since now (%v) with none", row.Phase, row.DrainStartTime, row.ConsecutiveSuccesses, h.clock.Now())
	}
	for _, e := range h.takeEvents() {
		if strings.Contains(e, "Removed cluster") {
			t.Errorf("event %q: c1 must not be removed", e)
		}
	}
}

// TestStaleCachesAfterCreatingTheProxy: the first sync of a policy creates the proxy
// Placement and its decision; the next sync reads the new policy status while the
// other caches have seen neither. It must not create them again and fail.
func TestStaleCachesAfterCreatingTheProxy(t *testing.T) {
	h := newLagHarness(t, lagPolicy(), []string{"c1"}, nil, "c1")

	h.sync()
	if got := clustersOf(h.proxyDecisions()); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("the new proxy lists %v, want [c1]", got)
	}
	h.takeEvents()

	h.observe(h.informers.Policies.Informer())
	h.sync()
	if c := meta.FindStatusCondition(h.policy().Status.Conditions, trafficv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready is %+v, want True", c)
	}
	if events := h.takeEvents(); len(events) > 0 {
		t.Errorf("a sync that changed nothing recorded events: %q", events)
	}
}

// TestExpectations: when a cache shows a write, by its copy at sync time or by a
// watch event, and how long a sync waits for it.
func TestExpectations(t *testing.T) {
	obj := func(uid, rv string) *clusterv1beta1.PlacementDecision {
		return &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", UID: types.UID(uid), ResourceVersion: rv}}
	}
	wrote := func(o *clusterv1beta1.PlacementDecision) func(*expectations) {
		return func(e *expectations) { e.wrote("ns/p", kindDecision, o) }
	}
	deleted := func(o *clusterv1beta1.PlacementDecision) func(*expectations) {
		return func(e *expectations) { e.deleted("ns/p", kindDecision, o) }
	}
	tests := map[string]struct {
		write  func(*expectations)
		cached *clusterv1beta1.PlacementDecision // nil: not in the cache
		age    time.Duration
		wait   bool // the sync waits
	}{
		"nothing written":               {cached: obj("a", "3")},
		"written, cache older":          {write: wrote(obj("a", "5")), cached: obj("a", "3"), wait: true},
		"written, cache caught up":      {write: wrote(obj("a", "5")), cached: obj("a", "5")},
		"written, cache newer":          {write: wrote(obj("a", "5")), cached: obj("a", "7")},
		"created, not in the cache":     {write: wrote(obj("b", "5")), wait: true},
		"created, cache has an old one": {write: wrote(obj("b", "5")), cached: obj("a", "3"), wait: false},
		"written too long ago":          {write: wrote(obj("a", "5")), cached: obj("a", "3"), age: expectationTTL + time.Second},
		"versions not comparable":       {write: wrote(obj("a", "x5")), cached: obj("a", "x3")},
		"deleted, cache has it":         {write: deleted(obj("a", "5")), cached: obj("a", "5"), wait: true},
		"deleted, cache has older one":  {write: deleted(obj("b", "5")), cached: obj("a", "3"), wait: true},
		"deleted, cache caught up":      {write: deleted(obj("a", "5"))},
		"deleted, cache has newer one":  {write: deleted(obj("a", "5")), cached: obj("c", "9")},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			e := newExpectations(clk)
			if tt.write != nil {
				tt.write(e)
			}
			clk.SetTime(clk.Now().Add(tt.age))
			lookup := func(objectRef) (metav1.Object, bool) { return tt.cached, tt.cached != nil }
			if wait := e.pending("ns/p", lookup); (wait > 0) != tt.wait || wait > expectationTTL {
				t.Errorf("the sync waits %v, want waiting %v (at most %v)", wait, tt.wait, expectationTTL)
			}
			if _, remembered := e.byObject[objectRef{kindDecision, "ns", "d"}]; remembered != tt.wait {
				t.Errorf("still awaited after the sync: %v, want %v", remembered, tt.wait)
			}
		})
	}

	t.Run("a watch event shows the write and wakes the policy", func(t *testing.T) {
		e := newExpectations(clocktesting.NewFakePassiveClock(time.Now()))
		var woken []string
		e.wake = func(key string) { woken = append(woken, key) }
		e.wrote("ns/p", kindDecision, obj("a", "5"))
		e.observe(kindDecision, obj("a", "4"), false)
		if len(woken) != 0 || len(e.byObject) != 1 {
			t.Fatalf("an older copy woke %v and left %d awaited: want nothing woken and the write awaited", woken, len(e.byObject))
		}
		e.observe(kindPlacement, obj("a", "6"), false)
		if len(woken) != 0 {
			t.Fatalf("an object of another kind woke %v", woken)
		}
		// Created, then deleted by someone else before the sync looks: the deletion's
		// event shows the write, though no cache ever holds it.
		e.observe(kindDecision, cache.DeletedFinalStateUnknown{Key: "ns/d", Obj: obj("a", "5")}, false)
		if !slices.Equal(woken, []string{"ns/p"}) || len(e.byObject) != 0 || len(e.byPolicy) != 0 {
			t.Errorf("the deletion woke %v and left %d awaited, want ns/p woken and nothing awaited", woken, len(e.byObject))
		}
	})

	t.Run("forget", func(t *testing.T) {
		e := newExpectations(clocktesting.NewFakePassiveClock(time.Now()))
		e.wrote("ns/p", kindDecision, obj("a", "5"))
		e.wrote("ns/q", kindPolicy, obj("b", "5"))
		e.forget("ns/p")
		if len(e.byObject) != 1 || len(e.byPolicy) != 1 {
			t.Errorf("forget left %v, want only ns/q's write", e.byObject)
		}
	})
}

const lagNS = "ns"

// lagHarness runs the controller against fake APIs that keep resourceVersions, through
// informers that are never started: the test copies into each cache what it has seen.
type lagHarness struct {
	t            *testing.T
	api          *fakeAPI
	policyClient *trafficfake.Clientset
	addonClient  *addonfake.Clientset
	informers    Informers
	ctrl         factory.Controller
	clock        *clocktesting.FakeClock
	events       *kevents.FakeRecorder
}

// newLagHarness makes a harness with the policy, its real Placement "gw" listing
// realClusters, the policy's proxy Placement "gw-proxy" with proxyGroups (none when
// nil), and ManagedClusters with the target Gateway ready for each of clusters; every
// cache has seen them.
func newLagHarness(t *testing.T, policy *trafficv1alpha1.TrafficMigrationPolicy, realClusters []string, proxyGroups []decision.Group, clusters ...string) *lagHarness {
	t.Helper()
	h := &lagHarness{
		t:            t,
		api:          &fakeAPI{client: fake.NewSimpleClientset()},
		policyClient: trafficfake.NewSimpleClientset(),
		addonClient:  addonfake.NewSimpleClientset(),
		clock:        clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		events:       kevents.NewFakeRecorder(100),
	}
	h.api.client.PrependReactor("*", "placements", h.api.reactor(h.api.client.Tracker()))
	h.api.client.PrependReactor("*", "placementdecisions", h.api.reactor(h.api.client.Tracker()))
	h.policyClient.PrependReactor("*", "trafficmigrationpolicies", h.api.reactor(h.policyClient.Tracker()))

	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.policyClient.TrafficV1alpha1().TrafficMigrationPolicies(lagNS).Create(ctx, policy, metav1.CreateOptions{}))
	must(h.api.client.ClusterV1beta1().Placements(lagNS).Create(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: lagNS}}, metav1.CreateOptions{}))
	decisions := proxy.Decisions(lagNS, "gw", []decision.Group{{Clusters: realClusters}})
	if proxyGroups != nil {
		must(h.api.client.ClusterV1beta1().Placements(lagNS).Create(ctx, proxyPlacementOf(lagNS, "gw-proxy", policy.Name), metav1.CreateOptions{}))
		// As the manager writes them: labelled with the policy's name.
		for _, d := range proxy.Decisions(lagNS, "gw-proxy", proxyGroups) {
			d.Labels[trafficv1alpha1.PolicyLabel] = policy.Name
			decisions = append(decisions, d)
		}
	}
	for _, d := range decisions {
		must(h.api.client.ClusterV1beta1().PlacementDecisions(lagNS).Create(ctx, d, metav1.CreateOptions{}))
	}
	gateway := trafficv1alpha1.GatewayConditionType(policy.TargetNamespace(), policy.Spec.TargetRef.Name)
	for _, name := range clusters {
		must(h.api.client.ClusterV1().ManagedClusters().Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
		addon := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: name}}
		addon.Status.Conditions = []metav1.Condition{
			{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue},
			{Type: gateway, Status: metav1.ConditionTrue},
		}
		must(h.addonClient.AddonV1alpha1().ManagedClusterAddOns(name).Create(ctx, addon, metav1.CreateOptions{}))
	}

	clusterInformers := clusterinformers.NewSharedInformerFactory(h.api.client, 0)
	h.informers = Informers{
		Policies:        trafficinformers.NewSharedInformerFactory(h.policyClient, 0).Traffic().V1alpha1().TrafficMigrationPolicies(),
		Placements:      clusterInformers.Cluster().V1beta1().Placements(),
		Decisions:       clusterInformers.Cluster().V1beta1().PlacementDecisions(),
		ManagedClusters: clusterInformers.Cluster().V1().ManagedClusters().Informer(),
		Addons:          addoninformers.NewSharedInformerFactory(h.addonClient, 0).Addon().V1alpha1().ManagedClusterAddOns(),
	}
	ctrl, err := NewController(h.policyClient, h.api.client, kubefake.NewSimpleClientset(), h.informers, h.events, nil, Limits{}, nil, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.ctrl = ctrl
	h.observe(h.informers.Policies.Informer(), h.informers.Placements.Informer(), h.informers.Decisions.Informer(),
		h.informers.ManagedClusters, h.informers.Addons.Informer())
	return h
}

// lagPolicy is a policy of Placement "gw" whose status lists rows.
func lagPolicy(rows ...trafficv1alpha1.ClusterStatus) *trafficv1alpha1.TrafficMigrationPolicy {
	p := testPolicy()
	p.UID = "policy-uid"
	p.Spec.TargetRef.Name = "gw"
	p.Spec.PrometheusSecret.Name = "prometheus"
	p.Status.Clusters = rows
	return p
}

func active(name string) trafficv1alpha1.ClusterStatus {
	return trafficv1alpha1.ClusterStatus{Name: name, Phase: trafficv1alpha1.ClusterActive}
}

// draining is the row of a cluster that has drained for 10 minutes, checked 5 s ago.
func draining(name string, successes int32) trafficv1alpha1.ClusterStatus {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return trafficv1alpha1.ClusterStatus{
		Name: name, Phase: trafficv1alpha1.ClusterDraining,
		DrainStartTime:       &metav1.Time{Time: now.Add(-10 * time.Minute)},
		LastEvaluationTime:   &metav1.Time{Time: now.Add(-5 * time.Second)},
		LastResult:           trafficv1alpha1.EvaluationPass,
		ConsecutiveSuccesses: successes,
	}
}

// observe lets the informers' caches see what the API holds now.
func (h *lagHarness) observe(informers ...cache.SharedIndexInformer) {
	h.t.Helper()
	ctx := context.Background()
	for _, informer := range informers {
		var list runtime.Object
		var err error
		switch informer {
		case h.informers.Policies.Informer():
			list, err = h.policyClient.TrafficV1alpha1().TrafficMigrationPolicies("").List(ctx, metav1.ListOptions{})
		case h.informers.Placements.Informer():
			list, err = h.api.client.ClusterV1beta1().Placements("").List(ctx, metav1.ListOptions{})
		case h.informers.Decisions.Informer():
			list, err = h.api.client.ClusterV1beta1().PlacementDecisions("").List(ctx, metav1.ListOptions{})
		case h.informers.ManagedClusters:
			list, err = h.api.client.ClusterV1().ManagedClusters().List(ctx, metav1.ListOptions{})
		case h.informers.Addons.Informer():
			list, err = h.addonClient.AddonV1alpha1().ManagedClusterAddOns("").List(ctx, metav1.ListOptions{})
		}
		if err != nil {
			h.t.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			h.t.Fatal(err)
		}
		objs := make([]any, 0, len(items))
		for _, item := range items {
			// The ManagedClusters as the policy-only manager caches them: metadata alone.
			if o, err := meta.Accessor(item); err == nil && informer == h.informers.ManagedClusters {
				item = meta.AsPartialObjectMetadata(o)
			}
			objs = append(objs, item)
		}
		if err := informer.GetIndexer().Replace(objs, ""); err != nil {
			h.t.Fatal(err)
		}
	}
}

// sync runs one sync of the policy, which must succeed.
func (h *lagHarness) sync() {
	h.t.Helper()
	if err := h.ctrl.Sync(context.Background(), h.ctrl.SyncContext(), lagNS+"/p"); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

// removedRow is name's row after a sync that removed it, which must be Removed; the
// events of that sync are taken.
func (h *lagHarness) removedRow(name string) trafficv1alpha1.ClusterStatus {
	h.t.Helper()
	removed := h.row(name)
	if removed.Phase != trafficv1alpha1.ClusterRemoved {
		h.t.Fatalf("after the removal %s is %s, want Removed", name, removed.Phase)
	}
	h.takeEvents()
	return removed
}

// syncBehindDecisions runs the next sync a second later, after the policy's and the
// Placements' caches saw the last sync's writes and the decisions' cache did not.
func (h *lagHarness) syncBehindDecisions() {
	h.t.Helper()
	h.clock.Step(time.Second)
	h.observe(h.informers.Policies.Informer(), h.informers.Placements.Informer())
	h.sync()
}

// expectSettled checks, after a sync that had nothing new to decide, that name's row
// is still removed, as it was, that the proxy and its Placement do not list it and
// that no event was recorded.
func (h *lagHarness) expectSettled(name string, removed trafficv1alpha1.ClusterStatus) {
	h.t.Helper()
	if got := h.row(name); !reflect.DeepEqual(got, removed) {
		h.t.Errorf("%s's row is %+v, want it as the removal left it: %+v", name, got, removed)
	}
	listed := clustersOf(h.proxyDecisions())
	if slices.Contains(listed, name) {
		h.t.Errorf("the proxy lists %v, with the removed %s", listed, name)
	}
	if got := h.api.placement(h.t, lagNS, "gw-proxy").Status.NumberOfSelectedClusters; got != int32(len(listed)) {
		h.t.Errorf("the proxy Placement counts %d clusters, want %d", got, len(listed))
	}
	if events := h.takeEvents(); len(events) > 0 {
		h.t.Errorf("a sync with nothing new recorded events: %q", events)
	}
}

func (h *lagHarness) policy() *trafficv1alpha1.TrafficMigrationPolicy {
	h.t.Helper()
	p, err := h.policyClient.TrafficV1alpha1().TrafficMigrationPolicies(lagNS).Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// row is the policy's status row of a cluster, as the API holds it.
func (h *lagHarness) row(name string) trafficv1alpha1.ClusterStatus {
	h.t.Helper()
	for _, row := range h.policy().Status.Clusters {
		if row.Name == name {
			return row
		}
	}
	h.t.Fatalf("the policy's status has no row for %s", name)
	return trafficv1alpha1.ClusterStatus{}
}

// proxyDecisions are the proxy's PlacementDecisions as the API holds them.
func (h *lagHarness) proxyDecisions() []*clusterv1beta1.PlacementDecision {
	var out []*clusterv1beta1.PlacementDecision
	for _, d := range h.api.decisions(h.t, lagNS) {
		if d.Labels[clusterv1beta1.PlacementLabel] == "gw-proxy" {
			out = append(out, d)
		}
	}
	return out
}

// takeEvents returns the events recorded since the last call.
func (h *lagHarness) takeEvents() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (api *fakeAPI) decision(t *testing.T, ns, name string) *clusterv1beta1.PlacementDecision {
	t.Helper()
	d, err := api.client.ClusterV1beta1().PlacementDecisions(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRemovalRecordedWhenThePolicyChangedMeanwhile: someone changes the policy (a
// label here) after the sync read it and before its status write; the removal the
// sync made must still be recorded (Removed row, event), and a name added to the
// force-remove annotation meanwhile must stay in it.
func TestRemovalRecordedWhenThePolicyChangedMeanwhile(t *testing.T) {
	p := lagPolicy(draining("c1", 3), active("c2"))
	p.Annotations = map[string]string{trafficv1alpha1.ForceRemoveAnnotation: "c1"}
	h := newLagHarness(t, p, []string{"c2"}, []decision.Group{{Clusters: []string{"c1", "c2"}}}, "c1", "c2", "c3")

	// The API's policy moves on; the cache keeps the version the sync will read.
	changed := h.policy()
	changed.Labels = map[string]string{"team": "edge"}
	changed.Annotations[trafficv1alpha1.ForceRemoveAnnotation] = "c1,c3"
	if _, err := h.policyClient.TrafficV1alpha1().TrafficMigrationPolicies(lagNS).Update(context.Background(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync()

	if got := clustersOf(h.proxyDecisions()); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("the proxy lists %v, want [c2]: the test no longer removes c1", got)
	}
	if got := h.row("c1"); got.Phase != trafficv1alpha1.ClusterRemoved {
		t.Errorf("c1's row is %s, want Removed: the removal went unrecorded", got.Phase)
	}
	events := strings.Join(h.takeEvents(), "\n")
	if !strings.Contains(events, "Removed cluster c1") {
		t.Errorf("no event records c1's removal; events:\n%s", events)
	}
	after := h.policy()
	if got := after.Annotations[trafficv1alpha1.ForceRemoveAnnotation]; got != "c3" {
		t.Errorf("force-remove annotation is %q, want %q: c1 acted on, c3 added meanwhile kept", got, "c3")
	}
	if after.Labels["team"] != "edge" {
		t.Errorf("the label set meanwhile is gone: %v", after.Labels)
	}
}
