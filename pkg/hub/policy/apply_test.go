// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// TestApplyNeverDeletesFromAStaleView: the informer's cache may not have seen the
// controller's own last write when the next sync runs. Here the proxy's second
// decision (group 1) listed y, draining, and the previous sync added x to it (x joined
// the real Placement's group 1); then x left the real Placement again and y's
// ManagedCluster was deleted. The next sync decides from a cache that still shows
// group 1 as [y]: y goes (rule 6), nothing is left in group 1, so it deletes the
// decision. That delete must fail, as every write from a stale view does: x is in the
// proxy and must drain (rule 2), and deleting the decision would drop it at once. The
// sync is retried with a fresh cache.
func TestApplyNeverDeletesFromAStaleView(t *testing.T) {
	const ns, proxyName = "ns", "gw-proxy"
	c, api := newApplyController(t, proxyPlacementOf(ns, proxyName, "p"),
		proxy.Decisions(ns, proxyName, []decision.Group{{Index: 0, Clusters: []string{"a"}}, {Index: 1, Clusters: []string{"y"}}}))
	placement := api.placement(t, ns, proxyName)

	// The previous sync's write, which the cache has not seen yet.
	stale := api.decisions(t, ns)
	fresh := stale[1].DeepCopy()
	fresh.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "x"}, {ClusterName: "y"}}
	if _, err := c.clusterClient.ClusterV1beta1().PlacementDecisions(ns).UpdateStatus(context.Background(), fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	policy := testPolicy()
	policy.Spec.ProxyPlacementName = proxyName
	st := &state{proxyName: proxyName, proxy: placement, proxyDecisions: stale}
	out := decision.Decide(decision.Input{
		Now:             time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Policy:          decision.PolicyFromSpec(&policy.Spec),
		RealKnown:       true,
		Real:            []decision.Group{{Index: 0, Clusters: []string{"a"}}},
		Proxy:           proxy.Groups(stale),
		ManagedClusters: sets.New("a", "x"),
	})
	if want := []decision.Group{{Index: 0, Clusters: []string{"a"}}}; !reflect.DeepEqual(out.Proxy, want) {
		t.Fatalf("the stale view decides %+v, want %+v: the test no longer makes a decision object go", out.Proxy, want)
	}
	if err := c.apply(context.Background(), policy, st, out.Proxy); !apierrors.IsConflict(err) {
		t.Errorf("apply from a stale view: got error %v, want a conflict", err)
	}
	if got := clustersOf(api.decisions(t, ns)); !slices.Equal(got, []string{"a", "x", "y"}) {
		t.Fatalf("after a sync from a stale view the proxy lists %v, want [a x y]: x must drain, not vanish", got)
	}
}

// TestAdoptionWritesTheProxyStatus: a policy that adopts a proxy left by a deleted
// policy (rule 11), while the real Placement gained a cluster, writes the proxy's
// decisions and then its Placement's status in the same sync. The status write must
// carry the resourceVersion the adoption left, not the one read before it.
func TestAdoptionWritesTheProxyStatus(t *testing.T) {
	const ns, proxyName = "ns", "gw-proxy"
	placement := proxyPlacementOf(ns, proxyName, "deleted-policy")
	placement.Status.NumberOfSelectedClusters = 1
	c, api := newApplyController(t, placement, proxy.Decisions(ns, proxyName, []decision.Group{{Clusters: []string{"a"}}}))
	placement = api.placement(t, ns, proxyName)

	policy := testPolicy()
	policy.Spec.ProxyPlacementName = proxyName
	st := &state{proxyName: proxyName, proxy: placement, proxyDecisions: api.decisions(t, ns)}
	if err := c.apply(context.Background(), policy, st, []decision.Group{{Clusters: []string{"a", "b"}}}); err != nil {
		t.Fatalf("apply with adoption: %v", err)
	}
	got := api.placement(t, ns, proxyName)
	if got.Labels[trafficv1alpha1.PolicyLabel] != policy.Name {
		t.Errorf("proxy Placement labelled %q, want adopted by %q", got.Labels[trafficv1alpha1.PolicyLabel], policy.Name)
	}
	if got.Status.NumberOfSelectedClusters != 2 {
		t.Errorf("proxy Placement status counts %d clusters, want 2", got.Status.NumberOfSelectedClusters)
	}
	if clusters := clustersOf(api.decisions(t, ns)); !slices.Equal(clusters, []string{"a", "b"}) {
		t.Errorf("proxy lists %v, want [a b]", clusters)
	}
}

func proxyPlacementOf(ns, name, policy string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: "proxy-uid",
		Labels:      map[string]string{trafficv1alpha1.PolicyLabel: policy},
		Annotations: map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"},
	}}
}

// fakeAPI is a fake cluster clientset that keeps resourceVersions as an API server
// does: every write gives the object a new one, and an update, a patch or a delete
// that names another one than the object has fails with a conflict. Its reactor can
// serve other fake clientsets too, with versions from the same counter, as one etcd's.
type fakeAPI struct {
	client *fake.Clientset
	rv     int
}

// newApplyController returns a controller that writes to a fakeAPI holding a proxy
// Placement and its decisions.
func newApplyController(t *testing.T, placement *clusterv1beta1.Placement, decisions []*clusterv1beta1.PlacementDecision) (*Controller, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{client: fake.NewSimpleClientset()}
	api.client.PrependReactor("*", "placements", api.reactor(api.client.Tracker()))
	api.client.PrependReactor("*", "placementdecisions", api.reactor(api.client.Tracker()))
	ctx := context.Background()
	if _, err := api.client.ClusterV1beta1().Placements(placement.Namespace).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range decisions {
		created, err := api.client.ClusterV1beta1().PlacementDecisions(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
		if err == nil {
			// As the controller writes them: the clusters through the status.
			created.Status = d.Status
			_, err = api.client.ClusterV1beta1().PlacementDecisions(d.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &Controller{clusterClient: api.client, expectations: newExpectations(clock.RealClock{})}, api
}

func (api *fakeAPI) next() string {
	api.rv++
	return strconv.Itoa(api.rv)
}

// reactor serves the objects of tracker.
func (api *fakeAPI) reactor(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		return api.react(tracker, action)
	}
}

func (api *fakeAPI) react(tracker k8stesting.ObjectTracker, action k8stesting.Action) (bool, runtime.Object, error) {
	gvr, ns := action.GetResource(), action.GetNamespace()
	current := func(name string) (runtime.Object, metav1.Object, error) {
		obj, err := tracker.Get(gvr, ns, name)
		if err != nil {
			return nil, nil, err
		}
		m, err := meta.Accessor(obj)
		return obj, m, err
	}
	conflict := func(name string) error {
		return apierrors.NewConflict(gvr.GroupResource(), name, errors.New("the object has been modified"))
	}
	// By verb: an update action is a create action too, to Go's type switch.
	switch action.GetVerb() {
	case "create":
		obj := action.(k8stesting.CreateAction).GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		m.SetResourceVersion(api.next())
		if m.GetUID() == "" {
			m.SetUID(types.UID(fmt.Sprintf("uid-%s", m.GetResourceVersion())))
		}
		return true, obj, tracker.Create(gvr, obj, ns)
	case "update":
		obj := action.(k8stesting.UpdateAction).GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		_, cur, err := current(m.GetName())
		if err != nil {
			return true, nil, err
		}
		if m.GetResourceVersion() != cur.GetResourceVersion() {
			return true, nil, conflict(m.GetName())
		}
		m.SetUID(cur.GetUID())
		m.SetResourceVersion(api.next())
		return true, obj, tracker.Update(gvr, obj, ns)
	case "patch":
		a := action.(k8stesting.PatchAction)
		if a.GetPatchType() != types.MergePatchType {
			return true, nil, fmt.Errorf("the fake API takes merge patches only, not %s", a.GetPatchType())
		}
		obj, cur, err := current(a.GetName())
		if err != nil {
			return true, nil, err
		}
		var patch map[string]any
		if err := json.Unmarshal(a.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		if md, ok := patch["metadata"].(map[string]any); ok {
			if rv, ok := md["resourceVersion"].(string); ok && rv != "" && rv != cur.GetResourceVersion() {
				return true, nil, conflict(a.GetName())
			}
		}
		var doc map[string]any
		if b, err := json.Marshal(obj); err != nil {
			return true, nil, err
		} else if err := json.Unmarshal(b, &doc); err != nil {
			return true, nil, err
		}
		merged, err := json.Marshal(mergePatch(doc, patch))
		if err != nil {
			return true, nil, err
		}
		patched := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
		if err := json.Unmarshal(merged, patched); err != nil {
			return true, nil, err
		}
		m, err := meta.Accessor(patched)
		if err != nil {
			return true, nil, err
		}
		m.SetResourceVersion(api.next())
		return true, patched, tracker.Update(gvr, patched, ns)
	case "delete":
		a := action.(k8stesting.DeleteAction)
		_, cur, err := current(a.GetName())
		if err != nil {
			return true, nil, err
		}
		if p := a.GetDeleteOptions().Preconditions; p != nil {
			if (p.UID != nil && *p.UID != cur.GetUID()) || (p.ResourceVersion != nil && *p.ResourceVersion != cur.GetResourceVersion()) {
				return true, nil, conflict(a.GetName())
			}
		}
		return true, nil, tracker.Delete(gvr, ns, a.GetName())
	}
	return false, nil, nil
}

// mergePatch applies a JSON merge patch (RFC 7386) to doc.
func mergePatch(doc, patch map[string]any) map[string]any {
	if doc == nil {
		doc = map[string]any{}
	}
	for k, v := range patch {
		switch v := v.(type) {
		case nil:
			delete(doc, k)
		case map[string]any:
			sub, _ := doc[k].(map[string]any)
			doc[k] = mergePatch(sub, v)
		default:
			doc[k] = v
		}
	}
	return doc
}

func (api *fakeAPI) decisions(t *testing.T, ns string) []*clusterv1beta1.PlacementDecision {
	t.Helper()
	list, err := api.client.ClusterV1beta1().PlacementDecisions(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*clusterv1beta1.PlacementDecision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	slices.SortFunc(out, func(a, b *clusterv1beta1.PlacementDecision) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func (api *fakeAPI) placement(t *testing.T, ns, name string) *clusterv1beta1.Placement {
	t.Helper()
	p, err := api.client.ClusterV1beta1().Placements(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clustersOf is the sorted union of the clusters the decisions list, as a consumer
// reads them.
func clustersOf(ds []*clusterv1beta1.PlacementDecision) []string {
	var out []string
	for _, g := range proxy.Groups(ds) {
		out = append(out, g.Clusters...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestApplyLabelsAnEarlierReleasesDecisionsFirst: a proxy decision written by a release
// before the policy label gets the label alone, before its clusters change or it is
// deleted: the chart's admission policy lets the manager write only labelled decisions,
// and lets it add the label alone.
func TestApplyLabelsAnEarlierReleasesDecisionsFirst(t *testing.T) {
	const ns, proxyName = "ns", "gw-proxy"
	c, api := newApplyController(t, proxyPlacementOf(ns, proxyName, "p"),
		proxy.Decisions(ns, proxyName, []decision.Group{{Index: 0, Clusters: []string{"a", "b"}}, {Index: 1, Clusters: []string{"y"}}}))
	policy := testPolicy()
	policy.Spec.ProxyPlacementName = proxyName
	st := &state{proxyName: proxyName, proxy: api.placement(t, ns, proxyName), proxyDecisions: api.decisions(t, ns)}
	client := c.clusterClient.(*fake.Clientset)
	client.ClearActions()
	if err := c.apply(context.Background(), policy, st, []decision.Group{{Index: 0, Clusters: []string{"a"}}}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	var writes []string
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "placementdecisions" && a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, strings.TrimSuffix(a.GetVerb()+" "+a.GetSubresource(), " "))
		}
	}
	// decision-1: labelled, then b removed; decision-2: labelled, then deleted.
	if want := []string{"patch", "patch status", "patch", "delete"}; !slices.Equal(writes, want) {
		t.Errorf("writes to the decisions %q, want %q: the label first, alone", writes, want)
	}
	for _, d := range api.decisions(t, ns) {
		if d.Labels[trafficv1alpha1.PolicyLabel] != policy.Name {
			t.Errorf("decision %s labelled %v, want %s=%s", d.Name, d.Labels, trafficv1alpha1.PolicyLabel, policy.Name)
		}
	}
	if got := clustersOf(api.decisions(t, ns)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("the proxy lists %v, want [a]", got)
	}
}
