// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
)

// runClusters shows the fleet by cluster once.
func (o *Options) runClusters(ctx context.Context, c *hubclient.Clients) error {
	clusters, err := c.Cluster.ClusterV1().ManagedClusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list ManagedClusters: %w", err)
	}
	addons, err := c.Addon.AddonV1alpha1().ManagedClusterAddOns("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String(),
	})
	if err != nil {
		return fmt.Errorf("list the %s ManagedClusterAddOns: %w", trafficv1alpha1.AddonName, err)
	}
	view := policyview.BuildFleet(clusters.Items, addons.Items)
	var b bytes.Buffer
	switch {
	case o.Print.IsName():
		names := make([]string, 0, len(view.Clusters))
		for _, c := range view.Clusters {
			names = append(names, c.Name)
		}
		err = printer.PrintNames(&b, clusterv1.SchemeGroupVersion.WithKind("ManagedCluster"), names...)
	case !o.Print.IsText():
		err = o.Print.PrintView(&b, printer.KindFleetView, &view)
	default:
		err = renderFleet(&b, view, o.Print.IsWide(), o.Print.NoHeaders)
	}
	if err != nil {
		return err
	}
	_, err = o.Out.Write(b.Bytes())
	return err
}

// renderFleet writes the fleet by cluster as a table, with the policies that drain
// each cluster below it, or with wide in a column of the table; noHeaders leaves the
// table's header line out.
func renderFleet(b *bytes.Buffer, v policyview.Fleet, wide, noHeaders bool) error {
	if len(v.Clusters) == 0 {
		b.WriteString("No ManagedClusters on this hub.\n")
		return nil
	}
	header := []string{"CLUSTER", "AGENT", "GATEWAYS", "LABELS", "DRAINING"}
	if wide {
		header = append(header, "DRAINING FOR")
	}
	rows := [][]string{header}
	for _, c := range v.Clusters {
		var gws []string
		for _, g := range c.Gateways {
			state := policyview.GatewayNotReady
			if g.Ready {
				state = policyview.GatewayReady
			}
			gws = append(gws, g.Gateway+" "+state)
		}
		row := []string{c.Name, c.Agent, policyview.OrNone(strings.Join(gws, ", ")), policyview.OrNone(c.Labels), policyview.OrNone(c.Draining)}
		if wide {
			row = append(row, policyview.OrNone(policyview.OneLine(c.DrainingFor)))
		}
		rows = append(rows, row)
	}
	if noHeaders {
		rows = rows[1:]
	}
	if err := printer.WriteTable(b, "", rows); err != nil {
		return err
	}
	for _, c := range v.Clusters {
		if c.DrainingFor != "" && !wide {
			fmt.Fprintf(b, "\n%s: %s", c.Name, c.DrainingFor)
		}
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteString("\n")
	}
	return nil
}
