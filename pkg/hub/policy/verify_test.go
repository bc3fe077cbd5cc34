// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
)

// fakeVerifier answers each round with what the test releases.
type fakeVerifier struct {
	mu      sync.Mutex
	rounds  int
	release chan dns.Observation
}

func (f *fakeVerifier) Observe(ctx context.Context, _, _ []string) dns.Observation {
	f.mu.Lock()
	f.rounds++
	f.mu.Unlock()
	select {
	case obs := <-f.release:
		return obs
	case <-ctx.Done():
		return dns.Observation{}
	}
}

func (f *fakeVerifier) started() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rounds
}

// A withdrawal waits on a round of name server queries, run apart from the sync and
// at most once per interval; its result answers only its own question.
func TestNameServerChecks(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	v := &fakeVerifier{release: make(chan dns.Observation)}
	n := newNameServerChecks(v, nil, clk, newMemories())
	woken := make(chan string, 10)
	n.wake = func(key string) { woken <- key }
	const every = 10 * time.Second
	published := dns.Publication{Clusters: []string{"c2"}, Records: []dns.Record{{DNSName: "gw.example.test", RecordType: "A", Targets: []string{"192.0.2.12"}}}}
	leaving := map[string][]string{"c1": {"192.0.2.11"}}
	q := questionOf("uid", 7, []string{"gw.example.test"}, nil)
	ask := func() verdict {
		return n.verify(t.Context(), "ns/p", q, []string{"gw.example.test"}, nil, published, leaving, every)
	}
	answer := func(addrs ...string) dns.Observation {
		return dns.Observation{Answers: []dns.Answer{
			{Server: "192.0.2.53:53", Hostname: "gw.example.test", Type: "A", Addresses: addrs},
			{Server: "192.0.2.53:53", Hostname: "gw.example.test", Type: "AAAA"},
		}}
	}
	waitWoken := func() {
		t.Helper()
		select {
		case key := <-woken:
			if key != "ns/p" {
				t.Fatalf("woke %q, want ns/p", key)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the round did not wake the policy")
		}
	}

	// The first sync starts a round and waits on it.
	got := ask()
	if got.confirmed.Len() != 0 || got.waiting["c1"] != msgNotAskedYet || got.again != 0 {
		t.Fatalf("before any round: %+v", got)
	}
	// A sync while it runs starts no other.
	ask()
	v.release <- answer("192.0.2.12", "192.0.2.11")
	waitWoken()
	if v.started() != 1 {
		t.Fatalf("%d rounds started, want 1", v.started())
	}
	// The server still answers c1's address: it waits, and the next round is due an
	// interval after the last started.
	clk.SetTime(t0.Add(3 * time.Second))
	got = ask()
	if got.confirmed.Len() != 0 || got.waiting["c1"] != "name server 192.0.2.53:53 answers 192.0.2.11 for gw.example.test A" || got.again != 7*time.Second {
		t.Fatalf("after a round that found the old address: %+v", got)
	}
	if v.started() != 1 {
		t.Fatalf("a round started before the interval passed")
	}
	// An interval later, a round again; meanwhile the last result stands.
	clk.SetTime(t0.Add(every))
	if got = ask(); got.waiting["c1"] == "" || got.again != 0 {
		t.Fatalf("at the interval: %+v", got)
	}
	v.release <- answer("192.0.2.12")
	waitWoken()
	if got = ask(); !got.confirmed.Has("c1") || len(got.waiting) != 0 || got.again != 0 || v.started() != 2 {
		t.Fatalf("after a round that let go of c1: %+v, %d rounds", got, v.started())
	}

	// Another generation of the DNSEndpoint is another question: the last result does
	// not answer it, and its round waits for the interval.
	q = questionOf("uid", 8, []string{"gw.example.test"}, nil)
	clk.SetTime(t0.Add(every + time.Second))
	if got = ask(); got.confirmed.Len() != 0 || got.waiting["c1"] != msgNotAskedYet || got.again != every-time.Second {
		t.Fatalf("a new question: %+v", got)
	}

	// Nothing leaving: nothing asked.
	if got := n.verify(t.Context(), "ns/p", q, nil, nil, published, nil, every); got.again != 0 || len(got.waiting) != 0 {
		t.Errorf("nothing leaving: %+v", got)
	}
	n.memory.forget("ns/p")
	if len(n.memory.byPolicy) != 0 {
		t.Errorf("forget left %d entries", len(n.memory.byPolicy))
	}
}

// dnsRequeue wakes the policy for the next round of name server queries, or the next
// Gateway to settle, whichever comes first.
func TestDNSRequeueForVerification(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	if got := dnsRequeue(&dnsState{verifyAgain: 7 * time.Second}, now); got < 7*time.Second || got > 8*time.Second {
		t.Errorf("a round due in 7s: requeued after %s", got)
	}
	if got := dnsRequeue(&dnsState{verifyAgain: 7 * time.Second, settleAt: now.Add(2 * time.Second)}, now); got > 3*time.Second {
		t.Errorf("a Gateway settling in 2s and a round in 7s: requeued after %s", got)
	}
	if got := dnsRequeue(&dnsState{verifyAgain: time.Second, settleAt: now.Add(5 * time.Second)}, now); got > 2*time.Second {
		t.Errorf("a round due in 1s and a Gateway settling in 5s: requeued after %s", got)
	}
}
