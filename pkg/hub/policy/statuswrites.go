// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// StatusWrites bound the status writes that carry nothing but new check results, so
// that a check is never a write: at a thousand draining policies the checks keep their
// interval whatever the API server's rate limit lets through (docs/running.md).
//
// A status that differs from the written one only in the rows' check results (see
// checkResultsOnly) is written while the budget (QPS, shared fairly by namespace:
// fairBudget) allows; otherwise it is kept in
// memory, the policy's next syncs decide from it, and it is written with the policy's
// next change, or once it has waited FlushInterval. A change of the decision (the
// proxy's clusters, a phase, a drain's start, DNS withdrawal or removal time), of a
// run of passes, of a check's result or of a condition is written at once. So a crash
// loses only what a restart checks again: the values, times and history of checks
// whose result and run of passes did not change.
type StatusWrites struct {
	// QPS is the budget of such writes over all policies, per second, shared fairly
	// by namespace; zero writes every check (no budget).
	QPS float32
	// FlushInterval is the longest a policy's new check results wait in memory.
	FlushInterval time.Duration
}

// enabled reports whether check results may wait in memory.
func (s StatusWrites) enabled() bool { return s.QPS > 0 && s.FlushInterval > 0 }

// budget is the budget of StatusWrites.QPS, shared fairly by namespace (fairBudget);
// nil when every check is written.
func (s StatusWrites) budget(clk clock.PassiveClock) writeBudget {
	if !s.enabled() {
		return nil
	}
	return newFairBudget(s.QPS, clk)
}

// unwrittenStatus is a policy's status as its last sync decided it, kept in memory
// because it differed from the written one only by check results the budget did not
// let through.
type unwrittenStatus struct {
	// basedOn is the resourceVersion of the policy whose written status it follows:
	// once the cache shows another, it is dropped (the policy changed, or was written).
	basedOn string
	status  trafficv1alpha1.TrafficMigrationPolicyStatus
}

// withUnwritten returns the policy as the sync decides from it: with the status kept
// in memory when there is one for the policy as the cache shows it, else policy itself.
func (c *Controller) withUnwritten(key string, policy *trafficv1alpha1.TrafficMigrationPolicy) *trafficv1alpha1.TrafficMigrationPolicy {
	var kept *unwrittenStatus
	c.memory.with(key, func(m *memory) {
		if m.unwritten != nil && m.unwritten.basedOn != policy.ResourceVersion {
			m.unwritten = nil
		}
		kept = m.unwritten
	})
	if kept == nil {
		return policy
	}
	p := policy.DeepCopy()
	kept.status.DeepCopyInto(&p.Status)
	return p
}

// writeStatus writes the policy's new status once, and not at all when nothing
// changed, or keeps it in memory when it differs from the written one only by check
// results and the budget of such writes is spent (StatusWrites). written is the policy
// as the cache shows it, whose status the write patches. It returns when a status kept
// in memory must be written at the latest; zero when none is kept.
func (c *Controller) writeStatus(ctx context.Context, written *trafficv1alpha1.TrafficMigrationPolicy, status trafficv1alpha1.TrafficMigrationPolicyStatus) (flushAt time.Time, err error) {
	key := keyOf(written)
	now := c.clock.Now()
	if c.statusBudget != nil && !equality.Semantic.DeepEqual(written.Status, status) && checkResultsOnly(written.Status, status) {
		var since time.Time
		c.memory.with(key, func(m *memory) {
			if m.statusWritten.IsZero() {
				// The first sight of the policy (a new process) starts the wait.
				m.statusWritten = now
			}
			since = m.statusWritten
		})
		if flushAt = since.Add(c.limits.StatusWrites.FlushInterval); now.Before(flushAt) && !c.statusBudget.TryAccept(written.Namespace, statusWriteCost(len(status.Clusters))) {
			c.memory.with(key, func(m *memory) {
				m.unwritten = &unwrittenStatus{basedOn: written.ResourceVersion, status: *status.DeepCopy()}
			})
			c.metrics.statusWritesDeferred.Inc()
			return flushAt, nil
		}
	}
	err = c.patchPolicy(ctx, written, "write status", func(w *policyWriter, current *trafficv1alpha1.TrafficMigrationPolicy) error {
		_, err := w.patchStatus(ctx, current, status, current.Status)
		return err
	})
	c.memory.with(key, func(m *memory) {
		m.unwritten = nil
		if err == nil {
			m.statusWritten = now
		}
	})
	return time.Time{}, err
}

// checkResultsOnly reports whether updated differs from written only in what checks
// report of a row and no decision reads after a restart: the last check's time, value,
// query and detail, the next check's time, the history, the estimate and the message.
// Everything else is written at once: the conditions, the counts, the proxy, DNS, and
// of each row its phase, drain start, DNS withdrawal, stall, removal, run of passes and
// the last check's result.
func checkResultsOnly(written, updated trafficv1alpha1.TrafficMigrationPolicyStatus) bool {
	return equality.Semantic.DeepEqual(withoutCheckResults(written), withoutCheckResults(updated))
}

// withoutCheckResults returns a copy of s whose rows keep only what checkResultsOnly
// writes at once.
func withoutCheckResults(s trafficv1alpha1.TrafficMigrationPolicyStatus) trafficv1alpha1.TrafficMigrationPolicyStatus {
	rows := make([]trafficv1alpha1.ClusterStatus, len(s.Clusters))
	for i, r := range s.Clusters {
		rows[i] = trafficv1alpha1.ClusterStatus{
			Name:                 r.Name,
			Phase:                r.Phase,
			DrainStartTime:       r.DrainStartTime,
			DNSWithdrawalTime:    r.DNSWithdrawalTime,
			DNSWithdrawalCheck:   r.DNSWithdrawalCheck,
			Stalled:              r.Stalled,
			RemovalTime:          r.RemovalTime,
			ConsecutiveSuccesses: r.ConsecutiveSuccesses,
			LastResult:           r.LastResult,
		}
	}
	s.Clusters = rows
	return s
}
