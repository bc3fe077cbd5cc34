// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package slots shares a fixed number of slots (the manager's Prometheus queries in
// flight) fairly among tenants, then among each tenant's flows: the policy controller
// keys tenants by namespace and flows by policy, so that a namespace with many
// policies, or with a slow or hanging Prometheus, does not delay another's checks.
//
// The scheme borrows from the API server's priority and fairness (each level has its
// seats, and lends those it does not use) and its fair queuing (a freed seat goes to
// the flow that is behind), cut to a fixed pool of long-held slots and without
// preemption, as a query is never cut short:
//
//   - Below its share (a quarter of the slots), a tenant takes any free slot.
//   - Beyond its share, a tenant borrows only while its queries are fast (the last one
//     it finished took at most fast, and none in flight is older), and never the last
//     share's worth of free slots. So a tenant whose Prometheus hangs holds at most its
//     share, and a fast one whose Prometheus starts to hang leaves a share free.
//   - A freed slot goes to the waiting tenant that holds the fewest (so one below its
//     share before one that borrows), then to the one served longest ago; within that
//     tenant, to the flow that holds the fewest, then to the one served longest ago.
//     Names break the remaining ties, so that the order is deterministic.
package slots

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultFast is how long a query may take for its tenant to borrow slots beyond its
// share.
const DefaultFast = time.Second

// pruneAfter is how long the pool keeps what it knows of an idle tenant's queries.
const pruneAfter = time.Minute

// Pool shares its slots among tenants and their flows. Its zero value is not usable:
// use New.
type Pool struct {
	clock    clock.PassiveClock
	capacity int
	share    int
	fast     time.Duration

	mu        sync.Mutex
	free      int
	seq       uint64
	tenants   map[string]*tenant
	lastPrune time.Time
}

type tenant struct {
	name    string
	held    int
	waiting int
	// served is the sequence number of the tenant's last grant: among tenants that
	// hold as many slots, the one served longest ago goes first.
	served uint64
	// last is how long its last finished query took; measured says there was one.
	last     time.Duration
	measured bool
	// inFlight are its granted tickets.
	inFlight  map[*Ticket]struct{}
	flows     map[string]*flow
	idleSince time.Time
}

type flow struct {
	name   string
	held   int
	served uint64
	queue  []*Ticket
}

// Ticket is one request for a slot: waiting, then granted, then released.
type Ticket struct {
	tenant, flow string
	ready        chan struct{}
	granted      bool
	done         bool
	start        time.Time
}

// Ready is closed once the ticket holds a slot.
func (t *Ticket) Ready() <-chan struct{} { return t.ready }

// New returns a pool of capacity slots (at least 1). A tenant's share is a quarter of
// them (at least 1); a tenant borrows beyond it only while its queries take at most
// fast (never with fast 0).
func New(capacity int, fast time.Duration, clk clock.PassiveClock) *Pool {
	capacity = max(capacity, 1)
	return &Pool{
		clock:    clk,
		capacity: capacity,
		share:    max(capacity/4, 1),
		fast:     fast,
		free:     capacity,
		tenants:  map[string]*tenant{},
	}
}

// Share is how many slots a tenant takes without borrowing.
func (p *Pool) Share() int { return p.share }

// Request asks for a slot for the tenant's flow, and returns at once: the ticket is
// Ready when it holds the slot. Every ticket must be given back, with Release once its
// work is done, or with Cancel when its work did not happen.
func (p *Pool) Request(tenantName, flowName string) *Ticket {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &Ticket{tenant: tenantName, flow: flowName, ready: make(chan struct{})}
	tn := p.tenants[tenantName]
	if tn == nil {
		tn = &tenant{name: tenantName, inFlight: map[*Ticket]struct{}{}, flows: map[string]*flow{}}
		p.tenants[tenantName] = tn
	}
	f := tn.flows[flowName]
	if f == nil {
		f = &flow{name: flowName}
		tn.flows[flowName] = f
	}
	f.queue = append(f.queue, t)
	tn.waiting++
	p.dispatch()
	return t
}

// Release gives back the ticket's slot, or its place in the queue, and counts how long
// the slot was held towards its tenant's speed. Releasing twice does nothing.
func (p *Pool) Release(t *Ticket) { p.giveBack(t, true) }

// Cancel gives back the ticket like Release, without counting how long its slot was
// held: for a slot granted to work that then did not happen.
func (p *Pool) Cancel(t *Ticket) { p.giveBack(t, false) }

func (p *Pool) giveBack(t *Ticket, measure bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	now := p.clock.Now()
	tn := p.tenants[t.tenant]
	f := tn.flows[t.flow]
	if t.granted {
		tn.held--
		f.held--
		p.free++
		delete(tn.inFlight, t)
		if measure {
			tn.last, tn.measured = now.Sub(t.start), true
		}
	} else {
		for i, q := range f.queue {
			if q == t {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
				break
			}
		}
		tn.waiting--
	}
	if f.held == 0 && len(f.queue) == 0 {
		delete(tn.flows, t.flow)
	}
	if tn.held == 0 && tn.waiting == 0 {
		tn.idleSince = now
	}
	p.dispatch()
	p.prune(now)
}

// Acquire waits for a slot of the tenant's flow, or for ctx to end. It returns the
// function that releases the slot, or ctx's error.
func (p *Pool) Acquire(ctx context.Context, tenantName, flowName string) (release func(), err error) {
	t := p.Request(tenantName, flowName)
	select {
	case <-t.Ready():
		return func() { p.Release(t) }, nil
	case <-ctx.Done():
		p.Cancel(t)
		return nil, ctx.Err()
	}
}

// dispatch grants free slots to waiting tickets, fairly, for as long as one may have
// one. p.mu is held.
func (p *Pool) dispatch() {
	now := p.clock.Now()
	for p.free > 0 {
		var best *tenant
		for _, tn := range p.tenants {
			if tn.waiting == 0 || !p.mayTake(tn, now) {
				continue
			}
			if best == nil || before(tn, best) {
				best = tn
			}
		}
		if best == nil {
			return
		}
		var bestFlow *flow
		for _, f := range best.flows {
			if len(f.queue) == 0 {
				continue
			}
			if bestFlow == nil || f.held < bestFlow.held ||
				f.held == bestFlow.held && (f.served < bestFlow.served || f.served == bestFlow.served && f.name < bestFlow.name) {
				bestFlow = f
			}
		}
		t := bestFlow.queue[0]
		bestFlow.queue = bestFlow.queue[1:]
		p.seq++
		best.waiting--
		best.held++
		best.served = p.seq
		bestFlow.held++
		bestFlow.served = p.seq
		best.inFlight[t] = struct{}{}
		p.free--
		t.granted, t.start = true, now
		close(t.ready)
	}
}

// before says whether tenant a goes before tenant b: the one that holds fewer (so
// one below its share before one that borrows), then the one served longer ago, then
// by name.
func before(a, b *tenant) bool {
	if a.held != b.held {
		return a.held < b.held
	}
	if a.served != b.served {
		return a.served < b.served
	}
	return a.name < b.name
}

// mayTake says whether the tenant may take one of the free slots now: below its
// share, any; beyond it, only while its queries are fast and more than a share's
// worth are free.
func (p *Pool) mayTake(tn *tenant, now time.Time) bool {
	if tn.held < p.share {
		return true
	}
	return p.free > p.share && p.fast > 0 && p.isFast(tn, now)
}

// isFast says whether the tenant's last finished query took at most p.fast, and none
// of those in flight has taken longer yet. A tenant with no finished query is not.
func (p *Pool) isFast(tn *tenant, now time.Time) bool {
	if !tn.measured || tn.last > p.fast {
		return false
	}
	for t := range tn.inFlight {
		if now.Sub(t.start) > p.fast {
			return false
		}
	}
	return true
}

// prune forgets tenants idle for pruneAfter, at most once every pruneAfter. p.mu is
// held.
func (p *Pool) prune(now time.Time) {
	if now.Sub(p.lastPrune) < pruneAfter {
		return
	}
	p.lastPrune = now
	for name, tn := range p.tenants {
		if tn.held == 0 && tn.waiting == 0 && now.Sub(tn.idleSince) >= pruneAfter {
			delete(p.tenants, name)
		}
	}
}

// Stats are what the pool holds now, for tests and metrics.
type Stats struct {
	Free int
	// Held and Waiting are by tenant, only for the tenants that hold or wait.
	Held, Waiting map[string]int
}

// Stats returns what the pool holds now.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Free: p.free, Held: map[string]int{}, Waiting: map[string]int{}}
	for name, tn := range p.tenants {
		if tn.held > 0 {
			s.Held[name] = tn.held
		}
		if tn.waiting > 0 {
			s.Waiting[name] = tn.waiting
		}
	}
	return s
}
