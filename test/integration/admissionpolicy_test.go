// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestChartAdmissionPolicy: the chart's ValidatingAdmissionPolicy, applied to the hub
// as `helm install` renders it (with the chart's RBAC), lets the manager's
// ServiceAccount write only PlacementDecisions labelled as a policy's proxy decisions:
// the real API server refuses it creating an unlabelled one, and updating or deleting
// one that was unlabelled (the decisions of a Placement it does not own), while the
// same ServiceAccount writes a labelled one. A proxy decision that a release before the
// label wrote may get the label alone, and nothing else.
func TestChartAdmissionPolicy(t *testing.T) {
	ctx := t.Context()
	kube := hubKube(t)
	release := bed.Hub.Namespace(t, "tm-vap")
	tenant := bed.Hub.Namespace(t, "tm-vap-tenant")
	applyChartRBAC(t, kube, release)
	applyChartAdmissionPolicy(t, release)

	// The manager, as its ServiceAccount; the admin, as the bed.
	asManager := rest.CopyConfig(bed.Hub.Config)
	asManager.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + release + ":traffic-migration-manager",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + release, "system:authenticated"}}
	manager := clusterclient.NewForConfigOrDie(asManager).ClusterV1beta1().PlacementDecisions(tenant)
	admin := clusterclient.NewForConfigOrDie(bed.Hub.Config).ClusterV1beta1().PlacementDecisions(tenant)

	decisionOf := func(name, placement string, proxy bool) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: placement}}}
		if proxy {
			d.Labels[trafficv1alpha1.PolicyLabel] = "migrate"
		}
		return d
	}
	refused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the traffic-migration manager may") {
			t.Errorf("the manager %s: %v, want it refused by the admission policy", what, err)
		}
	}

	// The policy takes effect once the API server has read it: until the first
	// refusal, an unlabelled create may pass, and is removed to try again.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := manager.Create(ctx, decisionOf("probe", "gw", false), metav1.CreateOptions{})
		if err == nil {
			return false, admin.Delete(ctx, "probe", metav1.DeleteOptions{})
		}
		return strings.Contains(err.Error(), "the traffic-migration manager may create only"), nil
	})
	if err != nil {
		t.Fatalf("the admission policy never refused the manager an unlabelled PlacementDecision: %v", err)
	}

	// Its own proxy decisions: created, their decisions written, deleted.
	own, err := manager.Create(ctx, decisionOf("gw-proxy-decision-1", "gw-proxy", true), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the manager creates a labelled proxy decision: %v", err)
	}
	own.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "cluster1"}}
	if own, err = manager.UpdateStatus(ctx, own, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the manager writes its proxy decision's clusters: %v", err)
	}
	// Dropping the label would let the next write through: refused.
	unlabelled := own.DeepCopy()
	delete(unlabelled.Labels, trafficv1alpha1.PolicyLabel)
	_, err = manager.Update(ctx, unlabelled, metav1.UpdateOptions{})
	refused("drops the label of its proxy decision", err)

	// A Placement it does not own: OCM's placement controller wrote its decision.
	foreign, err := admin.Create(ctx, decisionOf("gw-decision-1", "gw", false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	foreign.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "cluster1"}}
	if foreign, err = admin.UpdateStatus(ctx, foreign, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rewritten := foreign.DeepCopy()
	rewritten.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "cluster2"}}
	_, err = manager.UpdateStatus(ctx, rewritten, metav1.UpdateOptions{})
	refused("rewrites the clusters of another Placement's decision", err)
	moved := foreign.DeepCopy()
	moved.Labels[clusterv1beta1.PlacementLabel] = "gw-proxy"
	moved.Labels[trafficv1alpha1.PolicyLabel] = "migrate"
	_, err = manager.Update(ctx, moved, metav1.UpdateOptions{})
	refused("moves another Placement's decision to its proxy", err)
	err = manager.Delete(ctx, foreign.Name, metav1.DeleteOptions{})
	refused("deletes another Placement's decision", err)
	if got, err := admin.Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil || len(got.Status.Decisions) != 1 || got.Status.Decisions[0].ClusterName != "cluster1" {
		t.Errorf("another Placement's decision after the manager's refused writes: %v, %v; want it as its Placement wrote it", got, err)
	}

	// A proxy decision of a release before the label: the label alone is let through
	// (admissionPolicy.allowLabelling, the default), and then it is the manager's.
	old, err := admin.Create(ctx, decisionOf("gw-proxy-decision-2", "gw-proxy", false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labelled := old.DeepCopy()
	labelled.Labels[trafficv1alpha1.PolicyLabel] = "migrate"
	if _, err := manager.Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Errorf("the manager labels a proxy decision of an earlier release: %v", err)
	}
	if err := manager.Delete(ctx, own.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the manager deletes its proxy decision: %v", err)
	}
}

// applyChartAdmissionPolicy applies the chart's ValidatingAdmissionPolicy and its
// binding, rendered into namespace release as on a hub that serves the API, and
// removes them when the test ends.
func applyChartAdmissionPolicy(t *testing.T, release string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(bed.Hub.Config)
	docs := chartDocuments(t, release, "templates/admissionpolicy.yaml", "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy")
	if len(docs) != 2 {
		t.Fatalf("the chart rendered %d admission objects, want the policy and its binding", len(docs))
	}
	for _, doc := range docs {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		resource := map[string]string{"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
			"ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}[obj.GetKind()]
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resource}
		if _, err := dyn.Resource(gvr).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("apply the chart's %s: %v", obj.GetKind(), err)
		}
		name := obj.GetName()
		t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
}
