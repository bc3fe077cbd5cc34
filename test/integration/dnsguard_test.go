// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestDNSGuard is DNS on a shared hub, as a hostile tenant and a broken spoke would try
// it, on the real API server:
//
//   - tenant A's cluster reports, beside its real address, addresses no client can
//     reach a Gateway at: only the real one is published, the row and an event say
//     which were refused and why;
//   - tenant B's policy claims A's hostname: B publishes nothing, and says that a
//     policy of another namespace holds it, without naming it;
//   - A's DNSEndpoint deleted and edited by hand: the manager writes it again, with
//     an event;
//   - A's policy deleted: its DNSEndpoint stays as last written, and B still
//     publishes nothing; once that DNSEndpoint is deleted, B publishes.
func TestDNSGuard(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	if err := testbed.InstallDNSEndpointCRD(ctx, bed.Hub.Config); err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	a := newMigration(t, "dnsguard-a")
	b := newMigrationIn(t, a.f, "dnsguard-b")
	f := a.f
	// external-dns's engine for each tenant's namespace, as it applies their records,
	// and the CoreDNS that serves them, which the tenant's policy asks.
	servers := map[*migration]string{}
	for _, m := range []*migration{a, b} {
		dns, err := bed.StartDNS(ctx, testbed.DNSOptions{Zones: []string{"guard.test."}, Namespace: m.ns, OwnerID: m.ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dns.Stop)
		servers[m] = dns.Addr()
	}
	hostname := trafficv1alpha1.Hostname(a.ns + ".guard.test")
	withDNS := func(m *migration) *trafficv1alpha1.TrafficMigrationPolicy {
		p := m.policy()
		p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{hostname},
			Verify: &trafficv1alpha1.DNSVerification{Nameservers: []trafficv1alpha1.Nameserver{trafficv1alpha1.Nameserver(servers[m])}}}
		return p
	}
	refused := map[string]string{
		"0.0.0.0": "unspecified", "::": "unspecified", "127.0.0.1": "loopback",
		"169.254.169.254": "a cloud metadata address", "224.0.0.251": "link-local", "ff02::1": "link-local",
		"fe80::1": "link-local", "239.1.2.3": "multicast", "255.255.255.255": "broadcast",
	}
	reported := []string{"192.0.2.60"}
	for addr := range refused {
		reported = append(reported, addr)
	}
	reportAddresses(t, f, a.c1, reported...)
	pa := withDNS(a)
	f.createPolicy(t, pa)

	// Only the real address is published; the row and an event say what was refused.
	published := f.waitForPolicy(t, a.ns, pa.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	})
	waitTargets(ctx, t, client, a.ns, pa.Name, "192.0.2.60")
	row := fixture.PolicyRow(published, a.c1)
	if row == nil {
		t.Fatalf("no row for %s: %+v", a.c1, published.Status.Clusters)
	}
	for addr, why := range refused {
		if !strings.Contains(row.Message, addr+" ("+why+")") {
			t.Errorf("%s's row does not say %s was refused as %s: %q", a.c1, addr, why, row.Message)
		}
	}
	f.waitForEventNote(t, a.ns, policy.ReasonDNSAddressRefused, "169.254.169.254 (a cloud metadata address)", 30*time.Second)
	f.waitForEventNote(t, a.ns, "DNSEndpointCreated", "Published "+a.c1+"'s 192.0.2.60 for "+string(hostname), 30*time.Second)

	// Tenant B claims A's name: it publishes nothing, and does not learn who holds it.
	reportAddresses(t, f, b.c1, "198.51.100.66")
	pb := withDNS(b)
	f.createPolicy(t, pb)
	taken := f.waitForPolicy(t, b.ns, pb.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		return c != nil && c.Reason == trafficv1alpha1.ReasonHostnameTaken
	})
	if c := meta.FindStatusCondition(taken.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); !strings.Contains(c.Message, "a policy in another namespace") ||
		strings.Contains(c.Message, a.ns+"/") || strings.Contains(c.Message, "policy "+pa.Name) {
		t.Errorf("B's condition should say another namespace's policy holds the name, without naming it: %q", c.Message)
	}
	if _, err := client.Resource(dnsEndpointsResource).Namespace(b.ns).Get(ctx, pb.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("B has a DNSEndpoint (err %v): it must publish nothing for a name A holds", err)
	}
	waitTargets(ctx, t, client, a.ns, pa.Name, "192.0.2.60")

	// A's DNSEndpoint deleted by hand: written again.
	if err := client.Resource(dnsEndpointsResource).Namespace(a.ns).Delete(ctx, pa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTargets(ctx, t, client, a.ns, pa.Name, "192.0.2.60")
	f.waitForEventNote(t, a.ns, policy.ReasonDNSEndpointRestored, "deleted by someone else", 30*time.Second)

	// Edited by hand to send A's clients elsewhere: restored.
	obj, err := client.Resource(dnsEndpointsResource).Namespace(a.ns).Get(ctx, pa.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updateEndpoints(ctx, t, client, obj, aRecord(string(hostname), "A", 60, "203.0.113.9"))
	waitTargets(ctx, t, client, a.ns, pa.Name, "192.0.2.60")
	f.waitForEventNote(t, a.ns, policy.ReasonDNSEndpointRestored, "edited by someone else", 30*time.Second)

	// A's policy deleted: its DNSEndpoint stays, and B waits for it to go.
	if err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(a.ns).Delete(ctx, pa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitForPolicy(t, b.ns, pb.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		return c != nil && strings.Contains(c.Message, "deleted policy in another namespace")
	})
	waitTargets(ctx, t, client, a.ns, pa.Name, "192.0.2.60")
	if err := client.Resource(dnsEndpointsResource).Namespace(a.ns).Delete(ctx, pa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitForPolicy(t, b.ns, pb.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	})
	waitTargets(ctx, t, client, b.ns, pb.Name, "198.51.100.66")
}

// waitTargets waits until the DNSEndpoint publishes exactly the targets want.
func waitTargets(ctx context.Context, t *testing.T, client dynamic.Interface, ns, name string, want ...string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, dnsWait, true, func(ctx context.Context) (bool, error) {
		obj, err := client.Resource(dnsEndpointsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			got = nil
			return false, nil
		}
		got = nil
		endpoints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
		for _, e := range endpoints {
			ts, _, _ := unstructured.NestedStringSlice(e.(map[string]any), "targets")
			got = append(got, ts...)
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("DNSEndpoint %s/%s publishes %v, want %v: %v", ns, name, got, want, err)
	}
}
