// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestDNSWithdrawalWaitsForEveryNameServer is spec.dns.verify with two authoritative
// servers of the zone, both real CoreDNS: the primary, written by external-dns's
// engine, and a secondary whose copy of the zone the test brings up to date only when
// it chooses (a zone transfer). When the Placement moves, the switch's step 1
// publishes both clusters' addresses; step 2 withdraws cluster1's only once the
// secondary answers cluster2's too (DNSPublished names the secondary and the address
// it lacks), not once external-dns has read step 1. Then the primary lets go of
// cluster1 at once and the secondary still answers its address: cluster1's drain
// clock does not start until the secondary lets go too. Its row says "still published
// in DNS", naming the secondary and the address it answers, and its
// dnsWithdrawalTime is not before the transfer.
func TestDNSWithdrawalWaitsForEveryNameServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m, primary, hostname := newDNSMove(t, "dnsverify", "verify.test.", "192.0.2.21", "192.0.2.22")
	f := m.f
	secondary, err := bed.StartSecondaryDNS(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secondary.Stop)

	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: time.Second}
	p.Spec.DNS = dnsPublishing(hostname, 2*time.Second, primary.Addr(), secondary.Addr())
	f.createPolicy(t, p)
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	})
	waitAnswer(ctx, t, primary, hostname, "192.0.2.21")
	if err := secondary.Transfer(ctx); err != nil {
		t.Fatal(err)
	}
	wantAnswer(ctx, t, secondary.DNS, hostname, "192.0.2.21")

	// The move: step 1 publishes both addresses, which the primary answers at once;
	// the secondary lags with cluster1's alone. Step 2 waits for it: the old address
	// stays published while a name server does not answer the new one.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	m.moveToC2(t)
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c2})
	waitAnswer(ctx, t, primary, hostname, "192.0.2.21", "192.0.2.22")
	wantStep := "every name server answers them: name server " + secondary.Addr() + " does not answer 192.0.2.22 for " + hostname + " A yet"
	stepping := m.waitStep1Held(t, p, wantStep)
	wantAnswer(ctx, t, primary, hostname, "192.0.2.21", "192.0.2.22")
	wantAnswer(ctx, t, secondary.DNS, hostname, "192.0.2.21")
	if r := fixture.PolicyRow(stepping, m.c1); r == nil || r.DNSWithdrawalTime != nil {
		t.Fatalf("cluster1's drain clock started while DNS still publishes its address: %+v", r)
	}

	// The secondary answers both: step 2 withdraws cluster1's address, which the
	// primary lets go of at once and the secondary, lagging again, still answers.
	// cluster1's drain clock does not start until the secondary lets go too.
	if err := secondary.Transfer(ctx); err != nil {
		t.Fatal(err)
	}
	wantAnswer(ctx, t, secondary.DNS, hostname, "192.0.2.21", "192.0.2.22")
	waitAnswer(ctx, t, primary, hostname, "192.0.2.22")
	wantNote := "still published in DNS: name server " + secondary.Addr() + " answers 192.0.2.21 for " + hostname + " A"
	lagging := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && strings.Contains(r.Message, wantNote)
	})
	if r := fixture.PolicyRow(lagging, m.c1); r.DNSWithdrawalTime != nil {
		t.Fatalf("cluster1's drain clock started while the secondary still answers its address: %+v", *r)
	}
	if d := lagging.Status.DNS; d == nil || d.ObservedGeneration < d.Generation {
		t.Fatalf("external-dns has not read the records without cluster1 yet (status.dns %+v): the wait proves nothing", d)
	}
	wantAnswer(ctx, t, primary, hostname, "192.0.2.22")
	wantAnswer(ctx, t, secondary.DNS, hostname, "192.0.2.21", "192.0.2.22")
	if r := fixture.PolicyRow(lagging, m.c1); strings.Contains(r.Message, primary.Addr()) {
		t.Errorf("cluster1's row names the primary, which let go of it: %q", r.Message)
	}

	// The secondary catches up: cluster1's clock starts, not before.
	transferred := time.Now()
	if err := secondary.Transfer(ctx); err != nil {
		t.Fatal(err)
	}
	wantAnswer(ctx, t, secondary.DNS, hostname, "192.0.2.22")
	withdrawn := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.DNSWithdrawalTime != nil
	})
	if left := fixture.PolicyRow(withdrawn, m.c1).DNSWithdrawalTime.Time; left.Before(transferred) {
		t.Errorf("cluster1 left DNS at %s, before the secondary let go of it at %s", left.Format(time.RFC3339Nano), transferred.Format(time.RFC3339Nano))
	}
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
}

// TestDNSNameserverAllowlist is the hub admin's --dns-nameserver-allowlist, with the
// real manager: the bed's manager allows the address the bed's CoreDNS listens on, and
// nothing else. A policy that also names another loopback address makes the manager
// ask neither: a round with a refused server fails closed. So step 2 of the switch
// never withdraws cluster1's address, DNSPublished says the hub admin's allowlist
// refused the server and what to do, no event names it, and cluster1's drain clock
// does not start. Once the policy names the allowed server alone, the switch ends and
// cluster1's clock starts.
func TestDNSNameserverAllowlist(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	if bed.ListenHost() != "127.0.0.1" {
		t.Skipf("the bed's servers listen on %s, not 127.0.0.1: the test refuses 127.0.0.2 beside it", bed.ListenHost())
	}
	m, dns, hostname := newDNSMove(t, "nsallow", "allow.test.", "192.0.2.31", "192.0.2.32")
	f := m.f
	_, port, err := net.SplitHostPort(dns.Addr())
	if err != nil {
		t.Fatal(err)
	}
	refused := net.JoinHostPort("127.0.0.2", port)

	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: time.Second}
	p.Spec.DNS = dnsPublishing(hostname, 2*time.Second, dns.Addr(), refused)
	f.createPolicy(t, p)
	waitAnswer(ctx, t, dns, hostname, "192.0.2.31")

	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	m.moveToC2(t)
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c2})
	waitAnswer(ctx, t, dns, hostname, "192.0.2.31", "192.0.2.32")
	wantRefusal := "name server " + refused + " is not in the hub admin's name server allowlist (--dns-nameserver-allowlist: 127.0.0.1), so it is not asked: ask the hub admin"
	stuck := m.waitStep1Held(t, p, wantRefusal)
	wantAnswer(ctx, t, dns, hostname, "192.0.2.31", "192.0.2.32")
	if r := fixture.PolicyRow(stuck, m.c1); r == nil || r.DNSWithdrawalTime != nil || !strings.Contains(r.Message, "still published in DNS") {
		t.Fatalf("cluster1's row while a name server is refused: %+v; want it still published, its drain clock not started", r)
	}
	events, err := f.Kube.EventsV1().Events(m.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Note, "127.0.0.2") || strings.Contains(e.Note, "allowlist") {
			t.Errorf("event %s names the refused server: %q", e.Reason, e.Note)
		}
	}

	// The allowed server alone: the switch ends, and cluster1's clock starts.
	// The manager writes the status meanwhile: a conflict is retried on the policy as
	// it is then.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Spec.DNS.Verify.Nameservers = []trafficv1alpha1.Nameserver{trafficv1alpha1.Nameserver(dns.Addr())}
		_, err = f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Update(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitAnswer(ctx, t, dns, hostname, "192.0.2.32")
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.DNSWithdrawalTime != nil
	})
}

// waitStep1Held waits until DNSPublished says why step 2 of the switch waits (its
// message holds why), and checks that external-dns has read the records of step 1, or
// the wait proves nothing. It returns the policy.
func (m *migration) waitStep1Held(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, why string) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	got := m.f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		return c != nil && strings.Contains(c.Message, why)
	})
	if d := got.Status.DNS; d == nil || d.ObservedGeneration < d.Generation {
		t.Fatalf("external-dns has not read the records of step 1 yet (status.dns %+v): the wait proves nothing", d)
	}
	return got
}
