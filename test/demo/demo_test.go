// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestDemoShort runs the demo's scenario in its short form on the test bed and checks
// its summary: cluster1 removed, cluster2 kept, the drain no shorter than
// minDrainDuration, cluster1's share at removal within the threshold, and not one
// failed client request, in the returned summary and in what the demo printed.
func TestDemoShort(t *testing.T) {
	if msg := testbed.Unconfigured(); msg != "" {
		t.Skip(msg)
	}
	cfg := shortConfig()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	s, err := run(ctx, cfg, &out, &errOut)
	t.Log("the demo's output:\n" + out.String())
	if err != nil {
		t.Log("the demo's errors and logs:\n" + errOut.String())
		t.Fatalf("the demo failed: %v", err)
	}

	if !s.Cluster1Removed {
		t.Error("cluster1 was not removed (proxy and Gateway)")
	}
	if !s.Cluster2Kept {
		t.Error("cluster2 was not kept as the only cluster with the Gateway")
	}
	if s.DrainDuration < cfg.minDrainDuration {
		t.Errorf("cluster1 drained for %s, less than minDrainDuration %s", s.DrainDuration, cfg.minDrainDuration)
	}
	if s.ChecksPassed < cfg.consecutiveSuccesses {
		t.Errorf("cluster1 removed after %d passed checks, want %d", s.ChecksPassed, cfg.consecutiveSuccesses)
	}
	if share := parsePercent(t, s.ShareAtRemoval); share > cfg.maxPercent {
		t.Errorf("cluster1's share at removal %g%% is over the threshold %g%%", share, cfg.maxPercent)
	}
	if s.Requests.Failed != 0 {
		t.Errorf("%d client requests failed: %v", s.Requests.Failed, s.Requests.FailureSamples)
	}
	if s.DNSLookups.Count != 0 {
		t.Errorf("%d lookups of %s got no address during the move: %v", s.DNSLookups.Count, gatewayHostname, s.DNSLookups.Samples)
	}
	// Make-before-break on the real DNS: CoreDNS answered cluster2's address only once
	// its Gateway was Programmed, DNS let go of cluster1 no sooner (the policy's times
	// are whole seconds), and cluster1's minimum drain counted from then.
	tl := s.Timeline
	if !tl.Programmed.Seen || !tl.DNSMoved.Seen || !tl.DNSWithdrawn.Seen || !tl.UnderThreshold.Seen {
		t.Errorf("the timeline lacks a milestone: %+v", tl)
	}
	if tl.DNSMoved.After < tl.Programmed.After {
		t.Errorf("CoreDNS answered cluster2 only at %s, before its Gateway was Programmed at %s", tl.DNSMoved, tl.Programmed)
	}
	if tl.DNSWithdrawn.After < tl.Programmed.After-time.Second {
		t.Errorf("DNS let go of cluster1 at %s, before cluster2's Gateway was Programmed at %s", tl.DNSWithdrawn, tl.Programmed)
	}
	if s.RemovedAfterDNS < cfg.minDrainDuration {
		t.Errorf("cluster1 was removed %s after DNS let go of it, before minDrainDuration %s", s.RemovedAfterDNS, cfg.minDrainDuration)
	}
	if s.Requests.Served == 0 || s.Requests.ByCluster[cluster1] == 0 || s.Requests.ByCluster[cluster2] == 0 {
		t.Errorf("both clusters should have answered requests: %+v", s.Requests)
	}

	printed := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cluster1 left the proxy Placement \S+ after the move: it drained for \S+ by the policy's status \(minDrainDuration 10s\)`),
		regexp.MustCompile(`(?m)^  served +[1-9][0-9]*$`),
		regexp.MustCompile(`(?m)^  retried, then served +[0-9]+ `),
		regexp.MustCompile(`(?m)^  failed +0$`),
		regexp.MustCompile(`(?m)^OK: the Gateway moved without a failed request or lookup`),
		regexp.MustCompile(`(?m)^Ran on: Traefik \(\S+\) programming the Gateway on both spokes.* through CoreDNS, written by external-dns's engine from the policy's DNSEndpoint`),
		regexp.MustCompile(`(?m)^  t\+\S+ +CoreDNS answers gateway\.demo\.example with cluster2's address only`),
		regexp.MustCompile(`(?m)^cluster1 was removed \S+ after DNS let go of it`),
	} {
		if !want.MatchString(printed) {
			t.Errorf("the summary printed lacks %q", want)
		}
	}
	if !strings.Contains(printed, "proxy Placement "+proxyName+" now lists cluster2") {
		t.Errorf("the live view did not report the proxy dropping cluster1")
	}
}

func parsePercent(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatalf("share at removal %q: %v", s, err)
	}
	return f
}
