// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
)

func policy(ns, name, gateway string, rows ...trafficv1alpha1.ClusterStatus) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       trafficv1alpha1.TrafficMigrationPolicySpec{TargetRef: trafficv1alpha1.GatewayReference{Name: gateway}},
		Status:     trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: rows},
	}
}

func rowOf(cluster string, phase trafficv1alpha1.ClusterPhase) trafficv1alpha1.ClusterStatus {
	return trafficv1alpha1.ClusterStatus{Name: cluster, Phase: phase}
}

func TestDesired(t *testing.T) {
	tests := map[string]struct {
		policies    []*trafficv1alpha1.TrafficMigrationPolicy
		wantReason  string
		wantMessage string // empty: no condition
	}{
		"no policy": {},
		"active and removed rows drain nothing": {
			policies: []*trafficv1alpha1.TrafficMigrationPolicy{
				policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterActive)),
				policy("ns", "b", "gw", rowOf("c1", trafficv1alpha1.ClusterRemoved)),
			},
		},
		"one policy": {
			policies:    []*trafficv1alpha1.TrafficMigrationPolicy{policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterDraining), rowOf("c2", trafficv1alpha1.ClusterActive))},
			wantReason:  trafficv1alpha1.AddonReasonDraining,
			wantMessage: "draining for policy ns/a (Gateway ns/gw)",
		},
		"two policies, sorted, one held": {
			policies: []*trafficv1alpha1.TrafficMigrationPolicy{
				policy("ns", "b", "gw2", rowOf("c1", trafficv1alpha1.ClusterHeld)),
				policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterDraining)),
			},
			wantReason:  trafficv1alpha1.AddonReasonHeld,
			wantMessage: "draining for 2 policies: ns/a (Gateway ns/gw), ns/b (Gateway ns/gw2, held past its maximum drain duration)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Desired("c1", tc.policies)
			if tc.wantMessage == "" {
				if got != nil {
					t.Errorf("want no condition, got %+v", got)
				}
				return
			}
			if got == nil || got.Type != trafficv1alpha1.AddonConditionDraining || got.Status != metav1.ConditionTrue ||
				got.Reason != tc.wantReason || got.Message != tc.wantMessage {
				t.Errorf("got %+v, want reason %s and message %q", got, tc.wantReason, tc.wantMessage)
			}
		})
	}

	var many []*trafficv1alpha1.TrafficMigrationPolicy
	for _, n := range "abcdefghijkl" {
		many = append(many, policy("ns", string(n), "gw", rowOf("c1", trafficv1alpha1.ClusterDraining)))
	}
	if got := Desired("c1", many); got == nil || !strings.HasSuffix(got.Message, "ns/j (Gateway ns/gw) and 2 more") {
		t.Errorf("twelve policies: %+v", got)
	}
}

func TestChangedClusters(t *testing.T) {
	a := policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterDraining), rowOf("c2", trafficv1alpha1.ClusterActive))
	held := policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterHeld), rowOf("c2", trafficv1alpha1.ClusterActive))
	checked := a.DeepCopy()
	checked.Status.Clusters[0].LastValue = "3.2" // a new check: no change for the condition
	moved := policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterRemoved), rowOf("c2", trafficv1alpha1.ClusterDraining))
	tests := map[string]struct {
		old, new *trafficv1alpha1.TrafficMigrationPolicy
		want     []string
	}{
		"added":                 {new: a, want: []string{"c1"}},
		"deleted":               {old: a, want: []string{"c1"}},
		"a check changes none":  {old: a, new: checked},
		"held":                  {old: a, new: held, want: []string{"c1"}},
		"one removed, one left": {old: a, new: moved, want: []string{"c1", "c2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := changedClusters(tc.old, tc.new); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSync checks the exact writes: the condition is added next to the conditions of
// others, a second sync writes nothing, and it is removed when the drain ends.
func TestSync(t *testing.T) {
	foreign := []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "Lease", LastTransitionTime: metav1.NewTime(time.Unix(100, 0))},
		{Type: trafficv1alpha1.ConditionClusterLabels, Status: metav1.ConditionTrue, Reason: "Reported", Message: "cluster=c1", LastTransitionTime: metav1.NewTime(time.Unix(200, 0))},
	}
	addon := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: trafficv1alpha1.AddonName, ResourceVersion: "1"},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: foreign},
	}
	draining := policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterDraining))

	addonClient := addonfake.NewSimpleClientset(addon)
	trafficClient := trafficfake.NewSimpleClientset(draining)
	addonInf := addoninformers.NewSharedInformerFactory(addonClient, 0)
	trafficInf := trafficinformers.NewSharedInformerFactory(trafficClient, 0)
	policies := trafficInf.Traffic().V1alpha1().TrafficMigrationPolicies()
	addons := addonInf.Addon().V1alpha1().ManagedClusterAddOns()
	if _, err := NewController(addonClient, policies, addons); err != nil {
		t.Fatal(err)
	}
	c := &Controller{addonClient: addonClient, policyIndex: policies.Informer().GetIndexer(), addons: addons.Lister()}
	if err := policies.Informer().GetIndexer().Add(draining); err != nil {
		t.Fatal(err)
	}
	if err := addons.Informer().GetIndexer().Add(addon); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	patches := func() []clienttesting.PatchAction {
		var out []clienttesting.PatchAction
		for _, a := range addonClient.Actions() {
			if p, ok := a.(clienttesting.PatchAction); ok {
				out = append(out, p)
			}
		}
		addonClient.ClearActions()
		return out
	}
	stored := func() *addonv1alpha1.ManagedClusterAddOn {
		a, err := addonClient.AddonV1alpha1().ManagedClusterAddOns("c1").Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	keepsForeign := func(a *addonv1alpha1.ManagedClusterAddOn) {
		t.Helper()
		for _, want := range foreign {
			got := meta.FindStatusCondition(a.Status.Conditions, want.Type)
			if got == nil || got.Message != want.Message || !got.LastTransitionTime.Equal(&want.LastTransitionTime) {
				t.Errorf("condition %s changed: %+v", want.Type, got)
			}
		}
	}

	if err := c.sync(ctx, nil, "c1"); err != nil {
		t.Fatal(err)
	}
	if p := patches(); len(p) != 1 || p[0].GetSubresource() != "status" || !strings.Contains(string(p[0].GetPatch()), `"resourceVersion":"1"`) {
		t.Fatalf("want one status patch with the resourceVersion, got %v", p)
	}
	a := stored()
	if cond := meta.FindStatusCondition(a.Status.Conditions, trafficv1alpha1.AddonConditionDraining); cond == nil || cond.Message != "draining for policy ns/a (Gateway ns/gw)" {
		t.Fatalf("no Draining condition: %+v", a.Status.Conditions)
	}
	keepsForeign(a)

	// The same inputs again: no write.
	if err := addons.Informer().GetIndexer().Update(a); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, nil, "c1"); err != nil {
		t.Fatal(err)
	}
	if p := patches(); len(p) != 0 {
		t.Fatalf("a second sync wrote %v", p)
	}

	// The drain ends: the condition goes, the others stay.
	active := policy("ns", "a", "gw", rowOf("c1", trafficv1alpha1.ClusterActive))
	if err := policies.Informer().GetIndexer().Update(active); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, nil, "c1"); err != nil {
		t.Fatal(err)
	}
	a = stored()
	if cond := meta.FindStatusCondition(a.Status.Conditions, trafficv1alpha1.AddonConditionDraining); cond != nil || len(a.Status.Conditions) != len(foreign) {
		t.Fatalf("the Draining condition stayed: %+v", a.Status.Conditions)
	}
	keepsForeign(a)
}
