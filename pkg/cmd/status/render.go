// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
)

// renderTable writes one line per policy. namespace names the namespace that was
// listed, for the message when there are no policies; "" means all namespaces. wide
// adds the real Placement, the Gateway, whether the policy is suspended and its check;
// noHeaders leaves the header line out.
func renderTable(w io.Writer, views []policyview.Policy, namespace string, wide, noHeaders bool) error {
	if len(views) == 0 {
		where := "in any namespace"
		if namespace != "" {
			where = "in namespace " + namespace
		}
		_, err := fmt.Fprintf(w, "No TrafficMigrationPolicies found %s.\n", where)
		return err
	}
	allNamespaces := namespace == ""
	header := []string{"NAME", "READY", "PROXY", "ACTIVE", "DRAINING", "PROMETHEUS", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if wide {
		header = append(header, "PLACEMENT", "GATEWAY", "SUSPENDED", "CHECK")
	}
	rows := [][]string{header}
	for _, v := range views {
		row := []string{v.Name, policyview.OrNone(v.Ready), v.ProxyPlacement,
			strconv.Itoa(int(v.ActiveClusters)), strconv.Itoa(int(v.DrainingClusters)), policyview.OrNone(v.Prometheus), v.Age}
		if wide {
			row = append(row, v.Placement, v.Gateway, strconv.FormatBool(v.Suspended), policyview.OneLine(v.Check.Summary))
		}
		if allNamespaces {
			row = append([]string{v.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	if noHeaders {
		rows = rows[1:]
	}
	return printer.WriteTable(w, "", rows)
}

// renderDetail writes everything the view holds about one policy: its summary, its
// conditions, one line per cluster with notes on the clusters that need a look, the
// resolved queries of the draining clusters and the warnings.
func renderDetail(w io.Writer, v policyview.Policy) error {
	var b bytes.Buffer
	if err := writeSummary(&b, v); err != nil {
		return err
	}

	b.WriteString("\nConditions:\n")
	if len(v.Conditions) == 0 {
		b.WriteString("  none yet: the manager has not reconciled the policy\n")
	} else {
		rows := [][]string{{"TYPE", "STATUS", "REASON", "MESSAGE"}}
		for _, c := range v.Conditions {
			rows = append(rows, []string{c.Type, c.Status, c.Reason, policyview.OneLine(c.Message)})
		}
		if err := printer.WriteTable(&b, "  ", rows); err != nil {
			return err
		}
	}

	b.WriteString("\nClusters:\n")
	if len(v.Clusters) == 0 {
		b.WriteString("  none\n")
	} else if err := writeClusters(&b, v); err != nil {
		return err
	}

	var queries []string
	for _, c := range v.Clusters {
		if c.Draining() && c.ResolvedQuery != "" {
			queries = append(queries, "  "+c.Name+": "+strings.ReplaceAll(strings.TrimSpace(c.ResolvedQuery), "\n", "\n    "))
		}
	}
	if trend := historyLines(v); len(trend) > 0 {
		b.WriteString("\nCheck history (oldest first; ✓ passed, ✗ did not):\n")
		b.WriteString(strings.Join(trend, "\n") + "\n")
	}
	if len(queries) > 0 {
		b.WriteString("\nResolved queries of draining clusters:\n")
		b.WriteString(strings.Join(queries, "\n") + "\n")
	}

	if len(v.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, warning := range v.Warnings {
			b.WriteString("  " + warning + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeSummary writes the policy's spec and counts as "Key: value" lines.
func writeSummary(w io.Writer, v policyview.Policy) error {
	ready := policyview.OrNone(v.Ready)
	if v.ReadyReason != "" {
		ready += " (" + v.ReadyReason + ")"
	}
	rows := [][]string{
		{"Name:", v.Name},
		{"Namespace:", v.Namespace},
		{"Age:", v.Age},
		{"Ready:", ready},
		{"Placement:", v.Placement},
		{"Proxy Placement:", fmt.Sprintf("%s (%d clusters: %d active, %d draining)",
			v.ProxyPlacement, v.ProxyClusters, v.ActiveClusters, v.DrainingClusters)},
		{"Target Gateway:", v.Gateway},
		{"Check:", v.Check.Summary},
		{"Interval:", v.Check.Interval},
		{"Consecutive Successes:", strconv.Itoa(int(v.Check.ConsecutiveSuccesses))},
		{"Min Drain Duration:", v.Check.MinDrainDuration},
		{"Max Drain Duration:", v.Check.Deadline},
		{"No Data Policy:", v.Check.NoDataPolicy},
		{"Replacement:", v.Check.Replacement},
		{"Suspended:", strconv.FormatBool(v.Suspended)},
	}
	if v.DNS != nil {
		rows = append(rows, []string{"DNS:", v.DNS.Summary})
	}
	return printer.WriteTable(w, "", rows)
}

// writeClusters writes the cluster table, then a note for each cluster that the
// status and the proxy decisions disagree about (marked with *), for each Gateway
// that is not ready and for each stalled drain.
func writeClusters(w io.Writer, v policyview.Policy) error {
	rows := [][]string{{"CLUSTER", "PHASE", "GATEWAY", "VALUE", "SUCCESSES", "DRAINING FOR", "NEXT CHECK", "EXPECTED OUT", "MESSAGE"}}
	var marks, gateways, stalled []string
	for _, c := range v.Clusters {
		name := c.Name
		if c.Discrepancy != "" {
			name += "*"
			marks = append(marks, "  * "+c.Name+": "+c.Discrepancy)
		}
		// An add-on that cannot be read is among the warnings; a removed cluster's
		// Gateway no longer matters.
		if c.Gateway != policyview.GatewayReady && c.Gateway != policyview.GatewayUnknown && c.Phase != string(trafficv1alpha1.ClusterRemoved) {
			gateways = append(gateways, "  "+c.Name+": "+c.Gateway+": "+policyview.OneLine(c.GatewayDetail))
		}
		if c.Stalled {
			stalled = append(stalled, "  "+c.Name+": "+policyview.StalledHint)
		}
		rows = append(rows, []string{name, policyview.OrNone(cmp.Or(c.State, c.Phase)), c.Gateway, policyview.OrNone(c.Value),
			policyview.OrNone(c.Successes), drainingForCell(c), policyview.OrNone(c.NextCheck), policyview.OrNone(c.Expected), policyview.OneLine(c.Message)})
	}
	if err := printer.WriteTable(w, "  ", rows); err != nil {
		return err
	}
	var b strings.Builder
	if len(marks) > 0 {
		b.WriteString("\n" + strings.Join(marks, "\n") + "\n")
	}
	if len(gateways) > 0 {
		b.WriteString("\nGateways not ready:\n" + strings.Join(gateways, "\n") + "\n")
	}
	if len(stalled) > 0 {
		b.WriteString("\nStalled drains (never removed for it; maxDrainDuration or force-remove end them):\n" + strings.Join(stalled, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// drainingForCell shows how long a cluster drains, and with spec.dns since when it is
// out of DNS: "5m (out of DNS 1m)", or "5m (in DNS)".
func drainingForCell(c policyview.Cluster) string {
	switch {
	case c.DrainingFor == "":
		return policyview.None
	case c.OutOfDNS == "in DNS":
		return c.DrainingFor + " (in DNS)"
	case c.OutOfDNS != "":
		return c.DrainingFor + " (out of DNS " + c.OutOfDNS + ")"
	}
	return c.DrainingFor
}

// historyLines shows each cluster's check history as a trend, one line per cluster
// that has one: the threshold, then the values in a row, each marked passed or not,
// "cluster2  <= 5:  48✗  12✗  4.9✓  4.1✓".
func historyLines(v policyview.Policy) []string {
	rows := [][]string{}
	for _, c := range v.Clusters {
		if len(c.History) == 0 {
			continue
		}
		cells := make([]string, 0, len(c.History))
		for _, h := range c.History {
			cells = append(cells, historyCell(h, v.Check.NoDataPolicy))
		}
		rows = append(rows, []string{c.Name, policyview.OrNone(v.Check.Expectation) + ":", strings.Join(cells, "  ")})
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	if err := printer.WriteTable(&b, "  ", rows); err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// historyCell is one check of a history: its value, or what it got instead, and a
// mark for whether it passed (no data passes with noDataPolicy Pass).
func historyCell(h trafficv1alpha1.CheckRecord, noDataPolicy string) string {
	value := policyview.OrNone(policyview.CheckValue(h.Value, h.Result))
	if h.Result == trafficv1alpha1.EvaluationPass ||
		(h.Result == trafficv1alpha1.EvaluationNoData && noDataPolicy == string(trafficv1alpha1.NoDataPass)) {
		return value + "✓"
	}
	return value + "✗"
}
