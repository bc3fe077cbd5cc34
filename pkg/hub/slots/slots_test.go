// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package slots

import (
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func ready(t *Ticket) bool {
	select {
	case <-t.Ready():
		return true
	default:
		return false
	}
}

// requestN requests n slots for the tenant's flow and returns the tickets.
func requestN(p *Pool, n int, tenant, flow string) []*Ticket {
	out := make([]*Ticket, n)
	for i := range out {
		out[i] = p.Request(tenant, flow)
	}
	return out
}

func countReady(ts []*Ticket) int {
	n := 0
	for _, t := range ts {
		if ready(t) {
			n++
		}
	}
	return n
}

// A tenant that has never finished a query holds at most its share, however many
// flows it has: four policies of one namespace no longer hold every slot.
func TestShareCapsAnUnprovenTenant(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	var hostile []*Ticket
	for i := range 8 {
		hostile = append(hostile, requestN(p, 4, "noisy", fmt.Sprintf("p%d", i))...)
	}
	if got := countReady(hostile); got != 4 {
		t.Fatalf("the noisy tenant holds %d slots, want its share 4", got)
	}
	// Another tenant gets its share at once, and once its queries prove fast, borrows
	// all but a share's worth of what the noisy one left.
	other := requestN(p, 12, "quiet", "q")
	if got := countReady(other); got != 4 {
		t.Fatalf("the quiet tenant got %d slots at once, want its share 4", got)
	}
	clk.Step(200 * time.Millisecond)
	p.Release(other[0])
	if s := p.Stats(); s.Free != 4 || s.Held["noisy"] != 4 || s.Held["quiet"] != 8 || s.Waiting["noisy"] != 28 {
		t.Fatalf("stats %+v", s)
	}
}

// Within a tenant, its share goes round its flows: the flow that holds fewest first,
// so a policy with many clusters does not starve one with few.
func TestFlowsShareTheirTenantsSlots(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	big := requestN(p, 10, "ns", "big")
	small := requestN(p, 2, "ns", "small")
	if countReady(big) != 4 || countReady(small) != 0 {
		t.Fatalf("big %d, small %d ready; want 4 and 0", countReady(big), countReady(small))
	}
	// The first slot big frees goes to small, which holds none.
	clk.Step(5 * time.Second) // slow: the tenant may not borrow
	p.Release(big[0])
	if !ready(small[0]) || ready(big[4]) {
		t.Fatal("the freed slot did not go to the flow that held none")
	}
	// big holds 3, small 1: the next goes to small again (it holds fewer).
	p.Release(big[1])
	if !ready(small[1]) || ready(big[4]) {
		t.Fatal("the freed slot did not go to the flow that held fewer")
	}
	// big holds 2, small 2, small waits no more: big gets the next.
	p.Release(small[0])
	if !ready(big[4]) {
		t.Fatal("the freed slot did not go back to big")
	}
}

// A tenant that is not proven fast takes no slot beyond its share, even a free one.
func TestUnprovenTenantsDoNotBorrow(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(4, DefaultFast, clk) // share 1
	a := requestN(p, 3, "a", "x")
	b := requestN(p, 1, "b", "x")
	c := requestN(p, 2, "c", "x")
	if countReady(a) != 1 || countReady(b) != 1 || countReady(c) != 1 || p.Stats().Free != 1 {
		t.Fatalf("ready a=%d b=%d c=%d, stats %+v", countReady(a), countReady(b), countReady(c), p.Stats())
	}
	d := p.Request("d", "x")
	if !ready(d) {
		t.Fatal("a new tenant below its share did not take the free slot")
	}
	clk.Step(3 * time.Second)
	p.Release(b[0]) // took 3 s
	if ready(a[1]) || ready(c[1]) {
		t.Fatal("a tenant at its share borrowed while unproven")
	}
	if e := p.Request("e", "x"); !ready(e) {
		t.Fatal("a tenant below its share did not get the free slot")
	}
}

// When a slot frees, a waiting tenant below its share goes before one that borrows.
func TestFreedSlotGoesFirstToATenantBelowItsShare(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(4, DefaultFast, clk) // share 1
	p.Release(p.Request("x", "f"))
	x := requestN(p, 10, "x", "f")
	if got := countReady(x); got != 3 {
		t.Fatalf("the fast tenant holds %d, want 3 (4 less a share)", got)
	}
	y := p.Request("y", "f")
	z := p.Request("z", "f")
	w := p.Request("w", "f")
	if !ready(y) || ready(z) || ready(w) {
		t.Fatal("want y granted, z and w waiting")
	}
	p.Release(x[0]) // fast
	if !ready(w) || ready(z) || ready(x[3]) {
		t.Fatal("the freed slot did not go to w (below its share, first by name)")
	}
	p.Release(x[1])
	if !ready(z) || ready(x[3]) {
		t.Fatal("the freed slot did not go to z (below its share)")
	}
}

// A fast tenant borrows beyond its share, but never the last share's worth of free
// slots, and stops borrowing when one of its queries gets slow.
func TestFastTenantBorrowsButLeavesAShare(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	first := p.Request("fast", "x")
	clk.Step(100 * time.Millisecond)
	p.Release(first) // proven fast
	many := requestN(p, 20, "fast", "x")
	if got := countReady(many); got != 12 {
		t.Fatalf("the fast tenant holds %d slots, want 12 (16 less a share)", got)
	}
	// A newcomer gets the reserved share at once.
	other := requestN(p, 5, "other", "y")
	if got := countReady(other); got != 4 {
		t.Fatalf("the newcomer got %d slots, want its share 4", got)
	}
	// The fast tenant's queries hang: once one of them is older than Fast, a freed
	// slot is not borrowed any more, even though its last finished query was fast.
	clk.Step(2 * time.Second)
	p.Release(other[0]) // slow: other is not proven fast either
	if got := countReady(many); got != 12 {
		t.Fatalf("the fast tenant holds %d slots, want still 12", got)
	}
	if !ready(other[4]) {
		t.Fatal("the freed slot did not go back to the tenant below its share")
	}
	// Its queries end, each after 2 s: it is slow now, and refills only to its share.
	for _, tk := range many[:12] {
		p.Release(tk)
	}
	if got := countReady(many); got != 16 {
		t.Fatalf("%d of the tenant's tickets were granted in all, want 12 then its share 4", got)
	}
	if s := p.Stats(); s.Held["fast"] != 4 || s.Held["other"] != 4 {
		t.Fatalf("stats %+v", s)
	}
}

// A slow tenant below its share still refills to its share as its queries end.
func TestSlowTenantRefillsToItsShare(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	q := requestN(p, 10, "slow", "x")
	clk.Step(10 * time.Second)
	p.Release(q[0])
	p.Release(q[1])
	if got := countReady(q); got != 6 {
		t.Fatalf("%d granted in all, want 6 (4, then 2 refills)", got)
	}
	if s := p.Stats(); s.Held["slow"] != 4 || s.Free != 12 {
		t.Fatalf("stats %+v", s)
	}
}

// Cancel gives back a waiting ticket's place and a granted one's slot, without
// counting it as a fast query; releasing twice does nothing.
func TestCancelAndDoubleRelease(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(4, DefaultFast, clk)
	a := p.Request("a", "x")
	b := p.Request("a", "x")
	if !ready(a) || ready(b) {
		t.Fatal("want a granted and b waiting")
	}
	p.Cancel(b)
	if s := p.Stats(); s.Waiting["a"] != 0 {
		t.Fatalf("stats after cancelling a waiting ticket: %+v", s)
	}
	p.Cancel(a)
	p.Cancel(a)
	p.Release(a)
	if s := p.Stats(); s.Free != 4 || len(s.Held) != 0 {
		t.Fatalf("stats after cancelling a granted ticket twice: %+v", s)
	}
	// The cancelled grant did not prove the tenant fast: it still stops at its share.
	many := requestN(p, 3, "a", "x")
	if got := countReady(many); got != 1 {
		t.Fatalf("%d granted, want the share 1", got)
	}
}

// Acquire waits for a slot and gives up its place when ctx ends.
func TestAcquire(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(4, DefaultFast, clk)
	release, err := p.Acquire(t.Context(), "a", "x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Acquire(ctx, "a", "x")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Waiting["a"] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second Acquire never queued")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Acquire returned %v, want context.Canceled", err)
	}
	release()
	if s := p.Stats(); s.Free != 4 || len(s.Waiting) != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// Idle tenants are forgotten after a while, busy ones never.
func TestPrune(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	busy := p.Request("busy", "x")
	p.Release(p.Request("idle", "x"))
	clk.Step(2 * pruneAfter)
	p.Release(p.Request("other", "x"))
	p.mu.Lock()
	_, idle := p.tenants["idle"]
	_, stillBusy := p.tenants["busy"]
	p.mu.Unlock()
	if idle || !stillBusy {
		t.Fatalf("idle kept: %v; busy kept: %v", idle, stillBusy)
	}
	p.Release(busy)
}

// A model check: random requests and releases over several tenants never grant more
// than the capacity, never leave a slot free while a tenant below its share waits,
// and never let an unproven tenant beyond its share.
func TestInvariants(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := New(16, DefaultFast, clk)
	var live []*Ticket
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	for step := 0; step < 20000; step++ {
		switch rnd(3) {
		case 0, 1:
			live = append(live, p.Request(fmt.Sprintf("t%d", rnd(5)), fmt.Sprintf("f%d", rnd(4))))
		default:
			if len(live) == 0 {
				continue
			}
			i := rnd(len(live))
			clk.Step(time.Duration(rnd(1500)) * time.Millisecond)
			if rnd(10) == 0 {
				p.Cancel(live[i])
			} else {
				p.Release(live[i])
			}
			live = append(live[:i], live[i+1:]...)
		}
		s := p.Stats()
		held := 0
		for _, h := range s.Held {
			held += h
		}
		if held+s.Free != 16 || s.Free < 0 {
			t.Fatalf("step %d: %d held and %d free", step, held, s.Free)
		}
		for name, w := range s.Waiting {
			if w > 0 && s.Held[name] < p.Share() && s.Free > 0 {
				t.Fatalf("step %d: %s waits below its share with %d free", step, name, s.Free)
			}
		}
	}
}
