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
	client := dnsEndpointClient(ctx, t, bed.Hub.Config)
	a := newMigration(t, "dnsguard-a")
	b := newMigrationIn(t, a.f, "dnsguard-b")
	f := a.f
	// external-dns's engine for each tenant's namespace, as it applies their records,
	// and the CoreDNS that serves them, which the tenant's policy asks.
	servers := map[*migration]string{}
	for _, m := range []*migration{a, b} {
		servers[m] = startDNS(ctx, t, bed, testbed.DNSOptions{Zones: []string{"guard.test."}, Namespace: m.ns, OwnerID: m.ns}).Addr()
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
	if err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(a.ns).Delete(ctx, pa.Name, metav1.DeleteOptions{}); err != nil {
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
		got = fixture.DNSEndpointTargets(obj)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("DNSEndpoint %s/%s publishes %v, want %v: %v", ns, name, got, want, err)
	}
}

// TestDNSOwners is the hub admin's --dns-domains and the holder of a hostname across a
// restart, on a hub and manager of the test's own:
//
//   - a namespace outside the domains the admin lets it publish publishes nothing
//     and says which names and why;
//   - of two policies of one namespace that claim one hostname, the first created
//     holds it, although the second's name sorts first; the second says which policy
//     holds it;
//   - a new manager process keeps it so: the holder's DNSEndpoint is not written
//     again, and the second policy gets none.
func TestDNSOwners(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	own, f := newOwnHub(t)
	client := dnsEndpointClient(ctx, t, own.Hub.Config)
	a := newMigrationIn(t, f, "owners-a")
	b := newMigrationIn(t, f, "owners-b")
	startDNS(ctx, t, own, testbed.DNSOptions{Zones: []string{"owners.test."}})
	startManager := func() *testbed.Manager {
		t.Helper()
		mgr, err := own.StartManager(ctx, testbed.ManagerOptions{Args: []string{"-v=2", "--dns-domains=" + a.ns + "=*.owners.test"}})
		if err != nil {
			t.Fatalf("start the manager: %v", err)
		}
		return mgr
	}
	mgr := startManager()
	reportAddresses(t, f, a.c1, "192.0.2.70")
	reportAddresses(t, f, b.c1, "198.51.100.70")
	withDNS := func(p *trafficv1alpha1.TrafficMigrationPolicy, hostname string) *trafficv1alpha1.TrafficMigrationPolicy {
		p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{trafficv1alpha1.Hostname(hostname)}}
		return p
	}
	reason := func(p *trafficv1alpha1.TrafficMigrationPolicy) (string, string) {
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		if c == nil || c.ObservedGeneration != p.Generation {
			return "", ""
		}
		return c.Reason, c.Message
	}

	// B may publish nothing under owners.test.
	bName := b.ns + ".owners.test"
	pb := withDNS(b.policy(), bName)
	f.createPolicy(t, pb)
	notAllowed := f.waitForPolicy(t, b.ns, pb.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r, _ := reason(p)
		return r == trafficv1alpha1.ReasonHostnameNotAllowed
	})
	if _, msg := reason(notAllowed); !strings.Contains(msg, "namespace "+b.ns+" publish "+bName) || !strings.Contains(msg, "--dns-domains") {
		t.Errorf("B's condition should name the hostname it may not publish and the admin's setting: %q", msg)
	}

	// Two policies of A claim one name: the first created holds it.
	const shop = "shop.owners.test"
	first := withDNS(a.policy(), shop)
	first.Name = "z-first"
	f.createPolicy(t, first)
	f.waitForPolicy(t, a.ns, first.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	})
	waitTargets(ctx, t, client, a.ns, first.Name, "192.0.2.70")
	f.placement(t, a.ns, "gateway-2", map[string]string{a.siteLabel: a.site1})
	f.waitForClusters(t, a.ns, "gateway-2", []string{a.c1}, 30*time.Second)
	second := withDNS(a.policy(), shop)
	second.Name = "a-second"
	second.Spec.PlacementRef.Name = "gateway-2"
	f.createPolicy(t, second)
	isTaken := func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r, msg := reason(p)
		return r == trafficv1alpha1.ReasonHostnameTaken && strings.Contains(msg, shop+" by policy "+first.Name)
	}
	f.waitForPolicy(t, a.ns, second.Name, 60*time.Second, isTaken)
	created := func(name string) time.Time { return f.getPolicy(t, a.ns, name).CreationTimestamp.Time }
	if !created(first.Name).Before(created(second.Name)) {
		t.Fatalf("the policies were created in the same second (%v): the test needs the holder older", created(first.Name))
	}
	held, err := client.Resource(dnsEndpointsResource).Namespace(a.ns).Get(ctx, first.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A new manager process: it has read both policies once it reports their
	// changed specs, and the holder still holds the name.
	mgr.Process.Stop()
	startManager()
	for _, name := range []string{first.Name, second.Name} {
		f.patchPolicy(t, a.ns, name, map[string]any{"spec": map[string]any{"trafficShare": map[string]any{"maxPercent": 6}}})
	}
	f.waitForPolicy(t, a.ns, first.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r, _ := reason(p)
		return r == trafficv1alpha1.ReasonDNSPublished
	})
	f.waitForPolicy(t, a.ns, second.Name, 60*time.Second, isTaken)
	list, err := client.Resource(dnsEndpointsResource).Namespace(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != first.Name {
		var names []string
		for _, o := range list.Items {
			names = append(names, o.GetName())
		}
		t.Fatalf("DNSEndpoints of %s after the restart: %v, want only the holder's %s", a.ns, names, first.Name)
	}
	if got := list.Items[0]; got.GetGeneration() != held.GetGeneration() || got.GetUID() != held.GetUID() {
		t.Errorf("the holder's DNSEndpoint was written again by the new manager: uid %s generation %d, was %s %d",
			got.GetUID(), got.GetGeneration(), held.GetUID(), held.GetGeneration())
	}
	waitTargets(ctx, t, client, a.ns, first.Name, "192.0.2.70")
}
