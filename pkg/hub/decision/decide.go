// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// Row messages. Each says what a cluster's removal still waits for, or why it left;
// none holds a time or a value, so the row changes only when the state does.
const (
	msgRealUnknown     = "the real Placement's decisions cannot be read"
	msgPastDeadline    = "maximum drain duration exceeded"
	msgPastCeiling     = "the hub's maximum drain duration exceeded"
	msgSuspended       = "removals suspended"
	msgMinDrain        = "minimum drain duration not reached"
	msgStillInDNS      = "still published in DNS"
	msgNoOtherReady    = "no other cluster has the Gateway ready"
	msgLastCheck       = "last check: "
	msgRemovedGate     = "removed: the removal gate passed"
	msgRemovedForce    = "removed: named in the force-remove annotation"
	msgRemovedGone     = "removed: its ManagedCluster no longer exists"
	msgRemovedDeadline = "removed: maximum drain duration exceeded"
	msgRemovedCeiling  = "removed: the hub's maximum drain duration exceeded"
	msgSeparator       = "; "

	msgReplacementReady     = countsAsReplacement + ": the Gateway is ready"
	msgReplacementNotReady  = "does not count toward replacement.minReadyClusters: the Gateway is not ready"
	msgReplacementPassed    = countsAsReplacement + ": the Gateway is ready and its replacement check passed"
	msgReplacementUnchecked = "does not count toward replacement.minReadyClusters: its replacement check has not run yet"
	msgReplacementStale     = "does not count toward replacement.minReadyClusters: its last passing replacement check is too old"
	msgReplacementFailed    = "does not count toward replacement.minReadyClusters: its replacement check did not pass"
	msgReplacementIdle      = "the Gateway is ready; replacement.metricsQuery is checked while a cluster drains"
)

// countsAsReplacement starts the message of an Active row that counts toward
// spec.replacement.minReadyClusters; no other row's message starts with it.
const countsAsReplacement = "counts toward replacement.minReadyClusters"

// Due lists, sorted, the draining clusters whose next check is due at in.Now: the caller
// queries Prometheus for these and passes the results to Decide as in.Checks. A
// cluster that is removed anyway (its ManagedCluster is gone, or it is force-removed)
// is not listed, and nothing is while the real decisions cannot be read.
func Due(in Input) []string { return drainChecks(in, false) }

// Checked lists, sorted, the clusters whose checks run, due at in.Now or later: the
// draining clusters that Due lists once their interval has passed, and the Active
// clusters that DueReplacements lists.
func Checked(in Input) (draining, replacements []string) {
	return drainChecks(in, true), replacementChecks(in, true)
}

// drainChecks lists, sorted, the draining clusters whose checks run, and of those
// only the ones due at in.Now unless anyTime.
func drainChecks(in Input, anyTime bool) []string {
	if !in.RealKnown {
		return nil
	}
	pl := newPlan(&in)
	forced := sets.New(in.ForceRemove...)
	var due []string
	for name, d := range pl.draining {
		if !pl.gone(name) && !forced.Has(name) && (anyTime || pl.isDue(d)) {
			due = append(due, name)
		}
	}
	slices.Sort(due)
	return due
}

// Decide applies the rules of the proxy decision (see the package documentation) to
// its input and returns the proxy decisions and status rows to write, and what to
// report. It is a pure function of in: the same input gives the same output, and an
// output fed back as the next input (Proxy and Previous) at the same Now with no new
// checks gives the same output again.
func Decide(in Input) Output {
	pl := newPlan(&in)
	if in.RealKnown {
		for name, d := range pl.draining {
			if ev, ok := in.Checks[name]; ok && pl.isDue(d) {
				pl.record(d, ev)
			}
		}
	}

	pl.recordReplacements()
	withdrawn := pl.startDNSClocks()
	pl.keepWithdrawalChecks()

	removed := map[string]RemovalReason{}
	for name := range pl.draining {
		if pl.gone(name) {
			removed[name] = RemovalManagedClusterGone
		}
	}
	skipped := pl.forceRemove(removed)
	pl.countReady(removed)
	pl.removePassed(removed)
	out := pl.output(removed, skipped)
	out.DNSWithdrawn = withdrawn
	out.Restored = pl.restored
	return out
}

// startDNSClocks starts the drain clock of each draining cluster that DNS let go of
// since the last decision, and returns their names, sorted.
func (pl *plan) startDNSClocks() []string {
	if !pl.followDNS() {
		return nil
	}
	var started []string
	for name, d := range pl.draining {
		if d.row.DNSWithdrawalTime == nil && pl.in.DNS.Withdrawn.Has(name) {
			d.row.DNSWithdrawalTime = ptrTime(pl.stamp)
			started = append(started, name)
		}
	}
	slices.Sort(started)
	return started
}

// followDNS reports whether drains follow the published DNS (Input.DNS).
func (pl *plan) followDNS() bool { return pl.in.DNS != nil }

// drainRow is the working state of one draining cluster.
type drainRow struct {
	// row holds the cluster's drain state; its phase, next check and message are set
	// when the output is built.
	row v1alpha1.ClusterStatus
	// group is the index of the cluster's group in the proxy.
	group int32
}

// plan is the state shared by Due and Decide: the input sorted into active and
// draining clusters, with the drain state carried over from the previous rows.
type plan struct {
	in     *Input
	policy Policy
	// stamp is Now as written into rows: rounded up to whole seconds.
	stamp time.Time
	// groupNames are the names of the output's group indexes.
	groupNames map[int32]string
	// baseGroups are the group indexes written even when empty.
	baseGroups sets.Set[int32]
	// active are the clusters that stay because they are in R (or, when R is not known,
	// are taken to be), with their group index.
	active map[string]int32
	// draining are the clusters of D.
	draining map[string]*drainRow
	// retained are the Removed rows still within RemovedRowRetention.
	retained []v1alpha1.ClusterStatus
	// restored are the draining clusters that P lost and the rows kept (rule 12),
	// sorted.
	restored []string
	// readyLeft counts the clusters left in the proxy with the Gateway ready: set by
	// countReady, then lowered by each removal.
	readyLeft int
	// replacementChecks are the Active clusters' replacement checks, carried over from
	// their previous rows, by name (see replacement.go).
	replacementChecks map[string]*v1alpha1.ClusterStatus
}

// newPlan sorts the input's clusters into active and draining ones, carries the drain
// state over from the previous rows and keeps the Removed rows that are still recent.
func newPlan(in *Input) *plan {
	pl := &plan{
		in:         in,
		policy:     in.Policy.normalized(),
		stamp:      ceilSecond(in.Now),
		groupNames: map[int32]string{},
		baseGroups: sets.New[int32](),
		active:     map[string]int32{},
		draining:   map[string]*drainRow{},
	}
	realGroups, proxyGroups := indexGroups(in.Real), indexGroups(in.Proxy)
	previous := map[string]*v1alpha1.ClusterStatus{}
	for i := range in.Previous {
		if _, ok := previous[in.Previous[i].Name]; !ok {
			previous[in.Previous[i].Name] = &in.Previous[i]
		}
	}

	base := proxyGroups
	if in.RealKnown {
		base = realGroups
	}
	for index, name := range base.names {
		pl.groupNames[index] = name
		pl.baseGroups.Insert(index)
	}

	for name, index := range proxyGroups.clusters {
		if in.RealKnown {
			if _, ok := realGroups.clusters[name]; ok {
				continue
			}
		} else if !isDrainingRow(previous[name]) {
			// R is not known: a cluster not known to be draining is taken as active.
			pl.active[name] = index
			continue
		}
		pl.draining[name] = pl.carry(name, index, previous[name])
		if _, ok := pl.groupNames[index]; !ok {
			pl.groupNames[index] = proxyGroups.names[index]
		}
	}
	if in.RealKnown {
		for name, index := range realGroups.clusters {
			pl.active[name] = index
		}
	}
	pl.restoreLost(previous)
	pl.carryReplacementChecks(previous)

	for name, row := range previous {
		_, isActive := pl.active[name]
		_, isDraining := pl.draining[name]
		if isActive || isDraining || row.Phase != v1alpha1.ClusterRemoved || row.RemovalTime == nil {
			continue
		}
		if in.Now.Before(row.RemovalTime.Add(RemovedRowRetention)) {
			pl.retained = append(pl.retained, *row.DeepCopy())
		}
	}
	return pl
}

// restoreLost takes back as draining the clusters whose previous row says they drain
// but that P lost, as when someone deletes the proxy Placement or one of its
// decisions (rule 12): the status, not the proxy, is then the memory of the drain. A
// lost cluster goes back to the least group index written, else to group 0.
func (pl *plan) restoreLost(previous map[string]*v1alpha1.ClusterStatus) {
	group := int32(0)
	if indexes := sortedKeys(pl.groupNames); len(indexes) > 0 {
		group = indexes[0]
	}
	for name, row := range previous {
		_, isActive := pl.active[name]
		_, isDraining := pl.draining[name]
		if isActive || isDraining || !isDrainingRow(row) {
			continue
		}
		pl.draining[name] = pl.carry(name, group, row)
		pl.restored = append(pl.restored, name)
		if _, ok := pl.groupNames[group]; !ok {
			pl.groupNames[group] = ""
		}
	}
	slices.Sort(pl.restored)
}

// carry builds the drain state of a draining cluster from its previous row: the drain
// goes on when the row says it was draining, and starts now otherwise (rule 9).
func (pl *plan) carry(name string, group int32, prev *v1alpha1.ClusterStatus) *drainRow {
	d := &drainRow{group: group, row: v1alpha1.ClusterStatus{Name: name}}
	if !isDrainingRow(prev) {
		d.row.DrainStartTime = ptrTime(pl.stamp)
		return d
	}
	d.row.DrainStartTime = prev.DrainStartTime.DeepCopy()
	if pl.followDNS() && prev.DNSWithdrawalTime != nil {
		d.row.DNSWithdrawalTime = prev.DNSWithdrawalTime.DeepCopy()
		if ref := prev.DNSWithdrawalCheck; ref != nil && !ref.Time.Before(prev.DNSWithdrawalTime) {
			// A reference from before the withdrawal is not one: it is found again.
			kept := *ref
			d.row.DNSWithdrawalCheck = &kept
		}
	}
	if prev.LastEvaluationTime == nil {
		// Never checked: a run of successes without a check is not believed.
		return d
	}
	d.row.LastEvaluationTime = prev.LastEvaluationTime.DeepCopy()
	d.row.ConsecutiveSuccesses = max(prev.ConsecutiveSuccesses, 0)
	d.row.LastResult = prev.LastResult
	d.row.LastValue = prev.LastValue
	d.row.ResolvedQuery = prev.ResolvedQuery
	d.row.History = tailOf(prev.History, v1alpha1.MaxCheckHistory)
	if !pl.policy.passes(prev.LastResult) {
		d.row.LastCheckDetail = prev.LastCheckDetail
	}
	return d
}

// isDrainingRow reports whether a previous row holds the state of a drain.
func isDrainingRow(row *v1alpha1.ClusterStatus) bool {
	return row != nil && row.DrainStartTime != nil &&
		(row.Phase == v1alpha1.ClusterDraining || row.Phase == v1alpha1.ClusterHeld)
}

// record counts a check of a cluster that was due (rule 3), or starts its run over
// when the check did not pass (rule 4).
func (pl *plan) record(d *drainRow, ev Check) {
	result := knownResult(ev.Result)
	d.row.LastEvaluationTime = ptrTime(pl.checkStamp(d, ev.At))
	d.row.LastResult = result
	d.row.LastValue = ev.Value
	d.row.ResolvedQuery = ev.Query
	d.row.History = append(tailOf(d.row.History, v1alpha1.MaxCheckHistory-1), v1alpha1.CheckRecord{
		Time:   *d.row.LastEvaluationTime,
		Result: result,
		Value:  truncate(ev.Value, MaxHistoryValueLength),
	})
	if pl.policy.passes(result) {
		if d.row.ConsecutiveSuccesses < math.MaxInt32 {
			d.row.ConsecutiveSuccesses++
		}
		d.row.LastCheckDetail = ""
		return
	}
	d.row.ConsecutiveSuccesses = 0
	d.row.LastCheckDetail = truncate(ev.Message, MaxCheckDetailLength)
}

// tailOf returns a copy of the last n records of h, nil when there are none: a
// history never grows past MaxCheckHistory, and never shares its array with a row of
// the input.
func tailOf(h []v1alpha1.CheckRecord, n int) []v1alpha1.CheckRecord {
	if len(h) > n {
		h = h[len(h)-n:]
	}
	if len(h) == 0 {
		return nil
	}
	return slices.Clone(h)
}

// truncate cuts s to at most n bytes, on a UTF-8 boundary, marking the cut with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// checkStamp is the time a check of d is recorded at: when it was evaluated, if that is
// known, not before the cluster was due and not after Now, so that checks keep their
// interval and are never counted early; else the decision's own stamp.
func (pl *plan) checkStamp(d *drainRow, at time.Time) time.Time {
	if at.IsZero() {
		return pl.stamp
	}
	at = at.UTC().Truncate(time.Second)
	if at.Before(pl.dueAt(d)) || at.After(pl.in.Now) {
		return pl.stamp
	}
	return at
}

// forceRemove removes the draining clusters named in ForceRemove and returns the names
// that removed nothing, with why.
func (pl *plan) forceRemove(removed map[string]RemovalReason) []ForceRemoveSkip {
	var skipped []ForceRemoveSkip
	names := slices.Clone(pl.in.ForceRemove)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if name == "" {
			continue
		}
		_, isActive := pl.active[name]
		_, isDraining := pl.draining[name]
		switch {
		case removed[name] != "":
		case !isActive && !isDraining:
			skipped = append(skipped, ForceRemoveSkip{Cluster: name, Reason: SkipNotInProxy})
		case !pl.in.RealKnown:
			skipped = append(skipped, ForceRemoveSkip{Cluster: name, Reason: SkipRealDecisionsUnknown})
		case isActive:
			skipped = append(skipped, ForceRemoveSkip{Cluster: name, Reason: SkipInRealDecisions})
		default:
			removed[name] = RemovalForceRemoved
		}
	}
	return skipped
}

// countReady counts the clusters left in the proxy with the Gateway ready, once the
// removals made so far (rule 6, force-remove) are taken out.
func (pl *plan) countReady(removed map[string]RemovalReason) {
	pl.readyLeft = 0
	for name := range pl.active {
		if pl.ready(name) {
			pl.readyLeft++
		}
	}
	for name := range pl.draining {
		if removed[name] == "" && pl.ready(name) {
			pl.readyLeft++
		}
	}
}

// readyActive are the Active clusters that count toward minReadyClusters, sorted:
// those with the Gateway ready and, with a replacement check, a recent passing one.
func (pl *plan) readyActive() []string {
	var names []string
	for name := range pl.active {
		if pl.replacementCounts(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// otherReady is how many clusters other than name are left in the proxy with the
// Gateway ready.
func (pl *plan) otherReady(name string) int {
	if pl.ready(name) {
		return pl.readyLeft - 1
	}
	return pl.readyLeft
}

// removePassed removes, in name order, the draining clusters whose removal gate lets
// them go (rule 3, rule 8), each removal counting for the next: the removals stop
// short of leaving no cluster with the Gateway ready.
func (pl *plan) removePassed(removed map[string]RemovalReason) {
	for _, name := range sortedKeys(pl.draining) {
		if removed[name] != "" {
			continue
		}
		if reason, _ := pl.gate(pl.draining[name], pl.otherReady(name)); reason != "" {
			removed[name] = reason
			if pl.ready(name) {
				pl.readyLeft--
			}
		}
	}
}

// output builds the decision from the removals.
func (pl *plan) output(removed map[string]RemovalReason, skipped []ForceRemoveSkip) Output {
	out := Output{ForceRemoveSkipped: skipped}

	members := map[int32][]string{}
	for index := range pl.baseGroups {
		members[index] = nil
	}
	for name, index := range pl.active {
		members[index] = append(members[index], name)
	}
	for name, d := range pl.draining {
		if removed[name] == "" {
			members[d.group] = append(members[d.group], name)
		}
	}
	for _, index := range sortedKeys(members) {
		clusters := members[index]
		slices.Sort(clusters)
		out.Proxy = append(out.Proxy, Group{Index: index, Name: pl.groupNames[index], Clusters: clusters})
	}

	checking := pl.checkingReplacements(removed)
	for name := range pl.active {
		out.Clusters = append(out.Clusters, pl.activeRow(name, checking, &out.RequeueAt))
	}
	for name, d := range pl.draining {
		if reason := removed[name]; reason != "" {
			row := d.row
			row.Phase = v1alpha1.ClusterRemoved
			row.RemovalTime = ptrTime(pl.stamp)
			row.Message = removalMessage(reason)
			out.Clusters = append(out.Clusters, row)
			out.Removed = append(out.Removed, Removal{Cluster: name, Reason: reason})
			pl.requeueAt(&out.RequeueAt, row.RemovalTime.Add(RemovedRowRetention))
			continue
		}
		out.Clusters = append(out.Clusters, pl.drainingRow(d, pl.otherReady(name)))
		pl.requeueDrain(&out.RequeueAt, d)
	}
	for _, row := range pl.retained {
		out.Clusters = append(out.Clusters, row)
		pl.requeueAt(&out.RequeueAt, row.RemovalTime.Add(RemovedRowRetention))
	}
	slices.SortFunc(out.Clusters, func(a, b v1alpha1.ClusterStatus) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(out.Removed, func(a, b Removal) int { return cmp.Compare(a.Cluster, b.Cluster) })
	return out
}

// drainingRow is the row of a draining cluster that stays: Held past its deadline,
// Draining before, with a message listing what its removal still waits for, whether
// its drain is stalled (stall.go) and what its last check reported.
func (pl *plan) drainingRow(d *drainRow, otherReady int) v1alpha1.ClusterStatus {
	row := d.row
	row.Phase = v1alpha1.ClusterDraining
	if pl.held(d) {
		row.Phase = v1alpha1.ClusterHeld
	}
	row.NextEvaluationTime = ptrTime(pl.dueAt(d))
	row.Stalled = pl.stalled(d)
	row.EstimatedRemovalTime = pl.estimateRemoval(d)
	_, parts := pl.gate(d, otherReady)
	if row.Stalled {
		parts = append(parts, msgStalled)
	}
	if row.LastCheckDetail != "" {
		parts = append(parts, msgLastCheck+row.LastCheckDetail)
	}
	row.Message = strings.Join(parts, msgSeparator)
	return row
}

func waitingForChecks(n int32) string {
	if n == 1 {
		return "waiting for 1 more passing check"
	}
	return fmt.Sprintf("waiting for %d more passing checks", n)
}

func removalMessage(reason RemovalReason) string {
	switch reason {
	case RemovalGatePassed:
		return msgRemovedGate
	case RemovalForceRemoved:
		return msgRemovedForce
	case RemovalManagedClusterGone:
		return msgRemovedGone
	case RemovalHubMaxDrainDuration:
		return msgRemovedCeiling
	default:
		return msgRemovedDeadline
	}
}

// requeueDrain moves *at to the next time the decision about a staying draining
// cluster can change: its next check, the end of its minimum drain, its deadline.
func (pl *plan) requeueDrain(at *time.Time, d *drainRow) {
	if pl.in.RealKnown {
		due := pl.dueAt(d)
		if !due.After(pl.in.Now) {
			// Due but not checked in this sync: try again an interval later.
			due = pl.in.Now.Add(pl.policy.Interval)
		}
		pl.requeueAt(at, due)
	}
	if end := pl.policy.MinDrainEnd(&d.row, pl.followDNS()); !end.IsZero() {
		pl.requeueAt(at, end)
	}
	if pl.policy.MaxDrainDuration != nil {
		pl.requeueAt(at, pl.deadline(d))
	}
	if pl.policy.Ceiling != nil {
		pl.requeueAt(at, pl.ceiling(d))
	}
}

// requeueAt moves *at to t when t is after Now and before *at.
func (pl *plan) requeueAt(at *time.Time, t time.Time) {
	if t.After(pl.in.Now) && (at.IsZero() || t.Before(*at)) {
		*at = t.UTC()
	}
}

// gone reports whether the cluster's ManagedCluster is known not to exist.
func (pl *plan) gone(name string) bool {
	return pl.in.ManagedClusters != nil && !pl.in.ManagedClusters.Has(name)
}

// ready reports whether the cluster has the target Gateway ready. A cluster whose
// ManagedCluster is gone is not ready, whatever its agent last said.
func (pl *plan) ready(name string) bool {
	return pl.in.GatewayReady.Has(name) && !pl.gone(name)
}

// dueAt is when the cluster is checked next: an interval after its last check, or at
// once (when its drain starts) if it was never checked.
func (pl *plan) dueAt(d *drainRow) time.Time {
	if d.row.LastEvaluationTime == nil {
		return d.row.DrainStartTime.Time
	}
	return pl.policy.CheckDueAfter(d.row.LastEvaluationTime.Time)
}

func (pl *plan) isDue(d *drainRow) bool {
	return !pl.dueAt(d).After(pl.in.Now)
}

func (pl *plan) minDrainReached(d *drainRow) bool {
	end := pl.policy.MinDrainEnd(&d.row, pl.followDNS())
	return !end.IsZero() && !pl.in.Now.Before(end)
}

func (pl *plan) checksPassed(d *drainRow) bool {
	return d.row.ConsecutiveSuccesses >= pl.policy.ConsecutiveSuccesses
}

// deadline is when the cluster's drain is past maxDrainDuration (see Policy.Deadline).
// Only called when MaxDrainDuration is set.
func (pl *plan) deadline(d *drainRow) time.Time {
	return pl.policy.Deadline(&d.row)
}

// ceiling is when the cluster's drain is past the hub's ceiling. Only called when
// the policy has a Ceiling.
func (pl *plan) ceiling(d *drainRow) time.Time {
	return d.row.DrainStartTime.Add(pl.policy.Ceiling.MaxDrainDuration)
}

// pastOwnDeadline reports whether the drain is past the policy's maxDrainDuration.
func (pl *plan) pastOwnDeadline(d *drainRow) bool {
	return pl.policy.MaxDrainDuration != nil && !pl.in.Now.Before(pl.deadline(d))
}

// pastCeiling reports whether the drain is past the hub's ceiling.
func (pl *plan) pastCeiling(d *drainRow) bool {
	return pl.policy.Ceiling != nil && !pl.in.Now.Before(pl.ceiling(d))
}

// held reports whether the drain is past its policy's maxDrainDuration or the hub's
// ceiling: its row is Held (rules 8 and 13). The gate's pastDeadline is the first only.
func (pl *plan) held(d *drainRow) bool {
	return pl.pastOwnDeadline(d) || pl.pastCeiling(d)
}

// deadlineRemoves reports whether the policy's deadline removes the cluster whatever
// its checks say (rule 8).
func (pl *plan) deadlineRemoves(d *drainRow) bool {
	return pl.policy.OnMaxDrainDuration == v1alpha1.DeadlineRemove && pl.pastOwnDeadline(d)
}

// ceilingRemoves reports whether the hub's ceiling removes the cluster whatever its
// checks, and its policy's suspend, say (rule 13).
func (pl *plan) ceilingRemoves(d *drainRow) bool {
	return pl.pastCeiling(d) && pl.policy.Ceiling.Action == v1alpha1.DeadlineRemove
}

// indexedGroups are decision groups by cluster and by index.
type indexedGroups struct {
	// clusters maps each cluster to the index of its group.
	clusters map[string]int32
	// names maps each group index to its name.
	names map[int32]string
}

// indexGroups indexes groups so that the result does not depend on their order: a
// cluster listed twice belongs to the group of lowest index (then name), and an index
// with several names takes the least name.
func indexGroups(groups []Group) indexedGroups {
	sorted := slices.Clone(groups)
	slices.SortStableFunc(sorted, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.Name, b.Name))
	})
	ig := indexedGroups{clusters: map[string]int32{}, names: map[int32]string{}}
	for _, g := range sorted {
		if _, ok := ig.names[g.Index]; !ok {
			ig.names[g.Index] = g.Name
		}
		for _, c := range g.Clusters {
			if _, ok := ig.clusters[c]; !ok && c != "" {
				ig.clusters[c] = g.Index
			}
		}
	}
	return ig
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ceilSecond rounds t up to a whole second, in UTC: metav1.Time keeps seconds, and
// rounding up never makes a drain or an interval shorter.
func ceilSecond(t time.Time) time.Time {
	s := t.Truncate(time.Second)
	if s.Before(t) {
		s = s.Add(time.Second)
	}
	return s.UTC()
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
