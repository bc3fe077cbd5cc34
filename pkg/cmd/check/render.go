// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"io"
	"strings"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// render writes the report as -o asks: text (wide adds each cluster's reason to the
// table), structured, or the checked policy's name.
func render(w io.Writer, print *printer.Flags, r *Report) error {
	switch {
	case print.IsName():
		return printer.PrintNames(w, trafficv1alpha1.SchemeGroupVersion.WithKind("TrafficMigrationPolicy"), r.Policy)
	case !print.IsText():
		return print.PrintView(w, printer.KindCheckReport, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Policy %s/%s (from %s), checked at %s\n", r.Namespace, r.Policy, r.Source, r.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Prometheus: %s\n", r.Prometheus)
	if r.Expectation != "" {
		fmt.Fprintf(&b, "Passes when the value is %s\n", r.Expectation)
	}
	if r.RealProblem != "" {
		fmt.Fprintf(&b, "Warning: %s\n", r.RealProblem)
	}
	if r.WindowNote != "" {
		fmt.Fprintf(&b, "Warning (%s): %s\n", trafficv1alpha1.ReasonWindowTooShort, r.WindowNote)
	}
	if len(r.Clusters) == 0 {
		b.WriteString("\nNo cluster to check: neither the real Placement nor the proxy lists one.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n")
	header := []string{"CLUSTER", "PHASE", "GATEWAY", "VALUE", "RESULT", "REMOVAL"}
	if print.IsWide() {
		header = append(header, "REASON")
	}
	rows := [][]string{header}
	for _, c := range r.Clusters {
		row := []string{c.Name, string(c.Phase), gatewayWord(c.GatewayReady), policyview.OrNone(policyview.Value(c.Value)), string(c.Result), removalWord(c.Gate)}
		if print.IsWide() {
			row = append(row, c.Reason)
		}
		rows = append(rows, row)
	}
	if err := printer.WriteTable(&b, "", print.Table(rows)); err != nil {
		return err
	}
	for _, c := range r.Clusters {
		fmt.Fprintf(&b, "\n%s:\n", c.Name)
		if c.Query != "" {
			fmt.Fprintf(&b, "  query:   %s\n", policyview.OneLine(c.Query))
		}
		fmt.Fprintf(&b, "  result:  %s (%s): %s\n", c.Result, c.Reason, c.Message)
		if g := c.Gate; g != nil {
			fmt.Fprintf(&b, "  removal: %s\n", gateSentence(g, r.Time.Time))
		} else {
			b.WriteString("  removal: none: the cluster is in the real Placement\n")
		}
		if rc := c.Replacement; rc != nil {
			if rc.Query != "" {
				fmt.Fprintf(&b, "  replacement query:  %s\n", policyview.OneLine(rc.Query))
			}
			fmt.Fprintf(&b, "  replacement result: %s, %s (%s): %s\n", policyview.OrNone(policyview.Value(rc.Value)), rc.Result, rc.Reason, rc.Message)
			if rc.CountsWhy != "" {
				fmt.Fprintf(&b, "  replacement: %s\n", rc.CountsWhy)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gateSentence says in words what the removal gate would decide.
func gateSentence(g *GateReport, now time.Time) string {
	if g.WouldRemove {
		switch decision.RemovalReason(g.RemovalReason) {
		case decision.RemovalGatePassed:
			return "the manager would remove it now: its removal gate passes"
		case decision.RemovalMaxDrainDuration:
			return "the manager would remove it now: its maximum drain duration has passed"
		case decision.RemovalManagedClusterGone:
			return "the manager would remove it now: its ManagedCluster no longer exists"
		}
		return "the manager would remove it now (" + g.RemovalReason + ")"
	}
	var b strings.Builder
	b.WriteString("waits: " + g.WaitingFor)
	if g.ConsecutiveSuccesses != nil {
		b.WriteString(" (passing checks in a row: " + policyview.Successes(*g.ConsecutiveSuccesses, g.Needed))
		if !g.CheckCounts {
			b.WriteString("; this check does not count: the manager's next check is not due yet")
		}
		if g.NextCheck != nil && g.NextCheck.After(now) {
			b.WriteString("; next check " + policyview.Until(g.NextCheck.Time, now))
		}
		b.WriteString(")")
	}
	if g.DNSWithdrawalTime != nil {
		b.WriteString("; out of DNS for " + policyview.Since(g.DNSWithdrawalTime.Time, now))
	}
	return b.String()
}

func removalWord(g *GateReport) string {
	switch {
	case g == nil:
		return policyview.None
	case g.WouldRemove:
		return "now"
	}
	return "waits"
}

func gatewayWord(ready bool) string {
	if ready {
		return policyview.GatewayReady
	}
	return policyview.GatewayNotReady
}
