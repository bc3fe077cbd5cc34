// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestDNSFollowsRealPlacement is the move with spec.dns, on real DNS software: the
// manager publishes the real Placement's Programmed clusters in a DNSEndpoint, which
// external-dns's engine writes into CoreDNS's zone.
//
//   - Make-before-break: while cluster2 (now the real Placement's) does not have the
//     Gateway Programmed, CoreDNS keeps answering cluster1's address, and cluster1's
//     drain clock has not started: its checks pass, yet it stays, "still published in
//     DNS".
//   - Once cluster2 is Programmed, CoreDNS answers cluster2's address only, cluster1's
//     row records when DNS let go (after external-dns applied it and CoreDNS, the
//     zone's authoritative server in spec.dns.verify.nameservers, stopped answering
//     cluster1's address), and cluster1 leaves no sooner than the TTL after that.
func TestDNSFollowsRealPlacement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m, dns, hostname := newDNSMove(t, "dnsmove", "tm.test.", "192.0.2.11", "192.0.2.12")
	f := m.f
	m.traffic.SetByValue(map[string]float64{m.c1: 100, m.c2: 0})

	p := m.policy()
	const ttl = 3 * time.Second
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: time.Second} // the TTL is the floor
	p.Spec.DNS = dnsPublishing(hostname, ttl, dns.Addr())
	f.createPolicy(t, p)

	published := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	})
	if got := published.Status.DNS; got == nil || !slices.Equal(got.PublishedClusters, []string{m.c1}) || got.EndpointName != p.Name {
		t.Fatalf("status.dns %+v, want cluster1 published in DNSEndpoint %s", got, p.Name)
	}
	waitAnswer(ctx, t, dns, hostname, "192.0.2.11")
	checkDNSEndpoint(ctx, t, m.ns, p.Name, hostname, 3, []string{m.c1}, "192.0.2.11")

	// The move, while cluster2 cannot serve: DNS keeps cluster1, and so does the proxy.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	m.moveToC2(t)
	held := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses
	})
	if r := fixture.PolicyRow(held, m.c1); r.DNSWithdrawalTime != nil || !strings.Contains(r.Message, "still published in DNS") {
		t.Errorf("cluster1 passed its checks while still in DNS; its row: %+v", *r)
	}
	wantAnswer(ctx, t, dns, hostname, "192.0.2.11")
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)

	// cluster2 is Programmed: DNS moves, in two steps, and cluster1's clock starts
	// then. A resolver polling CoreDNS every 50 ms never finds the name without an
	// address, and no version of the DNSEndpoint swaps an address for another.
	writes := watchTargets(ctx, t, m.ns, p.Name)
	answers := dns.WatchAnswers(ctx, hostname, 50*time.Millisecond)
	lastOld := watchLastAnswered(ctx, dns, hostname, "192.0.2.11")
	programmed := time.Now()
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c2})
	waitAnswer(ctx, t, dns, hostname, "192.0.2.12")
	withdrawn := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.DNSWithdrawalTime != nil
	})
	left := fixture.PolicyRow(withdrawn, m.c1).DNSWithdrawalTime.Time
	if left.Before(programmed.Truncate(time.Second)) {
		t.Errorf("cluster1 left DNS at %s, before cluster2 was Programmed at %s", left, programmed)
	}
	// CoreDNS answered cluster1's address to a query sent at stillAnswered: DNS had not
	// let go of it by then.
	if stillAnswered := lastOld(); left.Before(stillAnswered) {
		t.Errorf("cluster1 left DNS at %s, before CoreDNS stopped answering its address (it still did to a query at %s)",
			left.Format(time.RFC3339Nano), stillAnswered.Format(time.RFC3339Nano))
	}
	checkDNSEndpoint(ctx, t, m.ns, p.Name, hostname, 3, []string{m.c2}, "192.0.2.12")

	removed := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	if r := fixture.PolicyRow(removed, m.c1); r.RemovalTime.Sub(left) < ttl {
		t.Errorf("cluster1 was removed %s after it left DNS, before the TTL (%s)", r.RemovalTime.Sub(left), ttl)
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 10*time.Second)

	seen := answers.Stop()
	if seen.Polls < 10 || seen.Failed > 0 {
		t.Errorf("a resolver polling CoreDNS every 50 ms: %d of %d polls got no address: %v", seen.Failed, seen.Polls, seen.Failures)
	}
	versions := writes()
	want := [][]string{{"192.0.2.11"}, {"192.0.2.11", "192.0.2.12"}, {"192.0.2.12"}}
	if !slices.EqualFunc(versions, want, slices.Equal) {
		t.Errorf("the DNSEndpoint's targets went %v, want %v: the new address beside the old, then the old withdrawn", versions, want)
	}
}

// newDNSMove is newMigration with a CoreDNS of its own for zone, fed from the
// namespace's DNSEndpoints, and the name hostname (the namespace's, in zone) for its
// policy to publish: cluster1's Gateway has addr1 and is ready, cluster2's has addr2
// and is not ready yet.
func newDNSMove(t *testing.T, prefix, zone, addr1, addr2 string) (m *migration, dns *testbed.DNS, hostname string) {
	t.Helper()
	ctx := t.Context()
	m = newMigration(t, prefix)
	hostname = m.ns + "." + strings.TrimSuffix(zone, ".")
	if err := testbed.InstallDNSEndpointCRD(ctx, bed.Hub.Config); err != nil {
		t.Fatal(err)
	}
	dns = startDNS(ctx, t, bed, testbed.DNSOptions{Zones: []string{zone}, Namespace: m.ns, OwnerID: m.ns})
	reportAddresses(t, m.f, m.c1, addr1)
	reportAddresses(t, m.f, m.c2, addr2)
	m.f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, false, map[string]string{"cluster": m.c2})
	return m, dns, hostname
}

// dnsPublishing is a policy's spec.dns: hostname published with the TTL, verified on
// the name servers.
func dnsPublishing(hostname string, ttl time.Duration, nameservers ...string) *trafficv1alpha1.DNSPublishing {
	servers := make([]trafficv1alpha1.Nameserver, 0, len(nameservers))
	for _, ns := range nameservers {
		servers = append(servers, trafficv1alpha1.Nameserver(ns))
	}
	return &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{trafficv1alpha1.Hostname(hostname)},
		TTL:    &metav1.Duration{Duration: ttl},
		Verify: &trafficv1alpha1.DNSVerification{Nameservers: servers}}
}

// watchLastAnswered polls CoreDNS for name every 20 ms from now on, and returns a
// function that stops the polls and returns when the last query that got addr in its
// answer was sent (zero when none did): CoreDNS still answered addr then.
func watchLastAnswered(ctx context.Context, dns *testbed.DNS, name, addr string) func() time.Time {
	ctx, cancel := context.WithCancel(ctx)
	want := netip.MustParseAddr(addr)
	var last time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			sent := time.Now()
			if got, err := dns.Lookup(ctx, name); err == nil && slices.Contains(got, want) {
				last = sent
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() time.Time {
		cancel()
		<-done
		return last
	}
}

// watchTargets watches a DNSEndpoint from now on and returns a function that stops
// the watch and returns its A targets as each version had them, from the version
// there now, a change of targets each.
func watchTargets(ctx context.Context, t *testing.T, ns, name string) func() [][]string {
	t.Helper()
	client, err := dynamic.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	resource := client.Resource(dnsEndpointsResource).Namespace(ns)
	obj, err := resource.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read DNSEndpoint %s/%s: %v", ns, name, err)
	}
	w, err := resource.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: obj.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch DNSEndpoint %s/%s: %v", ns, name, err)
	}
	var versions [][]string
	add := func(ts []string) {
		if len(versions) == 0 || !slices.Equal(versions[len(versions)-1], ts) {
			versions = append(versions, ts)
		}
	}
	add(fixture.DNSEndpointTargets(obj))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Modified {
				add(fixture.DNSEndpointTargets(u))
			}
		}
	}()
	return func() [][]string {
		w.Stop()
		<-done
		return versions
	}
}

// TestDNSEndpointNotOurs: a DNSEndpoint of the policy's name that the manager did not
// create is left as it is, the policy says so, and no drain starts meanwhile.
func TestDNSEndpointNotOurs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := newMigration(t, "dnsconflict")
	f := m.f
	client := dnsEndpointClient(ctx, t, bed.Hub.Config)
	p := m.policy()
	// No DNS server runs: nothing could confirm a withdrawal but external-dns.
	p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.conflict.test"},
		Verify: &trafficv1alpha1.DNSVerification{Mode: trafficv1alpha1.DNSVerifyExternalDNS}}
	foreign := createDNSEndpoint(ctx, t, client, m.ns, p.Name, aRecord("gw.conflict.test", "A", 60, "127.0.0.99"))
	reportAddresses(t, f, m.c1, "192.0.2.11")
	f.createPolicy(t, p)

	got := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		return c != nil && c.Reason == trafficv1alpha1.ReasonDNSEndpointConflict
	})
	if c := meta.FindStatusCondition(got.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); !strings.Contains(c.Message, "is not this manager's") {
		t.Errorf("the condition should say the DNSEndpoint is someone else's: %q", c.Message)
	}
	after, err := client.Resource(dnsEndpointsResource).Namespace(m.ns).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != foreign.GetResourceVersion() {
		t.Errorf("the manager wrote someone else's DNSEndpoint: %v", after.Object)
	}
}

// reportAddresses reports the target Gateway's addresses on cluster, as its agent does.
func reportAddresses(t *testing.T, f *fleet, cluster string, addresses ...string) {
	t.Helper()
	if err := f.ReportGatewayAddresses(t.Context(), cluster, gatewayNamespace, gatewayName, addresses...); err != nil {
		t.Fatal(err)
	}
}

// checkDNSEndpoint checks what the policy's DNSEndpoint publishes: one A record for
// hostname with the TTL and targets, and the clusters in its annotation.
func checkDNSEndpoint(ctx context.Context, t *testing.T, ns, name, hostname string, ttl int64, clusters []string, targets ...string) {
	t.Helper()
	client, err := dynamic.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := client.Resource(dnsEndpointsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read DNSEndpoint %s/%s: %v", ns, name, err)
	}
	if got := obj.GetLabels()[trafficv1alpha1.PolicyLabel]; got != name {
		t.Errorf("DNSEndpoint's policy label %q, want %q", got, name)
	}
	if got := obj.GetAnnotations()[trafficv1alpha1.PublishedClustersAnnotation]; got != strings.Join(clusters, ",") {
		t.Errorf("DNSEndpoint publishes clusters %q, want %v", got, clusters)
	}
	endpoints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("DNSEndpoint has %d endpoints, want 1: %v", len(endpoints), endpoints)
	}
	e := endpoints[0].(map[string]any)
	gotTargets, _, _ := unstructured.NestedStringSlice(e, "targets")
	gotTTL, _, _ := unstructured.NestedInt64(e, "recordTTL")
	if e["dnsName"] != hostname || e["recordType"] != "A" || gotTTL != ttl || !slices.Equal(gotTargets, targets) {
		t.Errorf("DNSEndpoint's record %v, want A %s TTL %d %v", e, hostname, ttl, targets)
	}
}
