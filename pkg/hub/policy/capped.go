// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// An answer over the manager's limits (--prometheus-max-answer-bytes,
// --prometheus-max-series) will most likely come again, for this cluster and for the
// policy's others: they share the query's template, which selects too much, and that
// does not change by itself. Reading one costs a query slot and, at the byte cap, a
// megabyte of JSON to decode, so a policy that checks many clusters every second with
// such a query would cost a CPU core. After such an answer, the manager sends none of
// the policy's checks of that kind (its drain checks, or its replacement checks) to
// Prometheus for a while: twice the policy's interval after the first answer, and at
// least minCappedBackoff, doubling with each round that has one, up to
// maxCappedBackoff. Meanwhile each due check is an Error that says so and keeps its
// cluster (rule 4): removals wait, nothing is removed. The backoff ends when the
// cluster whose answer started it answers within the limits, or the policy's spec
// changes (the fix, which is then checked at once); a restart forgets it and asks at
// once.
const maxCappedBackoff = 5 * time.Minute

// minCappedBackoff is the shortest backoff after an answer over the limits. Without
// it a policy checked every second doubles from 2 s and asks about ten times in its
// first minute, each time in every query slot its namespace may take: in the
// noisy-neighbour benchmark, 8 such policies made 5 answers of a megabyte a second,
// which delayed the other tenants' checks by 0.29 s at the p99 (2.9 times the 100 ms
// the goal of 1.2 is measured against), where at the series cap, with their backoff
// grown, they made 0.6 a second and delayed them by 16 ms. Only a change of the spec
// fixes such a query, and it ends the backoff.
const minCappedBackoff = 30 * time.Second

// cappedRun is a policy's run of rounds with an answer over the manager's limits, for
// its drain checks or for its replacement checks.
type cappedRun struct {
	uid        types.UID
	generation int64
	// cluster is the cluster whose answer started the run: only its answer within the
	// limits ends it.
	cluster string
	// rounds is how many rounds in a row had an answer over the limits, and round the
	// evaluation time of the last: answers of one round count once.
	rounds int
	round  time.Time
	// last is the check of the last answer over the limits, whose message says when
	// Prometheus is asked again; next is when.
	last promcheck.Check
	next time.Time
}

// cappedBackoff is how long a policy's checks wait after their n-th round in a row
// with an answer over the manager's limits: twice the interval and at least
// minCappedBackoff, doubling with each, up to maxCappedBackoff.
func cappedBackoff(interval time.Duration, n int) time.Duration {
	d := max(interval, minCappedBackoff/2)
	for i := 0; i < n && d < maxCappedBackoff; i++ {
		d *= 2
	}
	return min(d, maxCappedBackoff)
}

// cappedRepeat returns the check to record for a due check of the kind (replacement
// or drain checks), without asking Prometheus, while the policy's checks of that kind
// back off: an Error with the message of the last answer over the limits, and no
// value or query (the caller fills in the check's own query).
func (m *memories) cappedRepeat(key string, policy *trafficv1alpha1.TrafficMigrationPolicy, replacement bool, now time.Time) (ev promcheck.Check, ok bool) {
	m.with(key, func(mem *memory) {
		r := mem.capped[replacement]
		if r != nil && r.uid == policy.UID && r.generation == policy.Generation && now.Before(r.next) {
			ev, ok = r.last, true
			ev.Value, ev.Query = "", ""
		}
	})
	return ev, ok
}

// noteCapped records a check's answer, made in the round evaluated at round, and
// returns the check to record: an answer over the manager's limits starts or extends
// the backoff of the policy's checks of its kind, and its message says so; an answer
// within them from the cluster that started the backoff ends it.
func (m *memories) noteCapped(key string, policy *trafficv1alpha1.TrafficMigrationPolicy, replacement bool, cluster string,
	ev promcheck.Check, round time.Time, interval time.Duration) promcheck.Check {
	m.with(key, func(mem *memory) {
		r := mem.capped[replacement]
		if r != nil && (r.uid != policy.UID || r.generation != policy.Generation) {
			r = nil
		}
		if ev.Reason != trafficv1alpha1.ReasonAnswerTooLarge {
			if r == nil || r.cluster == cluster {
				delete(mem.capped, replacement)
			}
			return
		}
		if r == nil {
			r = &cappedRun{uid: policy.UID, generation: policy.Generation, cluster: cluster}
		}
		if !r.round.Equal(round) {
			r.rounds++
			r.round = round
		}
		backoff := cappedBackoff(interval, r.rounds)
		// No time of day: a message changes only when a check says something new.
		ev.Message = fmt.Sprintf("cluster %s: %s; as the policy's clusters share the query, none of their checks is sent to Prometheus for %s "+
			"(then less often, up to every %s, while answers stay over the limit), or until the spec changes",
			cluster, ev.Message, backoff, maxCappedBackoff)
		// The held-back checks repeat the answer of the cluster that started the run,
		// whichever of a round's answers came first.
		if r.cluster == cluster {
			r.last = ev
		}
		r.next = round.Add(backoff)
		if mem.capped == nil {
			mem.capped = map[bool]*cappedRun{}
		}
		mem.capped[replacement] = r
	})
	return ev
}
