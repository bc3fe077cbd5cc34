// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// FleetView is the fleet by cluster, as status --clusters shows it.
type FleetView struct {
	// Clusters are the fleet's ManagedClusters, sorted by name.
	Clusters []FleetClusterView `json:"clusters"`
}

// FleetClusterView is one cluster of the fleet: what its agent reports and what the
// hub wrote on its ManagedClusterAddOn.
type FleetClusterView struct {
	// Name is the ManagedCluster's name.
	Name string `json:"name"`
	// Agent is Available, NotAvailable, or NotEnabled when the cluster has no
	// traffic-migration add-on.
	Agent string `json:"agent"`
	// Gateways are the Gateways the agent reports, sorted by namespace and name.
	Gateways []FleetGatewayView `json:"gateways,omitempty"`
	// Labels are the metrics labels the agent reports, as sorted key=value pairs.
	Labels string `json:"labels,omitempty"`
	// Draining is the hub's Draining condition's reason (Draining or Held); empty
	// when no policy drains the cluster.
	Draining string `json:"draining,omitempty"`
	// DrainingFor is the condition's message: the policies that drain the cluster and
	// their Gateways.
	DrainingFor string `json:"drainingFor,omitempty"`
}

// FleetGatewayView is one Gateway as the agent reports it.
type FleetGatewayView struct {
	// Gateway is "<namespace>.<name>", as the agent's condition type names it.
	Gateway string `json:"gateway"`
	// Ready says whether the Gateway is programmed.
	Ready bool `json:"ready"`
}

// Agent states of FleetClusterView.
const (
	agentAvailable    = "Available"
	agentNotAvailable = "NotAvailable"
	agentNotEnabled   = "NotEnabled"
)

// runClusters shows the fleet by cluster once.
func (o *Options) runClusters(ctx context.Context, c *clients) error {
	clusters, err := c.cluster.ClusterV1().ManagedClusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list ManagedClusters: %w", err)
	}
	addons, err := c.addon.AddonV1alpha1().ManagedClusterAddOns("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String(),
	})
	if err != nil {
		return fmt.Errorf("list the %s ManagedClusterAddOns: %w", trafficv1alpha1.AddonName, err)
	}
	view := buildFleetView(clusters.Items, addons.Items)
	var b bytes.Buffer
	if o.Output != "" {
		err = renderStructured(&b, o.Output, view)
	} else {
		err = renderFleet(&b, view)
	}
	if err != nil {
		return err
	}
	_, err = o.Out.Write(b.Bytes())
	return err
}

// buildFleetView builds the fleet by cluster from the ManagedClusters and this
// add-on's ManagedClusterAddOns.
func buildFleetView(clusters []clusterv1.ManagedCluster, addons []addonv1alpha1.ManagedClusterAddOn) FleetView {
	byCluster := map[string]*addonv1alpha1.ManagedClusterAddOn{}
	for i := range addons {
		byCluster[addons[i].Namespace] = &addons[i]
	}
	view := FleetView{Clusters: []FleetClusterView{}}
	for _, mc := range clusters {
		row := FleetClusterView{Name: mc.Name, Agent: agentNotEnabled}
		if a := byCluster[mc.Name]; a != nil {
			row.Agent = agentNotAvailable
			if meta.IsStatusConditionTrue(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
				row.Agent = agentAvailable
			}
			for _, c := range a.Status.Conditions {
				switch {
				case strings.HasPrefix(c.Type, trafficv1alpha1.GatewayConditionPrefix):
					row.Gateways = append(row.Gateways, FleetGatewayView{
						Gateway: strings.TrimPrefix(c.Type, trafficv1alpha1.GatewayConditionPrefix),
						Ready:   c.Status == metav1.ConditionTrue,
					})
				case c.Type == trafficv1alpha1.ConditionClusterLabels && c.Status == metav1.ConditionTrue:
					row.Labels = c.Message
				case c.Type == trafficv1alpha1.AddonConditionDraining && c.Status == metav1.ConditionTrue:
					row.Draining, row.DrainingFor = c.Reason, c.Message
				}
			}
			slices.SortFunc(row.Gateways, func(a, b FleetGatewayView) int { return strings.Compare(a.Gateway, b.Gateway) })
		}
		view.Clusters = append(view.Clusters, row)
	}
	slices.SortFunc(view.Clusters, func(a, b FleetClusterView) int { return strings.Compare(a.Name, b.Name) })
	return view
}

// renderFleet writes the fleet by cluster as a table, with the policies that drain
// each cluster below it.
func renderFleet(b *bytes.Buffer, v FleetView) error {
	if len(v.Clusters) == 0 {
		b.WriteString("No ManagedClusters on this hub.\n")
		return nil
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tAGENT\tGATEWAYS\tLABELS\tDRAINING")
	for _, c := range v.Clusters {
		var gws []string
		for _, g := range c.Gateways {
			state := "NotReady"
			if g.Ready {
				state = "Ready"
			}
			gws = append(gws, g.Gateway+" "+state)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Agent, orNone(strings.Join(gws, ", ")), orNone(c.Labels), orNone(c.Draining))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range v.Clusters {
		if c.DrainingFor != "" {
			fmt.Fprintf(b, "\n%s: %s", c.Name, c.DrainingFor)
		}
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteString("\n")
	}
	return nil
}
