// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// TestOCMCRDsServed checks that the hub serves OCM's API, through OCM's own typed
// client, as the product's controllers will use it.
func TestOCMCRDsServed(t *testing.T) {
	ctx := t.Context()
	ns := bed.Hub.Namespace(t, "ocm-crds")
	client, err := clusterclient.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-cluster", Labels: map[string]string{"region": "us-east"}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
	if _, err := client.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ManagedCluster: %v", err)
	}
	t.Cleanup(func() {
		_ = client.ClusterV1().ManagedClusters().Delete(context.Background(), mc.Name, metav1.DeleteOptions{})
	})

	// Scheduling is disabled, so that OCM's placement controller leaves the
	// decisions to this test.
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "gateway-placement", Namespace: ns,
		Annotations: map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"}}}
	if _, err := client.ClusterV1beta1().Placements(ns).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Placement: %v", err)
	}
	decision := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Name: "gateway-placement-decision-1", Namespace: ns,
		Labels: map[string]string{clusterv1beta1.PlacementLabel: "gateway-placement", clusterv1beta1.DecisionGroupIndexLabel: "0"},
	}}
	created, err := client.ClusterV1beta1().PlacementDecisions(ns).Create(ctx, decision, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create PlacementDecision: %v", err)
	}
	created.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: mc.Name}}
	updated, err := client.ClusterV1beta1().PlacementDecisions(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("write PlacementDecision status: %v", err)
	}
	if len(updated.Status.Decisions) != 1 || updated.Status.Decisions[0].ClusterName != mc.Name {
		t.Fatalf("decisions not stored through the status subresource: %+v", updated.Status)
	}
}
