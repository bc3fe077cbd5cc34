// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package gather

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// hub is a Reader of objects in memory.
type hub struct {
	placements map[string]*clusterv1beta1.Placement
	decisions  map[string][]string // clusters by Placement
	clusters   sets.Set[string]
	addons     map[string]*addonv1alpha1.ManagedClusterAddOn
	listErr    error
}

func notFound(name string) error { return apierrors.NewNotFound(schema.GroupResource{}, name) }

func (h *hub) Placement(_ context.Context, _, name string) (*clusterv1beta1.Placement, error) {
	if p, ok := h.placements[name]; ok {
		return p, nil
	}
	return nil, notFound(name)
}

func (h *hub) Decisions(_ context.Context, _, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	if h.listErr != nil {
		return nil, h.listErr
	}
	clusters, ok := h.decisions[placement]
	if !ok {
		return nil, nil
	}
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: placement + "-decision-1"}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return []*clusterv1beta1.PlacementDecision{d}, nil
}

func (h *hub) ClusterExists(_ context.Context, name string) (bool, error) {
	return h.clusters.Has(name), nil
}

func (h *hub) Addon(_ context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	if a, ok := h.addons[cluster]; ok {
		return a, nil
	}
	return nil, notFound(cluster)
}

// agent is the add-on of a cluster whose agent reports the target Gateway ready.
func agent(labels string) *addonv1alpha1.ManagedClusterAddOn {
	a := &addonv1alpha1.ManagedClusterAddOn{}
	for _, c := range []metav1.Condition{
		{Type: trafficv1alpha1.ConditionAddonAvailable, Status: metav1.ConditionTrue},
		{Type: trafficv1alpha1.GatewayConditionType("ns", "gw"), Status: metav1.ConditionTrue},
		{Type: trafficv1alpha1.ConditionClusterLabels, Status: metav1.ConditionTrue, Message: labels},
	} {
		a.Status.Conditions = append(a.Status.Conditions, c)
	}
	return a
}

func testPolicy(rows ...trafficv1alpha1.ClusterStatus) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns",
			Annotations: map[string]string{trafficv1alpha1.ForceRemoveAnnotation: "c9, c8"}},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef: trafficv1alpha1.PlacementReference{Name: "real"},
			TargetRef:    trafficv1alpha1.GatewayReference{Name: "gw"},
		},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: rows},
	}
}

// TestReadRestoresDrainingRows: the clusters the status says drain are read too, even
// when the proxy lost them (rule 12), so that the decision can keep them and their
// checks have their agents' labels.
func TestReadRestoresDrainingRows(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	h := &hub{
		placements: map[string]*clusterv1beta1.Placement{"real": {}},
		decisions:  map[string][]string{"real": {"c2"}, "real-proxy": {"c2"}},
		clusters:   sets.New("c1", "c2"),
		addons:     map[string]*addonv1alpha1.ManagedClusterAddOn{"c1": agent("cluster=east"), "c2": agent("cluster=west")},
	}
	start := metav1.NewTime(now.Add(-time.Hour))
	p := testPolicy(
		trafficv1alpha1.ClusterStatus{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: &start},
		trafficv1alpha1.ClusterStatus{Name: "c3", Phase: trafficv1alpha1.ClusterRemoved},
	)
	got := Read(context.Background(), h, p, decision.Policy{Interval: time.Second}, now)
	if got.RealProblem != "" || !got.Input.RealKnown || got.ProxyErr != nil {
		t.Fatalf("real decisions not known: %q, %v", got.RealProblem, got.ProxyErr)
	}
	if want := []string{"c1", "c2"}; !reflect.DeepEqual(got.Clusters(), want) {
		t.Errorf("clusters %v, want %v: the draining row's cluster, not the removed one's", got.Clusters(), want)
	}
	if !got.Input.GatewayReady.Equal(sets.New("c1", "c2")) || got.Labels["c1"]["cluster"] != "east" {
		t.Errorf("agents: ready %v, labels %v; want c1's read though the proxy lost it", sets.List(got.Input.GatewayReady), got.Labels)
	}
	if !got.Input.ManagedClusters.Equal(sets.New("c1", "c2")) {
		t.Errorf("existing clusters %v: c3 is gone", sets.List(got.Input.ManagedClusters))
	}
	if !got.Input.Now.Equal(now) || got.Input.Policy.Interval != time.Second || !reflect.DeepEqual(got.Input.ForceRemove, []string{"c8", "c9"}) {
		t.Errorf("input: now %v, policy %+v, force-remove %v", got.Input.Now, got.Input.Policy, got.Input.ForceRemove)
	}
	if out := decision.Decide(got.Input); !reflect.DeepEqual(out.Restored, []string{"c1"}) {
		t.Errorf("the decision restores %v, want c1", out.Restored)
	}
}

// TestReadRealUnknown: the real decisions are not known when the Placement is missing,
// being deleted or without decisions, or when they cannot be read; the proxy's read
// error is reported apart.
func TestReadRealUnknown(t *testing.T) {
	deleting := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}}}
	for name, tc := range map[string]struct {
		h    *hub
		want string
	}{
		"missing":        {&hub{}, "Placement real not found"},
		"being deleted":  {&hub{placements: map[string]*clusterv1beta1.Placement{"real": deleting}}, "Placement real is being deleted"},
		"no decisions":   {&hub{placements: map[string]*clusterv1beta1.Placement{"real": {}}}, "Placement real has no PlacementDecisions yet"},
		"cannot be read": {&hub{placements: map[string]*clusterv1beta1.Placement{"real": {}}, listErr: errors.New("boom")}, "Placement real's decisions cannot be read (boom)"},
	} {
		t.Run(name, func(t *testing.T) {
			got := Read(context.Background(), tc.h, testPolicy(), decision.Policy{}, time.Now())
			if got.Input.RealKnown || !strings.Contains(got.RealProblem, tc.want) {
				t.Errorf("real known %v, problem %q; want %q", got.Input.RealKnown, got.RealProblem, tc.want)
			}
			if (tc.h.listErr != nil) != (got.ProxyErr != nil) {
				t.Errorf("proxy error %v", got.ProxyErr)
			}
		})
	}
}
