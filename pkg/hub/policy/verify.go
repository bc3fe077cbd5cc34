// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
)

// msgNotAskedYet is a leaving cluster's note while no round of the question has ended.
const msgNotAskedYet = "waiting for the zone's authoritative name servers to be asked"

// nsQuestion is what a round of name server queries answers: the DNSEndpoint's
// generation (a round starts only once external-dns has read it, so its answers come
// after the records dropped the leaving clusters), the hostnames asked about, and the
// servers asked. A round answers only its own question.
type nsQuestion struct {
	uid         types.UID
	generation  int64
	hostnames   string
	nameservers string
}

// nsResult is a finished round.
type nsResult struct {
	question nsQuestion
	obs      dns.Observation
}

// nsRounds is what the manager knows of one policy's rounds.
type nsRounds struct {
	// last is the last round that ended; nil before.
	last *nsResult
	// running: a round is in flight.
	running bool
	// lastStart is when the last round started: the next starts an interval later at
	// the earliest.
	lastStart time.Time
}

// nameServerChecks runs the policies' rounds of name server queries (spec.dns.verify,
// mode Authoritative) apart from their syncs, as evaluator runs the checks: a sync
// that needs a round starts it and returns, and the round wakes the policy when it
// ends. At most one round per policy is in flight, and one starts at most once per
// interval; the last result is kept per policy, with its question.
type nameServerChecks struct {
	verifier dns.Verifier
	clock    clock.PassiveClock
	// wake enqueues a policy's key.
	wake func(key string)
	// memory holds each policy's rounds.
	memory *memories
}

func newNameServerChecks(verifier dns.Verifier, allow *dns.NameserverAllowlist, clk clock.PassiveClock, memory *memories) *nameServerChecks {
	if verifier == nil {
		verifier = &dns.NameServers{Allow: allow}
	}
	return &nameServerChecks{verifier: verifier, clock: clk, wake: func(string) {}, memory: memory}
}

// verdict is what the name servers say of a policy's leaving clusters.
type verdict struct {
	// confirmed are the clusters no name server answers any more.
	confirmed sets.Set[string]
	// waiting says, by cluster still published, why.
	waiting map[string]string
	// again is how soon the policy must sync again for a round (zero: a round in
	// flight, or none needed, wakes it).
	again time.Duration
}

// verify says which of the leaving clusters (with their addresses) the policy's name
// servers let go of, from the last round of the same question, and starts a round
// when the leaving clusters wait on one and the last started at least every ago.
// ctx ends a round early when the controller stops.
func (n *nameServerChecks) verify(ctx context.Context, key string, q nsQuestion, hostnames, nameservers []string,
	published dns.Publication, leaving map[string][]string, every time.Duration) verdict {
	v := verdict{confirmed: sets.New[string](), waiting: map[string]string{}}
	if len(leaving) == 0 {
		return v
	}
	if obs := n.last(key, q); obs != nil {
		v.confirmed, v.waiting = dns.Confirm(*obs, published, leaving)
	} else {
		for c := range leaving {
			v.waiting[c] = msgNotAskedYet
		}
	}
	if len(v.waiting) > 0 {
		v.again = n.ask(ctx, key, q, hostnames, nameservers, every)
	}
	return v
}

// serves says whether every name server answers every address that published holds,
// from the last round of the same question, and why not; it starts a round when they
// do not, as verify does. again is as in verdict.
func (n *nameServerChecks) serves(ctx context.Context, key string, q nsQuestion, hostnames, nameservers []string,
	published dns.Publication, every time.Duration) (served bool, why string, again time.Duration) {
	why = msgNotAskedYet
	if obs := n.last(key, q); obs != nil {
		if served, why = dns.Serves(*obs, published); served {
			return true, "", 0
		}
	}
	return false, why, n.ask(ctx, key, q, hostnames, nameservers, every)
}

// last returns what the last round that ended observed, if it answered q.
func (n *nameServerChecks) last(key string, q nsQuestion) *dns.Observation {
	n.memory.mu.Lock()
	defer n.memory.mu.Unlock()
	if mem := n.memory.byPolicy[key]; mem != nil && mem.nameServers != nil && mem.nameServers.last != nil && mem.nameServers.last.question == q {
		obs := mem.nameServers.last.obs
		return &obs
	}
	return nil
}

// ask starts a round of q unless one is in flight or the last started less than every
// ago; then it returns how soon the next may start (zero: a round in flight, or the
// one started, wakes the policy).
func (n *nameServerChecks) ask(ctx context.Context, key string, q nsQuestion, hostnames, nameservers []string, every time.Duration) time.Duration {
	n.memory.mu.Lock()
	defer n.memory.mu.Unlock()
	mem := n.memory.byPolicy[key]
	if mem == nil {
		mem = &memory{}
		n.memory.byPolicy[key] = mem
	}
	r := mem.nameServers
	if r == nil {
		r = &nsRounds{}
		mem.nameServers = r
	}
	if r.running {
		return 0
	}
	now := n.clock.Now()
	if next := r.lastStart.Add(every); !r.lastStart.IsZero() && now.Before(next) {
		return next.Sub(now)
	}
	r.running, r.lastStart = true, now
	go func() {
		obs := n.verifier.Observe(ctx, hostnames, nameservers)
		n.memory.mu.Lock()
		r.running = false
		if ctx.Err() == nil {
			r.last = &nsResult{question: q, obs: obs}
		}
		n.memory.mu.Unlock()
		if ctx.Err() == nil {
			n.wake(key)
		}
	}()
	return 0
}

// questionOf is the question of a round for the policy's DNSEndpoint generation.
func questionOf(uid types.UID, generation int64, hostnames, nameservers []string) nsQuestion {
	return nsQuestion{uid: uid, generation: generation, hostnames: strings.Join(hostnames, ","), nameservers: strings.Join(nameservers, ",")}
}
