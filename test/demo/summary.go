// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
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
	// ShareSeen is cluster1's share as Prometheus computed it in the last line printed
	// before the removal.
	ShareSeen float64
	// Requests are the clients' counts.
	Requests clientCounts
	// Took is the whole demo's duration, set-up included.
	Took time.Duration
	// Components names the real parts the migration ran on: the Gateway API
	// implementation and the metrics pipeline the check read.
	Components string
}

// ok reports whether the migration did what it should: cluster1 removed, cluster2
// kept, not before minDrainDuration, and no client request failed.
func (s *summary) ok() bool {
	return s.Cluster1Removed && s.Cluster2Kept && s.DrainDuration >= s.MinDrainDuration && s.Requests.Failed == 0
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
	verdict := "OK: the Gateway moved without a failed request"
	if !s.ok() {
		verdict = "FAILED: see above"
	}
	fmt.Fprintf(&b, "%s. The demo took %s.\n", verdict, round(s.Took))
	io.WriteString(w, b.String())
}

func round(d time.Duration) time.Duration {
	return d.Round(100 * time.Millisecond)
}
