// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/clients"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestViewPollsDNS: the view reports each change of what the DNS answers, and notes
// the first answer of cluster2's address only after the move, not before it, nor
// while cluster1's address is still in the answer.
func TestViewPollsDNS(t *testing.T) {
	ip1, ip2 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	var out lockedBuffer
	var answer clients.Answer
	answer.Publish(ip2) // before the move: not the move's milestone
	v := &view{con: newConsole(&out), lookup: answer.Lookup, clusterOf: map[netip.Addr]string{ip1: cluster1, ip2: cluster2}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		v.pollDNS(ctx)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	polledOnce := func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.polled
	}
	eventually(t, "a first poll", polledOnce)

	moveAt := time.Now()
	answer.Publish(ip1)
	eventually(t, "the answer of cluster1's address reported", func() bool {
		return strings.Contains(out.String(), "now answers gateway.demo.example with 10.0.0.1 (cluster1) (was 10.0.0.2 (cluster2))")
	})
	v.moved(moveAt)
	answer.Publish(ip1, ip2) // make-before-break: both, then cluster2's only
	eventually(t, "the answer of both addresses reported", func() bool {
		return strings.Contains(out.String(), "with 10.0.0.1 (cluster1), 10.0.0.2 (cluster2) (was 10.0.0.1 (cluster1))")
	})
	if tl := v.timeline(moveAt); tl.DNSMoved.Seen {
		t.Fatalf("DNS noted as moved while it still answers cluster1's address: %+v", tl)
	}
	published := time.Now()
	answer.Publish(ip2)
	eventually(t, "DNS noted as moved", func() bool { return v.timeline(moveAt).DNSMoved.Seen })
	if tl := v.timeline(moveAt); tl.DNSMoved.After < published.Sub(moveAt) || !tl.Edited.Seen || tl.Edited.After != 0 {
		t.Errorf("timeline %+v: DNS moved before cluster2's address alone was published at t+%s", tl, published.Sub(moveAt))
	}
	if strings.Count(out.String(), "now answers") != 3 {
		t.Errorf("want three changes of the answer reported:\n%s", out.String())
	}
}

// eventually polls cond until it holds, and fails the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testbed.EventuallyTrue(t, 10*time.Second, what, cond)
}
