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
// --prometheus-max-series) will most likely be over them again: the query selects too
// much, and that does not change by itself. Reading one costs a query slot and, at the
// byte cap, a megabyte of JSON to decode, so a policy that checks many clusters every
// second with such a query would cost a CPU core and its namespace's slots. After
// such an answer, the manager asks Prometheus that cluster's check again only after a
// backoff: twice the policy's interval after the first, doubling with each such answer
// in a row, up to maxCappedBackoff. Meanwhile each due check repeats the last answer's
// result, an Error that keeps the cluster (rule 4), and says so in its message. An
// answer within the limits, or a change of the policy's spec, ends the backoff; a
// restart forgets it, and asks again at once.
const maxCappedBackoff = 5 * time.Minute

// cappedKey names one check of a policy: a draining cluster's, or an Active cluster's
// replacement check.
type cappedKey struct {
	cluster     string
	replacement bool
}

// cappedRun is a check's run of answers over the manager's limits.
type cappedRun struct {
	uid        types.UID
	generation int64
	// answers is how many answers in a row were over the limits.
	answers int
	// last is the check of the last one, its message saying when Prometheus is asked
	// again.
	last promcheck.Check
	// next is when to ask Prometheus again.
	next time.Time
}

// cappedBackoff is how long a check waits after its n-th answer in a row over the
// manager's limits: twice the interval, doubling with each, up to maxCappedBackoff.
func cappedBackoff(interval time.Duration, n int) time.Duration {
	d := max(interval, time.Second)
	for i := 0; i < n && d < maxCappedBackoff; i++ {
		d *= 2
	}
	return min(d, maxCappedBackoff)
}

// cappedRepeat returns the check to record, without asking Prometheus, when the
// check's last answers were over the manager's limits and its backoff has not ended
// by now.
func (m *memories) cappedRepeat(key string, policy *trafficv1alpha1.TrafficMigrationPolicy, k cappedKey, now time.Time) (ev promcheck.Check, ok bool) {
	m.with(key, func(mem *memory) {
		r := mem.capped[k]
		if r != nil && r.uid == policy.UID && r.generation == policy.Generation && now.Before(r.next) {
			ev, ok = r.last, true
		}
	})
	return ev, ok
}

// noteCapped records the check's answer and returns the check to record: an answer
// over the manager's limits starts or extends the check's backoff, and its message
// says so; any other answer ends the backoff.
func (m *memories) noteCapped(key string, policy *trafficv1alpha1.TrafficMigrationPolicy, k cappedKey, ev promcheck.Check, now time.Time, interval time.Duration) promcheck.Check {
	m.with(key, func(mem *memory) {
		if ev.Reason != trafficv1alpha1.ReasonAnswerTooLarge {
			delete(mem.capped, k)
			return
		}
		r := mem.capped[k]
		if r == nil || r.uid != policy.UID || r.generation != policy.Generation {
			r = &cappedRun{uid: policy.UID, generation: policy.Generation}
		}
		r.answers++
		backoff := cappedBackoff(interval, r.answers)
		// No time of day: a message changes only when a check says something new.
		run := "this answer was"
		if r.answers > 1 {
			run = fmt.Sprintf("%d answers in a row were", r.answers)
		}
		ev.Message = fmt.Sprintf("%s; %s over the limit, so Prometheus is asked again in %s (then less often, up to every %s) or when the spec changes",
			ev.Message, run, backoff, maxCappedBackoff)
		r.last, r.next = ev, now.Add(backoff)
		if mem.capped == nil {
			mem.capped = map[cappedKey]*cappedRun{}
		}
		mem.capped[k] = r
	})
	return ev
}
