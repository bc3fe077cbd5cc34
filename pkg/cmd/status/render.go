// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// none is what an empty cell shows.
const none = "-"

// renderTable writes one line per policy. namespace names the namespace that was
// listed, for the message when there are no policies; "" means all namespaces.
func renderTable(w io.Writer, views []PolicyView, namespace string) error {
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
	rows := [][]string{header}
	for _, v := range views {
		row := []string{v.Name, orNone(v.Ready), v.ProxyPlacement,
			strconv.Itoa(int(v.ActiveClusters)), strconv.Itoa(int(v.DrainingClusters)), orNone(v.Prometheus), v.Age}
		if allNamespaces {
			row = append([]string{v.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return writeTable(w, "", rows)
}

// renderDetail writes everything the view holds about one policy: its summary, its
// conditions, one line per cluster with notes on the clusters that need a look, the
// resolved queries of the draining clusters and the warnings.
func renderDetail(w io.Writer, v PolicyView) error {
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
			rows = append(rows, []string{c.Type, c.Status, c.Reason, oneLine(c.Message)})
		}
		if err := writeTable(&b, "  ", rows); err != nil {
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
func writeSummary(w io.Writer, v PolicyView) error {
	ready := orNone(v.Ready)
	if v.ReadyReason != "" {
		ready += " (" + v.ReadyReason + ")"
	}
	maxDrain := "none"
	if v.Check.MaxDrainDuration != "" {
		maxDrain = v.Check.MaxDrainDuration + ", then " + v.Check.OnMaxDrainDuration
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
		{"Max Drain Duration:", maxDrain},
		{"No Data Policy:", v.Check.NoDataPolicy},
		{"Suspended:", strconv.FormatBool(v.Suspended)},
	}
	if v.DNS != nil {
		published := orNone(strings.Join(v.DNS.PublishedClusters, ", "))
		rows = append(rows, []string{"DNS:", fmt.Sprintf("%s (TTL %s), DNSEndpoint %s publishing %s: %s",
			strings.Join(v.DNS.Hostnames, ", "), v.DNS.TTL, v.DNS.Endpoint, published, orNone(v.DNS.Reason))})
	}
	return writeTable(w, "", rows)
}

// writeClusters writes the cluster table, then a note for each cluster that the
// status and the proxy decisions disagree about (marked with *) and for each Gateway
// that is not ready.
func writeClusters(w io.Writer, v PolicyView) error {
	rows := [][]string{{"CLUSTER", "PHASE", "GATEWAY", "VALUE", "SUCCESSES", "DRAINING FOR", "NEXT CHECK", "MESSAGE"}}
	var marks, gateways []string
	for _, c := range v.Clusters {
		name := c.Name
		if c.Discrepancy != "" {
			name += "*"
			marks = append(marks, "  * "+c.Name+": "+c.Discrepancy)
		}
		// An add-on that cannot be read is among the warnings; a removed cluster's
		// Gateway no longer matters.
		if c.Gateway != GatewayReady && c.Gateway != GatewayUnknown && c.Phase != string(trafficv1alpha1.ClusterRemoved) {
			gateways = append(gateways, "  "+c.Name+": "+c.Gateway+": "+oneLine(c.GatewayDetail))
		}
		rows = append(rows, []string{name, orNone(c.Phase), c.Gateway, valueCell(c, v.Check.Expectation),
			successesCell(c), drainingForCell(c), orNone(c.NextCheck), oneLine(c.Message)})
	}
	if err := writeTable(w, "  ", rows); err != nil {
		return err
	}
	var b strings.Builder
	if len(marks) > 0 {
		b.WriteString("\n" + strings.Join(marks, "\n") + "\n")
	}
	if len(gateways) > 0 {
		b.WriteString("\nGateways not ready:\n" + strings.Join(gateways, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// drainingForCell shows how long a cluster drains, and with spec.dns since when it is
// out of DNS: "5m (out of DNS 1m)", or "5m (in DNS)".
func drainingForCell(c ClusterView) string {
	switch {
	case c.DrainingFor == "":
		return none
	case c.OutOfDNS == "in DNS":
		return c.DrainingFor + " (in DNS)"
	case c.OutOfDNS != "":
		return c.DrainingFor + " (out of DNS " + c.OutOfDNS + ")"
	}
	return c.DrainingFor
}

// valueCell shows the last checked value next to what it must meet: "2.1 / <= 5".
func valueCell(c ClusterView, expectation string) string {
	if !c.Draining() && c.LastValue == "" {
		return none
	}
	value := none
	switch {
	case c.LastValue != "":
		value = formatValue(c.LastValue)
	case c.LastResult == string(trafficv1alpha1.EvaluationError):
		value = "error"
	case c.LastResult == string(trafficv1alpha1.EvaluationNoData):
		value = "no data"
	}
	if expectation == "" {
		return value
	}
	return value + " / " + expectation
}

// successesCell shows a draining cluster's run of passed checks: "2/3", and "3/3 met"
// once the run is long enough, however long it has grown since: the gate waits for
// something else then, and the message says what.
func successesCell(c ClusterView) string {
	if !c.Draining() {
		return none
	}
	if c.RequiredSuccesses > 0 && c.ConsecutiveSuccesses >= c.RequiredSuccesses {
		return fmt.Sprintf("%d/%d met", c.RequiredSuccesses, c.RequiredSuccesses)
	}
	return fmt.Sprintf("%d/%d", c.ConsecutiveSuccesses, c.RequiredSuccesses)
}

// historyLines shows each cluster's check history as a trend, one line per cluster
// that has one: the threshold, then the values in a row, each marked passed or not,
// "cluster2  <= 5:  48✗  12✗  4.9✓  4.1✓".
func historyLines(v PolicyView) []string {
	rows := [][]string{}
	for _, c := range v.Clusters {
		if len(c.History) == 0 {
			continue
		}
		cells := make([]string, 0, len(c.History))
		for _, h := range c.History {
			cells = append(cells, historyCell(h, v.Check.NoDataPolicy))
		}
		threshold := v.Check.Expectation
		if threshold == "" {
			threshold = none
		}
		rows = append(rows, []string{c.Name, threshold + ":", strings.Join(cells, "  ")})
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	if err := writeTable(&b, "  ", rows); err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// historyCell is one check of a history: its value, or what it got instead, and a
// mark for whether it passed (no data passes with noDataPolicy Pass).
func historyCell(h trafficv1alpha1.CheckRecord, noDataPolicy string) string {
	value := formatValue(h.Value)
	switch {
	case h.Value != "":
	case h.Result == trafficv1alpha1.EvaluationError:
		value = "error"
	case h.Result == trafficv1alpha1.EvaluationNoData:
		value = "nodata"
	default:
		value = none
	}
	if h.Result == trafficv1alpha1.EvaluationPass ||
		(h.Result == trafficv1alpha1.EvaluationNoData && noDataPolicy == string(trafficv1alpha1.NoDataPass)) {
		return value + "✓"
	}
	return value + "✗"
}

// formatValue shortens a value as Prometheus formats it to at most six significant
// digits; anything that is not a number is shown as it is.
func formatValue(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// writeTable writes rows in aligned columns, each line starting with indent and
// without trailing blanks.
func writeTable(w io.Writer, indent string, rows [][]string) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, row := range rows {
		if _, err := fmt.Fprintln(tw, indent+strings.Join(row, "\t")); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line == "" {
			continue
		}
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// renderStructured writes v as json or yaml.
func renderStructured(w io.Writer, format string, v any) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(v)
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	if err != nil {
		return fmt.Errorf("write the view as %s: %w", format, err)
	}
	_, err = w.Write(data)
	return err
}

// orNone shows an empty value as "-".
func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
