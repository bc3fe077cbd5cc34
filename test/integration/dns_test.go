// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	hubdns "open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The test bed's DNS on its real parts: DNSEndpoints on the hub, external-dns's engine
// writing their records to etcd, CoreDNS answering them. The test is not parallel, so
// that no other test's DNSEndpoints of the zone are read meanwhile.

// dnsEndpointsResource is external-dns's DNSEndpoint, as the manager knows it.
var dnsEndpointsResource = hubdns.Resource

// dnsWait is how long a change may take to reach CoreDNS: the feeder makes a pass at
// every change of a DNSEndpoint, and at least every second.
const dnsWait = 30 * time.Second

func TestDNS(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	client := dnsEndpointClient(ctx, t, bed.Hub.Config)
	dns := startDNS(ctx, t, bed, testbed.DNSOptions{Zones: []string{"demo.example."}, OwnerID: "dns-test", LogQueries: true})
	ns, otherNS := bed.Hub.Namespace(t, "dns"), bed.Hub.Namespace(t, "dns-other")

	// Created: both addresses, and observedGeneration once they are in etcd.
	gateway := createDNSEndpoint(ctx, t, client, ns, "gateway", aRecord("gateway.demo.example", "A", 5, "127.0.0.1", "127.0.0.2"))
	waitApplied(ctx, t, client, gateway)
	wantAnswer(ctx, t, dns, "gateway.demo.example", "127.0.0.1", "127.0.0.2")

	// Updated to one address: CoreDNS answers only that one.
	gateway = updateEndpoints(ctx, t, client, gateway, aRecord("gateway.demo.example", "A", 5, "127.0.0.2"))
	waitApplied(ctx, t, client, gateway)
	wantAnswer(ctx, t, dns, "gateway.demo.example", "127.0.0.2")

	// Another namespace's DNSEndpoint, with an AAAA record and an A record of the same
	// name in one object; and a name outside the zone, which the domain filter leaves
	// out and which does not hold the others back.
	api := createDNSEndpoint(ctx, t, client, otherNS, "api",
		aRecord("api.demo.example", "A", 5, "127.0.0.3"),
		aRecord("api.demo.example", "AAAA", 5, "::1"),
		aRecord("api.other.example", "A", 5, "127.0.0.4"))
	waitApplied(ctx, t, client, api)
	wantAnswer(ctx, t, dns, "api.demo.example", "127.0.0.3", "::1")
	wantAnswer(ctx, t, dns, "gateway.demo.example", "127.0.0.2")

	// Deleted: CoreDNS no longer answers the name; the other namespace's stays.
	if err := client.Resource(dnsEndpointsResource).Namespace(ns).Delete(ctx, "gateway", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAnswer(ctx, t, dns, "gateway.demo.example")
	wantAnswer(ctx, t, dns, "api.demo.example", "127.0.0.3", "::1")
}

// aRecord is one record of a DNSEndpoint.
func aRecord(name, recordType string, ttl int64, targets ...string) hubdns.Record {
	return hubdns.Record{DNSName: name, RecordType: recordType, TTL: ttl, Targets: targets}
}

// dnsEndpointClient installs external-dns's DNSEndpoint CRD on cfg's cluster, when it
// is not there, and returns a client for its DNSEndpoints.
func dnsEndpointClient(ctx context.Context, t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	if err := testbed.InstallDNSEndpointCRD(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// startDNS starts CoreDNS and external-dns's engine on b (testbed.Bed.StartDNS), until
// the test ends.
func startDNS(ctx context.Context, t *testing.T, b *testbed.Bed, opts testbed.DNSOptions) *testbed.DNS {
	t.Helper()
	dns, err := b.StartDNS(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dns.Stop)
	return dns
}

// createDNSEndpoint creates a DNSEndpoint and deletes it when the test ends (the
// namespace's deletion does not: the bed runs no namespace controller).
func createDNSEndpoint(ctx context.Context, t *testing.T, client dynamic.Interface, ns, name string, records ...hubdns.Record) *unstructured.Unstructured {
	t.Helper()
	created, err := client.Resource(dnsEndpointsResource).Namespace(ns).Create(ctx, fixture.DNSEndpoint(ns, name, records...), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create DNSEndpoint %s/%s: %v", ns, name, err)
	}
	t.Cleanup(func() {
		err := client.Resource(dnsEndpointsResource).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete DNSEndpoint %s/%s: %v", ns, name, err)
		}
	})
	return created
}

// updateEndpoints replaces a DNSEndpoint's spec.endpoints and returns the object
// updated, read again on a conflict (the feeder writes its status).
func updateEndpoints(ctx context.Context, t *testing.T, client dynamic.Interface, obj *unstructured.Unstructured, records ...hubdns.Record) *unstructured.Unstructured {
	t.Helper()
	eps := fixture.DNSEndpointRecords(records...)
	resource := client.Resource(dnsEndpointsResource).Namespace(obj.GetNamespace())
	var updated *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := resource.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Object["spec"] = map[string]any{"endpoints": eps}
		updated, err = resource.Update(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update DNSEndpoint %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
	return updated
}

// waitApplied waits until the DNSEndpoint's status.observedGeneration is the
// generation of obj, which the feeder writes once that generation's records are in
// etcd.
func waitApplied(ctx context.Context, t *testing.T, client dynamic.Interface, obj *unstructured.Unstructured) {
	t.Helper()
	var observed int64
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, dnsWait, true, func(ctx context.Context) (bool, error) {
		got, err := client.Resource(dnsEndpointsResource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		observed, _, _ = unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		return observed == obj.GetGeneration(), nil
	})
	if err != nil {
		t.Fatalf("DNSEndpoint %s/%s: observedGeneration %d, want %d: %v", obj.GetNamespace(), obj.GetName(), observed, obj.GetGeneration(), err)
	}
}

// nameServer is a DNS server of the bed: its CoreDNS (testbed.DNS) or a resolver in
// front of it (testbed.Resolver).
type nameServer interface {
	Lookup(ctx context.Context, name string) ([]netip.Addr, error)
	Addr() string
}

// wantAnswer fails unless the server answers name with exactly the addresses want,
// now: once observedGeneration says the records are in etcd, CoreDNS, which reads etcd
// at every query, answers them.
func wantAnswer(ctx context.Context, t *testing.T, dns nameServer, name string, want ...string) {
	t.Helper()
	got, err := dns.Lookup(ctx, name)
	if err != nil {
		t.Fatalf("lookup %s at %s: %v", name, dns.Addr(), err)
	}
	if !slices.Equal(got, addrs(t, want...)) {
		t.Fatalf("%s answers %s with %v, want %v", dns.Addr(), name, got, want)
	}
}

// waitAnswer polls the server until it answers name with exactly the addresses want.
func waitAnswer(ctx context.Context, t *testing.T, dns nameServer, name string, want ...string) {
	t.Helper()
	wantAddrs := addrs(t, want...)
	var got []netip.Addr
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, dnsWait, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = dns.Lookup(ctx, name)
		return err == nil && slices.Equal(got, wantAddrs), nil
	})
	if err != nil {
		t.Fatalf("%s answers %s with %v, want %v: %v", dns.Addr(), name, got, want, err)
	}
}

// addrs parses addresses, sorted as DNS.Lookup returns them.
func addrs(t *testing.T, ss ...string) []netip.Addr {
	t.Helper()
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}
