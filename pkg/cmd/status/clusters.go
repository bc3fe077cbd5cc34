// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/output"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
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
	view := policyview.BuildFleet(clusters.Items, addons.Items)
	var b bytes.Buffer
	if o.Output != "" {
		err = output.Write(&b, o.Output, view)
	} else {
		err = renderFleet(&b, view)
	}
	if err != nil {
		return err
	}
	_, err = o.Out.Write(b.Bytes())
	return err
}

// renderFleet writes the fleet by cluster as a table, with the policies that drain
// each cluster below it.
func renderFleet(b *bytes.Buffer, v policyview.Fleet) error {
	if len(v.Clusters) == 0 {
		b.WriteString("No ManagedClusters on this hub.\n")
		return nil
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tAGENT\tGATEWAYS\tLABELS\tDRAINING")
	for _, c := range v.Clusters {
		var gws []string
		for _, g := range c.Gateways {
			state := policyview.GatewayNotReady
			if g.Ready {
				state = policyview.GatewayReady
			}
			gws = append(gws, g.Gateway+" "+state)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Agent, policyview.OrNone(strings.Join(gws, ", ")), policyview.OrNone(c.Labels), policyview.OrNone(c.Draining))
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
