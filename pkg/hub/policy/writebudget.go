// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// writeBudget lets a write through, or says it must wait; tenant is the policy's
// namespace, cost what the write spends of the budget (statusWriteCost).
type writeBudget interface {
	TryAccept(tenant string, cost int) bool
}

// rowsPerWrite is how many rows of a status one write of the budget stands for.
const rowsPerWrite = 10

// statusWriteCost is what the write of a status with rows rows spends of the budget:
// one write for every rowsPerWrite rows (at least one). Building, sending and storing
// a status, and the watch events it makes, cost about its size, so a tenant whose
// policies drain a hundred clusters each, checked every second, spends its share with
// fewer writes than one whose policies drain one, and the others' checks are not
// written, and so not synced, behind its large writes (the noisy-neighbour benchmark:
// 8 such policies wrote about 18 statuses a second, 30% of the manager's CPU,
// while the budget counted writes). fairBudget bounds it at a tenant's burst.
func statusWriteCost(rows int) int {
	return max(1, (rows+rowsPerWrite-1)/rowsPerWrite)
}

// fairBudget is a budget of writes per second shared fairly by tenants (namespaces),
// as the query slots are (package slots): a tenant with many policies, or many
// checks, does not spend the budget of the others.
//
//   - A write costs one token for every rowsPerWrite rows of its status
//     (statusWriteCost), at most a share's burst.
//   - Each tenant has a share of a quarter of the rate, with a quarter of the burst:
//     within it, a write goes through whenever the whole budget has a token.
//   - Beyond its share, a tenant borrows from the whole budget only while more than a
//     share's worth of burst is left, so a tenant that comes later always finds its
//     share there.
//
// So one tenant alone gets the whole rate, and a tenant that writes at most its share
// is never held back by another, however many writes the other asks for. Within a
// tenant writes go in the order asked; each policy's kept status is written after
// StatusWrites.FlushInterval at the latest, budget or not.
type fairBudget struct {
	clock      clock.PassiveClock
	share      rate.Limit
	shareBurst int
	// reserve is what a tenant beyond its share leaves in the whole budget.
	reserve float64

	mu        sync.Mutex
	all       *rate.Limiter
	tenants   map[string]*rate.Limiter
	lastPrune time.Time
}

// newFairBudget returns a budget of qps writes per second, with a burst of one
// second's worth (at least two, so that one can be lent).
func newFairBudget(qps float32, clk clock.PassiveClock) *fairBudget {
	burst := max(2, int(qps))
	shareBurst := max(1, burst/4)
	return &fairBudget{
		clock:      clk,
		share:      rate.Limit(qps / 4),
		shareBurst: shareBurst,
		reserve:    float64(shareBurst),
		all:        rate.NewLimiter(rate.Limit(qps), burst),
		tenants:    map[string]*rate.Limiter{},
		lastPrune:  clk.Now(),
	}
}

// TryAccept spends cost tokens of the tenant's (at least one, and at most a share's
// burst, so that any write can go through), and reports whether it could.
func (b *fairBudget) TryAccept(tenant string, cost int) bool {
	n := float64(min(max(cost, 1), b.shareBurst))
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune(now)
	own, ok := b.tenants[tenant]
	if !ok {
		own = rate.NewLimiter(b.share, b.shareBurst)
		b.tenants[tenant] = own
	}
	left := b.all.TokensAt(now)
	switch {
	case left < n:
		return false
	case own.TokensAt(now) >= n:
		own.AllowN(now, int(n))
	case left < n+b.reserve:
		return false
	}
	return b.all.AllowN(now, int(n))
}

// prune forgets, once a minute, the tenants whose share is full again: a new one
// would be the same.
func (b *fairBudget) prune(now time.Time) {
	if now.Sub(b.lastPrune) < time.Minute {
		return
	}
	b.lastPrune = now
	for name, own := range b.tenants {
		if own.TokensAt(now) >= float64(b.shareBurst) {
			delete(b.tenants, name)
		}
	}
}
