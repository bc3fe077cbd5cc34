// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

func TestClientTTLs(t *testing.T) {
	got := clientTTLs(6, ttlRange{2 * time.Second, 10 * time.Second}, ttlRange{40 * time.Second, 60 * time.Second}, 2)
	want := []time.Duration{2 * time.Second, 4666666666, 7333333333, 10 * time.Second, 40 * time.Second, 60 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Round(time.Millisecond) != want[i].Round(time.Millisecond) {
			t.Errorf("TTL %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

// TestClientsFollowDNSAndRetry runs the clients against two gateways without a hub:
// the DNS moves from the first to the second, the clients follow as their TTLs end,
// and once the first gateway stops those still holding its address resolve again and
// retry. No request may fail.
func TestClientsFollowDNSAndRetry(t *testing.T) {
	ip1, ip2 := netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")
	port, err := commonFreePort(ip1, ip2)
	if err != nil {
		t.Fatal(err)
	}
	metricsPort, err := commonFreePort(ip1, ip2)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(ip netip.Addr, p int) string { return net.JoinHostPort(ip.String(), strconv.Itoa(p)) }
	gw1 := newGatewayServer("one", addr(ip1, port), addr(ip1, metricsPort))
	gw2 := newGatewayServer("two", addr(ip2, port), addr(ip2, metricsPort))
	for _, g := range []*gatewayServer{gw1, gw2} {
		if err := g.start(); err != nil {
			t.Fatal(err)
		}
		defer g.stop()
	}
	dns, err := newDNSServer(gatewayHostname)
	if err != nil {
		t.Fatal(err)
	}
	defer dns.close()
	dns.publish([]netip.Addr{ip1})

	// Three clients that follow within a second, one that holds on for an hour.
	ttls := []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Hour}
	f := newClientFleet(ttls, 50*time.Millisecond, dns.addr(), port, 1)
	if err := f.start(); err != nil {
		t.Fatal(err)
	}
	defer f.halt()
	eventually(t, "every client holding "+ip1.String(), func() bool { return f.holding()[ip1] == 4 })
	dns.publish([]netip.Addr{ip2})
	eventually(t, "the short-TTL clients moving to "+ip2.String(), func() bool { return f.holding()[ip2] == 3 })
	if h := f.holding(); h[ip1] != 1 || h[ip2] != 3 {
		t.Errorf("clients holding: %v, want one on %s and three on %s", h, ip1, ip2)
	}
	gw1.stop()
	eventually(t, "the long-TTL client retrying on "+ip2.String(), func() bool {
		return f.stats.counts().Retried >= 1 && f.holding()[ip2] == 4
	})
	f.halt()

	c := f.stats.counts()
	if c.Failed != 0 {
		t.Errorf("%d requests failed: %v", c.Failed, c.FailureSamples)
	}
	if c.Retried < 1 {
		t.Errorf("the long-TTL client should have retried once its gateway stopped: %+v", c)
	}
	if c.ByCluster["one"] == 0 || c.ByCluster["two"] == 0 || c.Served+c.Retried != c.ByCluster["one"]+c.ByCluster["two"] {
		t.Errorf("answers by cluster do not add up: %+v", c)
	}
	if h := f.holding(); h[ip2] != 4 {
		t.Errorf("after the retry every client should hold %s: %v", ip2, h)
	}
}

// eventually polls cond until it holds, and fails the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
