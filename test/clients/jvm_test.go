// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package clients

import (
	"net/netip"
	"testing"
	"time"
)

// TestJVMClientsFollowTheirCache runs real JVMs against two gateways: with a 1 s
// address cache they move to the second gateway once the first closes its
// connections; with a cache kept for ever (networkaddress.cache.ttl=-1) they dial the
// first again, whatever DNS says.
func TestJVMClientsFollowTheirCache(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ttl   int
		moves bool
	}{{"cache 1s", 1, true}, {"cache for ever", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateways(t, "one", "two")
			ip1, ip2, gw1 := g.ips[0], g.ips[1], g.gateways[0]
			f := NewJVMFleet(JVMConfig{Hostname: testHostname, Port: g.port, JVMs: 1, Workers: 3, Every: 50 * time.Millisecond,
				CacheTTL: tc.ttl, Lookup: g.answer.Lookup, Clusters: map[string]netip.Addr{"one": ip1, "two": ip2}, Dir: t.TempDir(), Seed: 1})
			if err := f.Start(); err != nil {
				t.Fatal(err)
			}
			defer f.Halt()
			eventually(t, "every worker answered by one", func() bool { return f.Bound()[ip1] == 3 })
			g.answer.Publish(ip2)
			before := f.Counts().ByCluster["one"]
			eventually(t, "30 more requests", func() bool { return f.Counts().ByCluster["one"] >= before+30 })
			if c := f.Counts(); c.ByCluster["two"] != 0 {
				t.Fatalf("the JVM's pooled connections moved while they lived: %+v", c)
			}
			gw1.closing.Store(true)
			if tc.moves {
				eventually(t, "every worker on two once one closes its connections and the cache expires", func() bool { return f.Bound()[ip2] == 3 })
			} else {
				before := f.Counts().ByCluster["one"]
				eventually(t, "30 more requests", func() bool { return f.Counts().ByCluster["one"] >= before+30 })
				if c := f.Counts(); c.ByCluster["two"] != 0 {
					t.Fatalf("a JVM that caches for ever moved: %+v", c)
				}
			}
			f.Halt()
			if c := f.Counts(); c.Failed != 0 || c.Served == 0 {
				t.Errorf("counts %+v: want requests served and none failed: %v", c, c.FailureSamples)
			}
		})
	}
}
