// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// DecisionClusters lists, sorted, the clusters of a Placement's decisions as a
// consumer reads them: every PlacementDecision of the namespace labelled with the
// Placement's name, each entry of its status.decisions.
func DecisionClusters(ctx context.Context, client clusterclient.Interface, namespace, placement string) ([]string, error) {
	list, err := client.ClusterV1beta1().PlacementDecisions(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement,
	})
	if err != nil {
		return nil, fmt.Errorf("list the decisions of %s/%s: %w", namespace, placement, err)
	}
	var clusters []string
	for _, d := range list.Items {
		for _, c := range d.Status.Decisions {
			clusters = append(clusters, c.ClusterName)
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}
