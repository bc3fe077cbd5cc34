// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// Fleet is the fleet by cluster, as status --clusters shows it.
type Fleet struct {
	// TypeMeta is the view's apiVersion and kind in status's structured outputs
	// (cli.traffic.open-cluster-management.io/v1alpha1, FleetView).
	metav1.TypeMeta `json:",inline"`
	// Clusters are the fleet's ManagedClusters, sorted by name.
	Clusters []FleetCluster `json:"clusters"`
}

// FleetCluster is one cluster of the fleet: what its agent reports and what the hub
// wrote on its ManagedClusterAddOn.
type FleetCluster struct {
	// Name is the ManagedCluster's name.
	Name string `json:"name"`
	// Agent is Available, NotAvailable, or NotEnabled when the cluster has no
	// traffic-migration add-on.
	Agent string `json:"agent"`
	// Gateways are the Gateways the agent reports, sorted by namespace and name.
	Gateways []FleetGateway `json:"gateways,omitempty"`
	// Labels are the metrics labels the agent reports, as sorted key=value pairs.
	Labels string `json:"labels,omitempty"`
	// Draining is the hub's Draining condition's reason (Draining or Held); empty
	// when no policy drains the cluster.
	Draining string `json:"draining,omitempty"`
	// DrainingFor is the condition's message: the policies that drain the cluster and
	// their Gateways.
	DrainingFor string `json:"drainingFor,omitempty"`
}

// FleetGateway is one Gateway as the agent reports it.
type FleetGateway struct {
	// Gateway is "<namespace>.<name>", as the agent's condition type names it.
	Gateway string `json:"gateway"`
	// Ready says whether the Gateway is programmed.
	Ready bool `json:"ready"`
}

// Agent states of FleetCluster.
const (
	AgentAvailable    = "Available"
	AgentNotAvailable = "NotAvailable"
	AgentNotEnabled   = "NotEnabled"
)

// BuildFleet builds the fleet by cluster from the ManagedClusters and this add-on's
// ManagedClusterAddOns.
func BuildFleet(clusters []clusterv1.ManagedCluster, addons []addonv1alpha1.ManagedClusterAddOn) Fleet {
	byCluster := map[string]*addonv1alpha1.ManagedClusterAddOn{}
	for i := range addons {
		byCluster[addons[i].Namespace] = &addons[i]
	}
	view := Fleet{Clusters: []FleetCluster{}}
	for _, mc := range clusters {
		row := FleetCluster{Name: mc.Name, Agent: AgentNotEnabled}
		if a := byCluster[mc.Name]; a != nil {
			row.Agent = AgentNotAvailable
			if meta.IsStatusConditionTrue(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
				row.Agent = AgentAvailable
			}
			for _, c := range a.Status.Conditions {
				switch {
				case strings.HasPrefix(c.Type, trafficv1alpha1.GatewayConditionPrefix):
					row.Gateways = append(row.Gateways, FleetGateway{
						Gateway: strings.TrimPrefix(c.Type, trafficv1alpha1.GatewayConditionPrefix),
						Ready:   c.Status == metav1.ConditionTrue,
					})
				case c.Type == trafficv1alpha1.ConditionClusterLabels && c.Status == metav1.ConditionTrue:
					row.Labels = c.Message
				case c.Type == trafficv1alpha1.AddonConditionDraining && c.Status == metav1.ConditionTrue:
					row.Draining, row.DrainingFor = c.Reason, c.Message
				}
			}
			slices.SortFunc(row.Gateways, func(a, b FleetGateway) int { return strings.Compare(a.Gateway, b.Gateway) })
		}
		view.Clusters = append(view.Clusters, row)
	}
	slices.SortFunc(view.Clusters, func(a, b FleetCluster) int { return strings.Compare(a.Name, b.Name) })
	return view
}
