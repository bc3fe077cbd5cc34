// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"fmt"
	"strings"

	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// gateCheck is one named check of a draining cluster's removal gate (rule 3). The gate
// is the ordered list removalGate; one walk of it gives both the verdict and what the
// cluster's row says its removal still waits for, so the two cannot drift apart.
type gateCheck struct {
	// name names the check in tests and in this file.
	name string
	// waitsFor returns what the cluster's removal waits for while the check fails,
	// and "" when it passes. otherReady is how many other clusters are left in the
	// proxy with the Gateway ready.
	waitsFor func(pl *plan, d *drainRow, otherReady int) string
	// deadlineOverrides: past the deadline, with onMaxDrainDuration Remove, the cluster
	// is removed even while this check fails (rule 8).
	deadlineOverrides bool
	// ceilingOverrides: past the hub's ceiling, with its action Remove, the cluster is
	// removed even while this check fails (rule 13).
	ceilingOverrides bool
	// reportOnly: the check never holds the cluster; it is only reported in the row.
	reportOnly bool
}

// removalGate is the removal gate, in the order its row lists what it waits for. Each
// check is the function of its name below.
var removalGate = []gateCheck{
	{name: "realDecisionsKnown", waitsFor: realDecisionsKnown},
	{name: "pastDeadline", reportOnly: true, waitsFor: pastDeadline},
	{name: "pastCeiling", reportOnly: true, waitsFor: pastCeiling},
	{name: "notSuspended", ceilingOverrides: true, waitsFor: notSuspended},
	{name: "dnsWithdrawn", deadlineOverrides: true, ceilingOverrides: true, waitsFor: dnsWithdrawn},
	{name: "minDrainDuration", deadlineOverrides: true, ceilingOverrides: true, waitsFor: minDrainDuration},
	{name: "consecutiveSuccesses", deadlineOverrides: true, ceilingOverrides: true, waitsFor: consecutiveSuccesses},
	{name: "otherGatewayReady", waitsFor: otherGatewayReady},
	{name: "replacementsReady", waitsFor: replacementsReady},
}

// realDecisionsKnown: nothing is removed while the real decisions cannot be read (rule 7).
func realDecisionsKnown(pl *plan, _ *drainRow, _ int) string {
	return unless(pl.in.RealKnown, msgRealUnknown)
}

// pastDeadline reports a drain past the policy's maxDrainDuration (rule 8).
func pastDeadline(pl *plan, d *drainRow, _ int) string {
	return unless(!pl.pastOwnDeadline(d), msgPastDeadline)
}

// pastCeiling reports a drain past the hub's ceiling (rule 13).
func pastCeiling(pl *plan, d *drainRow, _ int) string {
	return unless(!pl.pastCeiling(d), msgPastCeiling)
}

// notSuspended: a suspended policy removes nothing by its gate or its deadline.
func notSuspended(pl *plan, _ *drainRow, _ int) string {
	return unless(!pl.policy.Suspend, msgSuspended)
}

// dnsWithdrawn: while DNS is followed, the cluster left the published records. The
// row says why it is still taken to be in DNS when the caller knows (DNS.Waiting).
func dnsWithdrawn(pl *plan, d *drainRow, _ int) string {
	if !pl.followDNS() || d.row.DNSWithdrawalTime != nil {
		return ""
	}
	if note := strings.TrimSpace(pl.in.DNS.Waiting[d.row.Name]); note != "" {
		// A note never holds the separator of the message's parts (DNSWaitingNote).
		return msgStillInDNS + msgNoteSeparator + strings.ReplaceAll(note, ";", ",")
	}
	return msgStillInDNS
}

// msgNoteSeparator separates "still published in DNS" from why.
const msgNoteSeparator = ": "

// DNSWaitingNote returns, from a row's message as Decide wrote it, why the cluster is
// still taken to be in DNS: the DNS.Waiting note it was given; "" when there is none.
// It is for showing what the manager last saw (the check command), never state.
func DNSWaitingNote(message string) string {
	for _, part := range strings.Split(message, msgSeparator) {
		if note, ok := strings.CutPrefix(part, msgStillInDNS+msgNoteSeparator); ok {
			return note
		}
	}
	return ""
}

// minDrainDuration: the cluster drained at least minDrainDuration (and the TTL) since
// its drain clock started.
func minDrainDuration(pl *plan, d *drainRow, _ int) string {
	return unless(pl.minDrainReached(d), msgMinDrain)
}

// consecutiveSuccesses: its last consecutiveSuccesses checks passed (rule 3).
func consecutiveSuccesses(pl *plan, d *drainRow, _ int) string {
	return unless(pl.checksPassed(d), waitingForChecks(pl.policy.ConsecutiveSuccesses-d.row.ConsecutiveSuccesses))
}

// otherGatewayReady: another cluster left in the proxy has the Gateway ready.
func otherGatewayReady(_ *plan, _ *drainRow, otherReady int) string {
	return unless(otherReady > 0, msgNoOtherReady)
}

// replacementsReady: with spec.replacement, at least minReadyClusters Active clusters
// have the Gateway ready and, with a replacement check, pass it.
func replacementsReady(pl *plan, _ *drainRow, _ int) string {
	if pl.policy.MinReadyClusters <= 0 {
		return ""
	}
	ready := pl.readyActive()
	what := "with the Gateway ready"
	if pl.policy.ReplacementCheck {
		what = "with the Gateway ready and passing replacement.metricsQuery"
	}
	return unless(int32(len(ready)) >= pl.policy.MinReadyClusters, fmt.Sprintf("waiting for %d Active clusters %s (%d now%s)",
		pl.policy.MinReadyClusters, what, len(ready), namesIn(ready)))
}

// namesIn is ": a, b" for the names, "" for none.
func namesIn(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return ": " + shortlist.Join(names, 5)
}

// gate walks the removal gate for d. It returns why d may leave the proxy now
// (RemovalGatePassed; RemovalMaxDrainDuration or RemovalHubMaxDrainDuration when only
// checks that the deadline or the hub's ceiling overrides failed), or "" when it
// stays, and the list of what its removal waits for.
func (pl *plan) gate(d *drainRow, otherReady int) (RemovalReason, []string) {
	deadlineRemoves, ceilingRemoves := pl.deadlineRemoves(d), pl.ceilingRemoves(d)
	var waiting []string
	held := false
	var overriddenBy RemovalReason
	for _, c := range removalGate {
		w := c.waitsFor(pl, d, otherReady)
		switch {
		case w == "":
		case c.reportOnly:
			waiting = append(waiting, w)
		case c.ceilingOverrides && ceilingRemoves:
			// The hub admin's word comes first.
			overriddenBy = RemovalHubMaxDrainDuration
		case c.deadlineOverrides && deadlineRemoves:
			if overriddenBy == "" {
				overriddenBy = RemovalMaxDrainDuration
			}
		default:
			waiting = append(waiting, w)
			held = true
		}
	}
	switch {
	case held:
		return "", waiting
	case overriddenBy != "":
		return overriddenBy, waiting
	default:
		return RemovalGatePassed, waiting
	}
}

// unless returns msg when ok is false, and "" when it is true.
func unless(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}
