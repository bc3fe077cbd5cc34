// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"open-cluster-management.io/traffic-migration/test/clients"
)

// summary is the outcome of the demo, as printed at its end and checked by its test.
type summary struct {
	// Form is "full" or "short".
	Form string
	// Clients is the number of clients.
	Clients int

	// Cluster1Removed: the proxy dropped cluster1 and its Gateway was deleted.
	Cluster1Removed bool
	// Cluster2Kept: cluster2 is in the proxy and its Gateway exists at the end.
	Cluster2Kept bool
	// DrainDuration is how long cluster1 drained, from the policy's status: from the
	// drain's start to its removal.
	DrainDuration time.Duration
	// MinDrainDuration is the policy's minDrainDuration.
	MinDrainDuration time.Duration
	// ShareAtRemoval is cluster1's share of the traffic, in percent, in the policy's
	// last check before the removal; MaxPercent is the threshold.
	ShareAtRemoval string
	MaxPercent     float64
	// ChecksPassed is the run of passed checks at the removal, of ChecksNeeded.
	ChecksPassed, ChecksNeeded int32
	// RemovalMessage is the policy's message on cluster1's Removed row.
	RemovalMessage string
	// RemovedAfter and GatewayGoneAfter are the times from the move to the proxy's
	// dropping cluster1 and to its Gateway's deletion, as the demo saw them.
	RemovedAfter, GatewayGoneAfter time.Duration
	// Timeline is the move's milestones, from the administrator's edit of the real
	// Placement to cluster1's removal (RemovedAfter).
	Timeline timeline
	// RemovedAfterDNS is the time from DNS letting go of cluster1 (its row's
	// dnsWithdrawalTime) to its removal (its removalTime), by the policy's status;
	// zero when its row has no dnsWithdrawalTime.
	RemovedAfterDNS time.Duration
	// DNSTTL is the records' TTL (spec.dns.ttl); LongestClientTTL is the longest
	// time a client keeps an answer: once that long has passed since DNS let go of
	// cluster1, no client can still hold its address.
	DNSTTL, LongestClientTTL time.Duration
	// ShareSeen is cluster1's share as Prometheus computed it in the last line printed
	// before the removal.
	ShareSeen float64
	// Requests are the clients' counts.
	Requests clients.Counts
	// DNSLookups are the demo's own polls of CoreDNS (every dnsPollEvery) that got
	// no address for the gateway's name: each is a moment a client resolving then
	// would have failed, so the demo fails with any.
	DNSLookups dnsFailures
	// Took is the whole demo's duration, set-up included.
	Took time.Duration
	// Components names the real parts the migration ran on: the Gateway API
	// implementation and the metrics pipeline the check read.
	Components string
}

// milestone is a moment of the move, as a duration since the move; Seen is false when
// it was not seen.
type milestone struct {
	After time.Duration
	Seen  bool
}

func (m milestone) String() string {
	if !m.Seen {
		return "not seen"
	}
	return fmt.Sprintf("t%+.1fs", m.After.Seconds())
}

// timeline is the move's milestones.
type timeline struct {
	// Edited is when the administrator's edit of the real Placement was written.
	Edited milestone
	// Programmed is when cluster2's Gateway was first seen Programmed, as Traefik
	// wrote it in the Gateway's status on cluster2.
	Programmed milestone
	// DNSMoved is the first of the demo's polls of CoreDNS that answered cluster2's
	// address only.
	DNSMoved milestone
	// DNSWithdrawn is cluster1's row's dnsWithdrawalTime (whole seconds, rounded up):
	// when the manager saw cluster1's address gone from the DNSEndpoint and
	// external-dns having applied it.
	DNSWithdrawn milestone
	// UnderThreshold is cluster1's first passing check (whole seconds, rounded up),
	// from the policy's check history, and UnderThresholdValue its value.
	UnderThreshold      milestone
	UnderThresholdValue string
}

// ok reports whether the migration did what it should: cluster1 removed, cluster2
// kept, not before minDrainDuration, no client request failed, and DNS never left the
// gateway's name without an address.
func (s *summary) ok() bool {
	return s.Cluster1Removed && s.Cluster2Kept && s.DrainDuration >= s.MinDrainDuration && s.Requests.Failed == 0 &&
		s.DNSLookups.Count == 0
}

// print writes the summary.
func (s *summary) print(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n===== Summary (%s form) =====\n", s.Form)
	if s.Components != "" {
		fmt.Fprintf(&b, "%s\n", s.Components)
	}
	if s.Cluster1Removed {
		fmt.Fprintf(&b, "cluster1 left the proxy Placement %s after the move: it drained for %s by the policy's status (minDrainDuration %s);\n",
			round(s.RemovedAfter), round(s.DrainDuration), round(s.MinDrainDuration))
		fmt.Fprintf(&b, "  its share of the traffic at removal: %s in the policy's last check (threshold %g%%), %d/%d checks passed in a row;\n",
			percent(s.ShareAtRemoval), s.MaxPercent, s.ChecksPassed, s.ChecksNeeded)
		fmt.Fprintf(&b, "  its Gateway was deleted %s after the move, by the work agent, once the ManifestWorkReplicaSet dropped it.\n", round(s.GatewayGoneAfter))
	} else {
		fmt.Fprintf(&b, "cluster1 was NOT removed.\n")
	}
	s.printTimeline(&b)
	if s.Cluster2Kept {
		fmt.Fprintf(&b, "cluster2 kept its Gateway and is the only cluster in the proxy Placement.\n")
	} else {
		fmt.Fprintf(&b, "cluster2 does NOT hold the Gateway alone.\n")
	}
	fmt.Fprintf(&b, "Client requests (%d clients):\n", s.Clients)
	fmt.Fprintf(&b, "  served                 %7d\n", s.Requests.Served)
	fmt.Fprintf(&b, "  retried, then served   %7d  (first attempt failed to connect, or Traefik had no route for the name any more; resolved again and retried once)\n", s.Requests.Retried)
	fmt.Fprintf(&b, "  failed                 %7d\n", s.Requests.Failed)
	clusters := make([]string, 0, len(s.Requests.ByCluster))
	for c := range s.Requests.ByCluster {
		clusters = append(clusters, c)
	}
	slices.Sort(clusters)
	for _, c := range clusters {
		fmt.Fprintf(&b, "  answered by %-10s %7d\n", c, s.Requests.ByCluster[c])
	}
	for _, f := range s.Requests.FailureSamples {
		fmt.Fprintf(&b, "  failure: %s\n", f)
	}
	fmt.Fprintf(&b, "Lookups of %s by the demo's poll of CoreDNS that got no address: %d\n", gatewayHostname, s.DNSLookups.Count)
	for _, f := range s.DNSLookups.Samples {
		fmt.Fprintf(&b, "  failed lookup at %s\n", f)
	}
	verdict := "OK: the Gateway moved without a failed request or lookup"
	if !s.ok() {
		verdict = "FAILED: see above"
	}
	fmt.Fprintf(&b, "%s. The demo took %s.\n", verdict, round(s.Took))
	io.WriteString(w, b.String())
}

// printTimeline writes the move's milestones and how long cluster1 stayed after DNS
// let go of it, against the longest client TTL.
func (s *summary) printTimeline(b *strings.Builder) {
	tl := s.Timeline
	fmt.Fprintf(b, "Timeline of the move (t=0: the move; the policy's own times are whole seconds, rounded up):\n")
	fmt.Fprintf(b, "  %-9s the administrator edited Placement %s to select cluster2\n", tl.Edited, placementName)
	fmt.Fprintf(b, "  %-9s cluster2's Gateway Programmed (Traefik's status on cluster2, which its agent reports)\n", tl.Programmed)
	fmt.Fprintf(b, "  %-9s CoreDNS answers %s with cluster2's address only (first of the demo's polls)\n", tl.DNSMoved, gatewayHostname)
	fmt.Fprintf(b, "  %-9s DNS let go of cluster1 (its row's dnsWithdrawalTime: its address out of the DNSEndpoint, applied by external-dns)\n", tl.DNSWithdrawn)
	under := "cluster1's share under the threshold: its first passing check, from the policy's history"
	if tl.UnderThresholdValue != "" {
		under += " (" + percent(tl.UnderThresholdValue) + ")"
	}
	fmt.Fprintf(b, "  %-9s %s\n", tl.UnderThreshold, under)
	removed := milestone{After: s.RemovedAfter, Seen: s.Cluster1Removed}
	fmt.Fprintf(b, "  %-9s cluster1 removed from the proxy Placement %s\n", removed, proxyName)
	switch {
	case !s.Cluster1Removed:
	case !tl.DNSWithdrawn.Seen:
		fmt.Fprintf(b, "cluster1's row has no dnsWithdrawalTime: DNS had not let go of it when it was removed.\n")
	case s.RemovedAfterDNS >= s.LongestClientTTL:
		fmt.Fprintf(b, "cluster1 was removed %s after DNS let go of it, no sooner than the longest client TTL (%s): no client could still hold its address.\n",
			round(s.RemovedAfterDNS), round(s.LongestClientTTL))
	default:
		fmt.Fprintf(b, "cluster1 was removed %s after DNS let go of it (its minimum drain counts from then, never less than the records' TTL, %s), %s before the longest client TTL (%s): the clients that keep an answer longer could still hold its address, and resolved again when its gateway was gone.\n",
			round(s.RemovedAfterDNS), round(s.DNSTTL), round(s.LongestClientTTL-s.RemovedAfterDNS), round(s.LongestClientTTL))
	}
}

func round(d time.Duration) time.Duration {
	return d.Round(100 * time.Millisecond)
}
