// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func TestBuildFleet(t *testing.T) {
	cluster := func(name string) clusterv1.ManagedCluster {
		return clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	addon := func(ns string, conds ...metav1.Condition) addonv1alpha1.ManagedClusterAddOn {
		return *newAddon(ns, conds...)
	}
	v := BuildFleet(
		[]clusterv1.ManagedCluster{cluster("c3"), cluster("c1"), cluster("c2")},
		[]addonv1alpha1.ManagedClusterAddOn{
			addon("c1",
				condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, "Lease", ""),
				condition(trafficv1alpha1.GatewayConditionType("gateway-system", "gw"), metav1.ConditionTrue, "Programmed", "10.0.0.1"),
				condition(trafficv1alpha1.GatewayConditionType("apps", "other"), metav1.ConditionFalse, "Pending", ""),
				condition(trafficv1alpha1.ConditionClusterLabels, metav1.ConditionTrue, "Reported", "cluster=us-east-1,cluster_name=c1"),
				condition(trafficv1alpha1.AddonConditionDraining, metav1.ConditionTrue, "Draining", "draining for policy ns/p (Gateway gateway-system/gw)"),
			),
			addon("c2", condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse, "Expired", "")),
		})
	if len(v.Clusters) != 3 || v.Clusters[0].Name != "c1" || v.Clusters[2].Agent != AgentNotEnabled || v.Clusters[1].Agent != AgentNotAvailable {
		t.Fatalf("rows: %+v", v.Clusters)
	}
	c1 := v.Clusters[0]
	if c1.Agent != AgentAvailable || len(c1.Gateways) != 2 || c1.Gateways[0].Gateway != "apps.other" || c1.Gateways[0].Ready || !c1.Gateways[1].Ready ||
		c1.Labels != "cluster=us-east-1,cluster_name=c1" || c1.Draining != "Draining" ||
		c1.DrainingFor != "draining for policy ns/p (Gateway gateway-system/gw)" {
		t.Errorf("c1: %+v", c1)
	}
}
