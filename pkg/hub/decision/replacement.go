// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// MinReplacementFreshness is the least time a passing replacement check counts for: a
// check counts for two intervals, and at least this long, so that a round of checks
// that takes a few seconds does not make a serving cluster stop counting between two
// of its checks.
const MinReplacementFreshness = 10 * time.Second

// replacementFreshness is how long a passing replacement check counts.
func (p Policy) replacementFreshness() time.Duration {
	return max(2*p.Interval, MinReplacementFreshness)
}

// DueReplacements lists, sorted, the Active clusters whose replacement check
// (spec.replacement.metricsQuery) is due at in.Now: the caller queries Prometheus for
// these with the replacement's query and passes the results to Decide as
// in.ReplacementChecks. Active clusters are checked only while a cluster drains
// whose removal the check may gate, every interval; nothing is listed while the real
// decisions cannot be read.
func DueReplacements(in Input) []string { return replacementChecks(in, false) }

// replacementChecks lists, sorted, the Active clusters whose replacement checks run,
// and of those only the ones due at in.Now unless anyTime.
func replacementChecks(in Input, anyTime bool) []string {
	if !in.RealKnown {
		return nil
	}
	pl := newPlan(&in)
	if !pl.checkingReplacements(nil) {
		return nil
	}
	var due []string
	for name := range pl.active {
		if !pl.gone(name) && (anyTime || pl.replacementDue(name)) {
			due = append(due, name)
		}
	}
	slices.Sort(due)
	return due
}

// checkingReplacements reports whether the Active clusters' replacement checks run:
// the policy has one, and a cluster drains that is not removed anyway (its
// ManagedCluster gone, named in the force-remove annotation, or in removed).
func (pl *plan) checkingReplacements(removed map[string]RemovalReason) bool {
	if !pl.policy.ReplacementCheck || pl.policy.MinReadyClusters <= 0 {
		return false
	}
	forced := sets.New(pl.in.ForceRemove...)
	for name := range pl.draining {
		if !pl.gone(name) && !forced.Has(name) && removed[name] == "" {
			return true
		}
	}
	return false
}

// carryReplacementChecks takes the Active clusters' last replacement checks from
// their previous rows. A row that was not Active (a cluster that drained and came
// back) carries none: the cluster is checked anew.
func (pl *plan) carryReplacementChecks(previous map[string]*v1alpha1.ClusterStatus) {
	pl.replacementChecks = map[string]*v1alpha1.ClusterStatus{}
	if !pl.policy.ReplacementCheck {
		return
	}
	for name := range pl.active {
		prev := previous[name]
		if prev == nil || prev.Phase != v1alpha1.ClusterActive || prev.LastEvaluationTime == nil {
			continue
		}
		pl.replacementChecks[name] = &v1alpha1.ClusterStatus{
			LastEvaluationTime: prev.LastEvaluationTime.DeepCopy(),
			LastResult:         prev.LastResult,
			LastValue:          prev.LastValue,
			ResolvedQuery:      prev.ResolvedQuery,
			LastCheckDetail:    prev.LastCheckDetail,
		}
	}
}

// replacementDueAt is when an Active cluster's replacement check is due: an interval
// after its last one, or now when it has none.
func (pl *plan) replacementDueAt(name string) time.Time {
	c := pl.replacementChecks[name]
	if c == nil || c.LastEvaluationTime == nil {
		return pl.in.Now
	}
	return pl.policy.CheckDueAfter(c.LastEvaluationTime.Time)
}

func (pl *plan) replacementDue(name string) bool {
	return !pl.replacementDueAt(name).After(pl.in.Now)
}

// recordReplacements keeps the replacement checks made in this sync of the Active
// clusters that were due, as DueReplacements listed them.
func (pl *plan) recordReplacements() {
	if !pl.in.RealKnown || !pl.checkingReplacements(nil) {
		return
	}
	for name := range pl.active {
		ev, ok := pl.in.ReplacementChecks[name]
		if !ok || pl.gone(name) || !pl.replacementDue(name) {
			continue
		}
		at := pl.stamp
		if !ev.At.IsZero() {
			t := ev.At.UTC().Truncate(time.Second)
			if !t.Before(ceilSecond(pl.replacementDueAt(name))) && !t.After(pl.in.Now) {
				at = t
			}
		}
		c := &v1alpha1.ClusterStatus{
			LastEvaluationTime: ptrTime(at),
			LastResult:         knownResult(ev.Result),
			LastValue:          ev.Value,
			ResolvedQuery:      ev.Query,
		}
		if c.LastResult != v1alpha1.EvaluationPass {
			c.LastCheckDetail = truncate(ev.Message, MaxCheckDetailLength)
		}
		pl.replacementChecks[name] = c
	}
}

// replacementCounts reports whether an Active cluster counts toward minReadyClusters:
// its Gateway is ready and, with a replacement check, its last check passed and is
// recent. No data, an error or no check at all never counts, whatever noDataPolicy
// says: the replacement must show it serves.
func (pl *plan) replacementCounts(name string) bool {
	if !pl.ready(name) {
		return false
	}
	if !pl.policy.ReplacementCheck {
		return true
	}
	c := pl.replacementChecks[name]
	return c != nil && c.LastResult == v1alpha1.EvaluationPass && pl.in.Now.Before(pl.replacementExpiry(c))
}

// replacementExpiry is when a passing replacement check stops counting.
func (pl *plan) replacementExpiry(c *v1alpha1.ClusterStatus) time.Time {
	return c.LastEvaluationTime.Add(pl.policy.replacementFreshness())
}

// activeRow is the row of an Active cluster. With spec.replacement its message says
// whether the cluster counts toward minReadyClusters and, while its replacement
// checks run (checking), it holds its last check and when the next is due, and the
// decision is requeued for that check and for the time its pass stops counting.
func (pl *plan) activeRow(name string, checking bool, requeueAt *time.Time) v1alpha1.ClusterStatus {
	row := v1alpha1.ClusterStatus{Name: name, Phase: v1alpha1.ClusterActive}
	if pl.policy.MinReadyClusters <= 0 {
		return row
	}
	ready := pl.ready(name)
	switch {
	case !ready:
		row.Message = msgReplacementNotReady
	case !pl.policy.ReplacementCheck:
		row.Message = msgReplacementReady
	case !checking:
		row.Message = msgReplacementIdle
	}
	if !pl.policy.ReplacementCheck || !checking {
		return row
	}
	next := ceilSecond(pl.replacementDueAt(name))
	row.NextEvaluationTime = ptrTime(next)
	pl.requeueAt(requeueAt, next)
	c := pl.replacementChecks[name]
	if c != nil {
		row.LastEvaluationTime = c.LastEvaluationTime.DeepCopy()
		row.LastResult, row.LastValue, row.ResolvedQuery, row.LastCheckDetail = c.LastResult, c.LastValue, c.ResolvedQuery, c.LastCheckDetail
	}
	if !ready {
		return row
	}
	switch {
	case c == nil:
		row.Message = msgReplacementUnchecked
	case c.LastResult != v1alpha1.EvaluationPass:
		row.Message = msgReplacementFailed
		if c.LastCheckDetail != "" {
			row.Message += ": " + c.LastCheckDetail
		}
	case !pl.in.Now.Before(pl.replacementExpiry(c)):
		row.Message = msgReplacementStale
	default:
		row.Message = msgReplacementPassed
		pl.requeueAt(requeueAt, pl.replacementExpiry(c))
	}
	return row
}

// knownResult is r when it is one of the four results, and Error otherwise.
func knownResult(r v1alpha1.EvaluationResult) v1alpha1.EvaluationResult {
	switch r {
	case v1alpha1.EvaluationPass, v1alpha1.EvaluationFail, v1alpha1.EvaluationNoData, v1alpha1.EvaluationError:
		return r
	}
	return v1alpha1.EvaluationError
}

// ReplacementStanding is whether an Active cluster counts toward minReadyClusters, and
// why: the message of its row.
type ReplacementStanding struct {
	Counts bool
	Why    string
}

// Replacements says, for each Active cluster, whether it counts toward
// minReadyClusters in the decision Decide makes of in, before any removal, and why:
// the message of its row while a cluster drains. Nil without spec.replacement.
func Replacements(in Input) map[string]ReplacementStanding {
	pl := newPlan(&in)
	if pl.policy.MinReadyClusters <= 0 {
		return nil
	}
	pl.recordReplacements()
	var requeueAt time.Time
	out := make(map[string]ReplacementStanding, len(pl.active))
	for name := range pl.active {
		out[name] = ReplacementStanding{
			Counts: pl.replacementCounts(name),
			Why:    pl.activeRow(name, pl.policy.ReplacementCheck, &requeueAt).Message,
		}
	}
	return out
}
