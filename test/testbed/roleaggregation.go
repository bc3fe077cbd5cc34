// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import "context"

// StartRoleAggregation runs kube-controller-manager's clusterrole-aggregation
// controller, and only it, against a cluster, once: a later call returns the one
// already running. It fills the rules of every ClusterRole with an aggregationRule
// (the default view, edit and admin among them) from the ClusterRoles its selectors
// match, as it does on a real cluster; without it those roles grant nothing. It is a
// process of its own, apart from the cluster's other kube-controller-manager
// (startKubeControllerManager), so that a test bed that never ran one, as the
// integration tests' hub, gains no garbage collector or namespace controller.
func (b *Bed) StartRoleAggregation(ctx context.Context, c *Cluster) (*Process, error) {
	return b.startControllerManagerOnce(ctx, c, &c.roleAggregation, "clusterrole-aggregation", "role-aggregation", "clusterrole-aggregation-controller")
}
