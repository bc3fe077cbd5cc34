// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestResolvers runs the caching resolvers users have between their clients and the
// authoritative DNS, Debian's Unbound and dnsmasq, in front of the bed's CoreDNS, and
// checks what each does when a record changes, as the strategies benchmark's worlds
// count on: at their defaults they follow the record's TTL (1 s here); set to a
// minimum TTL they keep the old answer past it; and with serve-expired, Unbound still
// answers once the authoritative server is gone, where at its defaults it fails.
func TestResolvers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	client := dnsEndpointClient(ctx, t, bed.Hub.Config)
	dns := startDNS(ctx, t, bed, testbed.DNSOptions{Zones: []string{"resolvers.example."}, OwnerID: "resolvers-test"})
	ns := bed.Hub.Namespace(t, "resolvers")
	const name = "gateway.resolvers.example"
	gateway := createDNSEndpoint(ctx, t, client, ns, "gateway", aRecord(name, "A", 1, "127.0.0.1"))
	waitApplied(ctx, t, client, gateway)
	wantAnswer(ctx, t, dns, name, "127.0.0.1")

	// Far longer than the test runs, so that a cached answer cannot expire in it.
	const minTTL = 10 * time.Minute
	following := []testbed.ResolverOptions{{Kind: testbed.Unbound}, {Kind: testbed.Unbound, ServeExpired: true}, {Kind: testbed.Dnsmasq}}
	keeping := []testbed.ResolverOptions{{Kind: testbed.Unbound, MinTTL: minTTL}, {Kind: testbed.Dnsmasq, MinTTL: minTTL}}
	start := func(opts testbed.ResolverOptions) *testbed.Resolver {
		r, err := bed.StartResolver(ctx, dns, opts)
		if err != nil {
			t.Fatalf("start %s: %v", opts, err)
		}
		t.Cleanup(r.Stop)
		// The first question fills the resolver's cache.
		wantAnswer(ctx, t, r, name, "127.0.0.1")
		return r
	}
	var follow, keep []*testbed.Resolver
	for _, opts := range following {
		follow = append(follow, start(opts))
	}
	for _, opts := range keeping {
		keep = append(keep, start(opts))
	}

	// The record moves: CoreDNS answers the new address at once, the resolvers at
	// their defaults within the TTL, and those with a minimum TTL still the old one.
	gateway = updateEndpoints(ctx, t, client, gateway, aRecord(name, "A", 1, "127.0.0.2"))
	waitApplied(ctx, t, client, gateway)
	wantAnswer(ctx, t, dns, name, "127.0.0.2")
	for _, r := range follow {
		waitAnswer(ctx, t, r, name, "127.0.0.2")
	}
	for _, r := range keep {
		wantAnswer(ctx, t, r, name, "127.0.0.1")
	}

	// The authoritative server goes: Unbound at its defaults fails once the TTL is
	// out, and with serve-expired answers the last address it had.
	dns.Stop()
	unbound, serveExpired := follow[0], follow[1]
	var failed error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, dnsWait, true, func(ctx context.Context) (bool, error) {
		got, err := unbound.Lookup(ctx, name)
		failed = err
		return err != nil || len(got) == 0, nil
	})
	if err != nil {
		t.Fatalf("%s at %s still answers %s after CoreDNS stopped: %v", unbound.Options, unbound.Addr(), name, err)
	}
	t.Logf("%s, CoreDNS stopped: %v", unbound.Options, failed)
	wantAnswer(ctx, t, serveExpired, name, "127.0.0.2")
}
