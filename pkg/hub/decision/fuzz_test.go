// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// FuzzDecide builds inputs from the fuzzer's bytes and checks the invariants of the
// proxy decision on each: the proxy always holds every real cluster, nothing leaves it
// without an allowed reason whose conditions hold in the input, the gate never leaves
// no ready cluster, unknown real decisions change nothing but gone clusters, and the
// decision is deterministic and idempotent. `go test` runs the seeds; `go test
// -fuzz=FuzzDecide` explores.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add(slices.Repeat([]byte{0xff}, 128))
	f.Add(slices.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 20))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		seed := make([]byte, 96+rng.IntN(64))
		for i := range seed {
			seed[i] = byte(rng.UintN(256))
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkInvariants(t, fuzzInput(data))
	})
}

// fuzzClusters are the cluster names the fuzzer draws from: few, so that R, P, the
// rows and the other inputs overlap often.
var fuzzClusters = []string{"c0", "c1", "c2", "c3", "c4", "c5"}

// fuzzBytes hands out the fuzzer's bytes, then zeros.
type fuzzBytes []byte

func (b *fuzzBytes) pick(n int) int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v) % n
}

func (b *fuzzBytes) oneIn(n int) bool { return b.pick(n) == 0 }

func choose[T any](b *fuzzBytes, options ...T) T { return options[b.pick(len(options))] }

func fuzzInput(data []byte) Input {
	b := fuzzBytes(data)
	policy := Policy{
		Suspend:              b.oneIn(4),
		Interval:             choose(&b, time.Second, 30*time.Second, 1500*time.Millisecond),
		ConsecutiveSuccesses: choose[int32](&b, 1, 2, 3),
		MinDrainDuration:     choose(&b, 0, time.Minute, 2*time.Minute),
		OnMaxDrainDuration:   choose(&b, v1alpha1.DeadlineHold, v1alpha1.DeadlineRemove),
		NoDataPolicy:         choose(&b, v1alpha1.NoDataHold, v1alpha1.NoDataPass),
	}
	if !b.oneIn(3) {
		d := choose(&b, 0, time.Minute, 10*time.Minute)
		policy.MaxDrainDuration = &d
	}
	in := Input{
		Now:       now.Add(time.Duration(b.pick(4)) * 250 * time.Millisecond),
		Policy:    policy,
		RealKnown: !b.oneIn(5),
	}
	in.Real = fuzzGroups(&b)
	in.Proxy = fuzzGroups(&b)
	for _, c := range fuzzClusters {
		if row, ok := fuzzRow(&b, c); ok {
			in.Previous = append(in.Previous, row)
		}
	}
	if !b.oneIn(5) {
		in.ManagedClusters = sets.New[string]()
		for _, c := range fuzzClusters {
			if !b.oneIn(5) {
				in.ManagedClusters.Insert(c)
			}
		}
	}
	in.GatewayReady = sets.New[string]()
	for _, c := range fuzzClusters {
		if b.oneIn(2) {
			in.GatewayReady.Insert(c)
		}
	}
	for _, c := range append(slices.Clone(fuzzClusters), "c9") {
		if b.oneIn(6) {
			in.ForceRemove = append(in.ForceRemove, c)
		}
	}
	// Mostly check what Due lists, as the controller does; sometimes check anything, to
	// prove that checks of clusters that are not due are not counted.
	candidates := Due(in)
	if b.oneIn(3) {
		candidates = fuzzClusters
	}
	for _, c := range candidates {
		if b.oneIn(5) {
			continue
		}
		if in.Checks == nil {
			in.Checks = map[string]Check{}
		}
		result := choose(&b, v1alpha1.EvaluationPass, v1alpha1.EvaluationPass, v1alpha1.EvaluationFail,
			v1alpha1.EvaluationNoData, v1alpha1.EvaluationError, "Bogus")
		in.Checks[c] = Check{Result: result, Value: valueOf(result), Query: queryOf(c),
			Message: choose(&b, "", "query failed: timeout", "no data; last check: nested")}
	}
	if b.oneIn(3) {
		in.Policy.DNSTTL = choose(&b, time.Second, time.Minute, 3*time.Minute)
		in.DNS = &DNS{Withdrawn: sets.New[string]()}
		for _, c := range fuzzClusters {
			if b.oneIn(2) {
				in.DNS.Withdrawn.Insert(c)
			}
		}
	}
	if b.oneIn(4) {
		in.Policy.Ceiling = &Ceiling{
			MaxDrainDuration: choose(&b, time.Minute, 5*time.Minute, 10*time.Minute),
			Action:           choose(&b, v1alpha1.DeadlineHold, v1alpha1.DeadlineRemove),
		}
	}
	fuzzStall(&b, &in)
	return in
}

// fuzzStall sometimes gives the policy an expectation and a window, and the draining
// rows that left DNS a history and a reference, so that drains stall (stall.go).
func fuzzStall(b *fuzzBytes, in *Input) {
	if b.oneIn(2) {
		return
	}
	in.Policy.Expectation = &v1alpha1.Comparison{Operator: choose(b, "<=", "<", ">="), Threshold: 0.1}
	in.Policy.ShareWindow = choose(b, 0, 10*time.Second, time.Minute)
	for i := range in.Previous {
		r := &in.Previous[i]
		if r.DNSWithdrawalTime == nil || r.LastEvaluationTime == nil {
			continue
		}
		if b.oneIn(2) {
			// Long enough ago for any TTL of the fuzzer to stall the drain.
			r.DNSWithdrawalTime = &metav1.Time{Time: now.Add(-10 * time.Minute)}
		}
		r.History = []v1alpha1.CheckRecord{{Time: *r.LastEvaluationTime, Result: r.LastResult, Value: r.LastValue}}
		if !b.oneIn(3) {
			r.DNSWithdrawalCheck = &v1alpha1.CheckRecord{
				Time:   metav1.NewTime(r.DNSWithdrawalTime.Add(time.Duration(b.pick(3)-1) * time.Second)),
				Result: v1alpha1.EvaluationFail,
				Value:  choose(b, "0.5", "0.9", "0", "x"),
			}
		}
	}
}

// fuzzGroups puts each cluster in at most one group of index 0 to 2, whose name varies
// so that an index sometimes has two names, and sometimes adds an empty group.
func fuzzGroups(b *fuzzBytes) []Group {
	type key struct {
		index int32
		name  string
	}
	members := map[key][]string{}
	for _, c := range fuzzClusters {
		if v := b.pick(4); v > 0 {
			index := int32(v - 1)
			k := key{index, choose(b, "g", "h") + fmt.Sprint(index)}
			members[k] = append(members[k], c)
		}
	}
	if b.oneIn(4) {
		members[key{int32(b.pick(5)), "e"}] = nil
	}
	var groups []Group
	for k, clusters := range members {
		groups = append(groups, Group{Index: k.index, Name: k.name, Clusters: clusters})
	}
	slices.SortFunc(groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), strings.Compare(a.Name, b.Name))
	})
	return groups
}

// fuzzRow is the previous row of a cluster, when it has one: any phase, with drain
// state that may be partial or odd.
func fuzzRow(b *fuzzBytes, name string) (v1alpha1.ClusterStatus, bool) {
	timeAgo := func(step time.Duration, n int) *metav1.Time {
		t := metav1.NewTime(now.Add(-step * time.Duration(b.pick(n))))
		return &t
	}
	row := v1alpha1.ClusterStatus{Name: name}
	switch b.pick(6) {
	case 0, 1:
		return row, false
	case 2:
		row.Phase = v1alpha1.ClusterActive
	case 3:
		row.Phase = v1alpha1.ClusterRemoved
		if !b.oneIn(5) {
			row.RemovalTime = timeAgo(time.Minute, 15)
		}
		row.Message = msgRemovedGate
	default:
		row.Phase = choose(b, v1alpha1.ClusterDraining, v1alpha1.ClusterHeld)
		if !b.oneIn(8) {
			row.DrainStartTime = timeAgo(45*time.Second, 8)
			if b.oneIn(10) {
				future := metav1.NewTime(now.Add(10 * time.Second))
				row.DrainStartTime = &future
			}
		}
		row.ConsecutiveSuccesses = int32(b.pick(5))
		if !b.oneIn(3) {
			row.LastEvaluationTime = timeAgo(20*time.Second, 4)
			row.LastResult = choose(b, "", v1alpha1.EvaluationPass, v1alpha1.EvaluationFail,
				v1alpha1.EvaluationNoData, v1alpha1.EvaluationError)
			row.LastValue = valueOf(row.LastResult)
			row.ResolvedQuery = queryOf(name)
		}
		row.NextEvaluationTime = timeAgo(time.Second, 30)
		row.Message = choose(b, "", "waiting for 1 more passing check; last check: boom", "free text")
		if b.oneIn(3) {
			row.DNSWithdrawalTime = timeAgo(30*time.Second, 6)
		}
	}
	return row, true
}

// checkInvariants decides on in and checks what must hold whatever the input.
func checkInvariants(t *testing.T, in Input) {
	t.Helper()
	before := cloneInput(in)
	due := Due(in)
	out := Decide(in)
	if !reflect.DeepEqual(in, before) {
		t.Fatalf("Decide changed its input")
	}
	if again := Decide(in); !reflect.DeepEqual(again, out) {
		t.Fatalf("Decide is not deterministic:\n%s\n%s", asJSON(out), asJSON(again))
	}
	v := newVerifier(t, in, out)
	v.sorted()
	v.realClustersStay()
	v.removalsAllowed()
	v.rowsMatch()
	v.forceRemoveAccounted()
	v.dueIsDraining(due)
	checked, checkedReplacements := Checked(in)
	v.dueIsDraining(checked)
	for _, c := range due {
		if !slices.Contains(checked, c) {
			t.Errorf("%s is due but not listed by Checked %v", c, checked)
		}
	}
	for _, c := range DueReplacements(in) {
		if !slices.Contains(checkedReplacements, c) {
			t.Errorf("%s's replacement check is due but not listed by Checked %v", c, checkedReplacements)
		}
	}
	if !out.RequeueAt.IsZero() && !out.RequeueAt.After(in.Now) {
		t.Errorf("RequeueAt %v is not after now %v", out.RequeueAt, in.Now)
	}

	next := Decide(nextInput(t, in, out))
	if !reflect.DeepEqual(next.Proxy, out.Proxy) || asJSON(next.Clusters) != asJSON(out.Clusters) ||
		next.Removed != nil || !next.RequeueAt.Equal(out.RequeueAt) {
		t.Errorf("not idempotent:\nfirst:  %s\nsecond: %s", asJSON(out), asJSON(next))
	}
	if t.Failed() {
		t.Logf("input: %s", asJSON(in))
		t.Logf("output: %s", asJSON(out))
	}
}

// verifier checks an output against its input from first principles, without the
// package's own helpers where it can.
type verifier struct {
	t        *testing.T
	in       Input
	out      Output
	real     map[string]int32
	proxy    map[string]int32
	result   map[string]int32
	removed  map[string]RemovalReason
	rows     map[string]v1alpha1.ClusterStatus
	previous map[string]v1alpha1.ClusterStatus
	forced   sets.Set[string]
	// stalls counts the stalled rows seen.
	stalls int
}

func newVerifier(t *testing.T, in Input, out Output) *verifier {
	v := &verifier{
		t: t, in: in, out: out,
		real: clustersOf(in.Real), proxy: clustersOf(in.Proxy), result: clustersOf(out.Proxy),
		removed: map[string]RemovalReason{}, rows: map[string]v1alpha1.ClusterStatus{},
		previous: map[string]v1alpha1.ClusterStatus{}, forced: sets.New(in.ForceRemove...),
	}
	for _, r := range out.Removed {
		v.removed[r.Cluster] = r.Reason
	}
	for _, r := range out.Clusters {
		v.rows[r.Name] = r
	}
	for _, r := range in.Previous {
		v.previous[r.Name] = r
	}
	v.restoredRight()
	return v
}

// restoredRight: rule 12 lists again exactly the clusters whose rows say they drain
// and that P lost; they count as P's from then on.
func (v *verifier) restoredRight() {
	restored := sets.New(v.out.Restored...)
	if len(restored) != len(v.out.Restored) || !slices.IsSorted(v.out.Restored) {
		v.t.Errorf("restored clusters not sorted and unique: %v", v.out.Restored)
	}
	for c := range v.previous {
		_, inProxy := v.proxy[c]
		lost := v.wasDraining(c) && !inProxy && !v.inReal(c)
		if lost != restored.Has(c) {
			v.t.Errorf("rule 12: cluster %s restored %v, but lost %v", c, restored.Has(c), lost)
		}
	}
	for c := range restored {
		if _, ok := v.previous[c]; !ok {
			v.t.Errorf("rule 12: cluster %s restored without a row", c)
		}
		v.proxy[c] = v.result[c]
	}
}

// clustersOf maps each cluster to its group's index; the fuzzer lists each cluster once.
func clustersOf(groups []Group) map[string]int32 {
	m := map[string]int32{}
	for _, g := range groups {
		for _, c := range g.Clusters {
			m[c] = g.Index
		}
	}
	return m
}

func (v *verifier) gone(c string) bool {
	return v.in.ManagedClusters != nil && !v.in.ManagedClusters.Has(c)
}

func (v *verifier) ready(c string) bool { return v.in.GatewayReady.Has(c) && !v.gone(c) }

func (v *verifier) inReal(c string) bool {
	_, ok := v.real[c]
	return v.in.RealKnown && ok
}

// readyLeft counts the clusters of the output proxy with the Gateway ready, but except.
func (v *verifier) readyLeft(except string) int {
	n := 0
	for c := range v.result {
		if c != except && v.ready(c) {
			n++
		}
	}
	return n
}

// wasDraining reports whether the previous row of c held a drain.
func (v *verifier) wasDraining(c string) bool {
	r, ok := v.previous[c]
	return ok && r.DrainStartTime != nil && (r.Phase == v1alpha1.ClusterDraining || r.Phase == v1alpha1.ClusterHeld)
}

// drainStart is when c's drain started: its previous row's, or now rounded up.
// dnsMinDrainReached reports whether a row's drain, when DNS is followed, has lasted
// its minimum (and the TTL) since DNS let go of it; true when DNS is not followed.
func (v *verifier) dnsMinDrainReached(row v1alpha1.ClusterStatus) bool {
	if v.in.DNS == nil {
		return true
	}
	p := v.in.Policy
	return row.DNSWithdrawalTime != nil &&
		!v.in.Now.Before(row.DNSWithdrawalTime.Add(max(p.MinDrainDuration, p.DNSTTL))) &&
		!v.in.Now.Before(row.DrainStartTime.Add(max(p.MinDrainDuration, p.DNSTTL)))
}

func (v *verifier) drainStart(c string) time.Time {
	if v.wasDraining(c) {
		return v.previous[c].DrainStartTime.Time
	}
	return ceilSecond(v.in.Now)
}

// lastCheck is when c was last checked before this sync; nil when never.
func (v *verifier) lastCheck(c string) *metav1.Time {
	if !v.wasDraining(c) {
		return nil
	}
	return v.previous[c].LastEvaluationTime
}

// wasDue reports whether c's check was due: an interval after its last check, or
// once its drain started when never checked.
func (v *verifier) wasDue(c string) bool {
	due := v.drainStart(c)
	if last := v.lastCheck(c); last != nil {
		due = ceilSecond(last.Add(v.in.Policy.Interval))
	}
	return !v.in.Now.Before(due)
}

// maxSuccesses bounds the run of c's successes: the previous run plus this sync's
// passing check when c was due.
func (v *verifier) maxSuccesses(c string) int32 {
	var n int32
	if v.lastCheck(c) != nil {
		n = max(v.previous[c].ConsecutiveSuccesses, 0)
	}
	if ev, ok := v.in.Checks[c]; ok && v.wasDue(c) && v.in.Policy.passes(ev.Result) {
		n++
	}
	return n
}

// checkCounted: a row records a new check only for a cluster that was due and was
// checked, with the check's result (anything unknown read as Error); a passing check
// adds one to the run, any other starts it over (rule 4), and without a check the run
// stays.
func (v *verifier) checkCounted(c string, row v1alpha1.ClusterStatus) {
	last := v.lastCheck(c)
	var run int32
	if last != nil {
		run = max(v.previous[c].ConsecutiveSuccesses, 0)
	}
	if reflect.DeepEqual(row.LastEvaluationTime, last) {
		if row.ConsecutiveSuccesses != run {
			v.t.Errorf("row of %s has a run of %d without a check, want %d", c, row.ConsecutiveSuccesses, run)
		}
		return
	}
	if v.in.Policy.passes(row.LastResult) {
		run++
	} else {
		run = 0
	}
	if row.ConsecutiveSuccesses != run {
		v.t.Errorf("rule 4: row of %s has a run of %d after a %s check, want %d", c, row.ConsecutiveSuccesses, row.LastResult, run)
	}
	ev, checked := v.in.Checks[c]
	want := ev.Result
	if want != v1alpha1.EvaluationPass && want != v1alpha1.EvaluationFail && want != v1alpha1.EvaluationNoData {
		want = v1alpha1.EvaluationError
	}
	if !v.in.RealKnown || !checked || !v.wasDue(c) || row.LastResult != want || row.LastEvaluationTime == nil ||
		!row.LastEvaluationTime.Time.Equal(ceilSecond(v.in.Now)) {
		v.t.Errorf("rule 3: row of %s records a check that does not count: %+v", c, row)
	}
}

func (v *verifier) pastDeadline(c string) bool {
	p := v.in.Policy
	return (p.MaxDrainDuration != nil && !v.in.Now.Before(v.drainStart(c).Add(max(*p.MaxDrainDuration, p.MinDrainDuration)))) ||
		v.pastCeiling(c)
}

func (v *verifier) pastCeiling(c string) bool {
	p := v.in.Policy
	return p.Ceiling != nil && !v.in.Now.Before(v.drainStart(c).Add(p.Ceiling.MaxDrainDuration))
}

func (v *verifier) sorted() {
	t := v.t
	seen := sets.New[string]()
	for i, g := range v.out.Proxy {
		if i > 0 && v.out.Proxy[i-1].Index >= g.Index {
			t.Errorf("proxy groups not sorted by unique index: %v", v.out.Proxy)
		}
		if !slices.IsSorted(g.Clusters) || len(slices.Compact(slices.Clone(g.Clusters))) != len(g.Clusters) {
			t.Errorf("group %d clusters not sorted and unique: %v", g.Index, g.Clusters)
		}
		for _, c := range g.Clusters {
			if seen.Has(c) {
				t.Errorf("cluster %s in two groups", c)
			}
			seen.Insert(c)
		}
	}
	if !slices.IsSortedFunc(v.out.Clusters, func(a, b v1alpha1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) }) ||
		len(v.rows) != len(v.out.Clusters) {
		t.Errorf("rows not sorted by unique name")
	}
	if !slices.IsSortedFunc(v.out.Removed, func(a, b Removal) int { return strings.Compare(a.Cluster, b.Cluster) }) ||
		len(v.removed) != len(v.out.Removed) {
		t.Errorf("removals not sorted by unique name")
	}
}

// realClustersStay: rule 1 when R is known; when it is not, the proxy is P less the
// clusters whose ManagedCluster is gone (rule 7).
func (v *verifier) realClustersStay() {
	t := v.t
	if v.in.RealKnown {
		for c, index := range v.real {
			if got, ok := v.result[c]; !ok || got != index {
				t.Errorf("rule 1: real cluster %s (group %d) not in the proxy's group %d", c, index, got)
			}
		}
	}
	for c := range v.result {
		if _, ok := v.proxy[c]; !ok && !v.inReal(c) {
			t.Errorf("cluster %s appeared from nowhere", c)
		}
	}
	if !v.in.RealKnown {
		for c, index := range v.proxy {
			if got, ok := v.result[c]; ok && got != index {
				t.Errorf("rule 7: cluster %s moved from group %d to %d", c, index, got)
			}
		}
	}
}

// removalsAllowed: a cluster leaves the proxy only with a reason whose conditions hold
// in the input.
func (v *verifier) removalsAllowed() {
	t := v.t
	p := v.in.Policy
	for c := range v.proxy {
		if _, stays := v.result[c]; !stays && v.removed[c] == "" {
			t.Errorf("cluster %s left the proxy without a removal", c)
		}
	}
	for c, reason := range v.removed {
		_, wasListed := v.proxy[c]
		_, stays := v.result[c]
		if !wasListed || stays {
			t.Errorf("removal of %s, which the proxy did not list or still lists", c)
			continue
		}
		if !v.in.RealKnown && reason != RemovalManagedClusterGone {
			t.Errorf("rule 7: %s removed (%s) while the real decisions are unknown", c, reason)
		}
		if v.inReal(c) {
			t.Errorf("rule 1: real cluster %s removed (%s)", c, reason)
		}
		switch reason {
		case RemovalManagedClusterGone:
			if !v.gone(c) || (!v.in.RealKnown && !v.wasDraining(c)) {
				t.Errorf("rule 6: %s removed as gone", c)
			}
		case RemovalForceRemoved:
			if !v.forced.Has(c) || v.gone(c) {
				t.Errorf("%s force-removed without being named", c)
			}
		case RemovalGatePassed:
			if p.Suspend || v.gone(c) || v.maxSuccesses(c) < p.ConsecutiveSuccesses ||
				v.in.Now.Before(v.drainStart(c).Add(p.MinDrainDuration)) || v.readyLeft("") == 0 ||
				v.rows[c].ConsecutiveSuccesses < p.ConsecutiveSuccesses || !v.dnsMinDrainReached(v.rows[c]) {
				t.Errorf("rule 3: %s removed but its gate did not pass", c)
			}
		case RemovalMaxDrainDuration:
			if p.Suspend || v.gone(c) || p.OnMaxDrainDuration != v1alpha1.DeadlineRemove ||
				p.MaxDrainDuration == nil || v.in.Now.Before(v.drainStart(c).Add(max(*p.MaxDrainDuration, p.MinDrainDuration))) ||
				v.readyLeft("") == 0 {
				t.Errorf("rule 8: %s removed at a deadline it did not reach", c)
			}
		case RemovalHubMaxDrainDuration:
			if v.gone(c) || p.Ceiling == nil || p.Ceiling.Action != v1alpha1.DeadlineRemove || !v.pastCeiling(c) ||
				v.readyLeft("") == 0 {
				t.Errorf("rule 13: %s removed at a ceiling it did not reach", c)
			}
		default:
			t.Errorf("%s removed for an unknown reason %q", c, reason)
		}
	}
}

// rowsMatch: one row per cluster of the proxy with the right phase and state, a
// Removed row per removal, and only recent Removed rows besides.
func (v *verifier) rowsMatch() {
	t := v.t
	p := v.in.Policy
	for c, row := range v.rows {
		if len(row.History) > v1alpha1.MaxCheckHistory || len(row.LastCheckDetail) > MaxCheckDetailLength {
			t.Errorf("row of %s keeps %d checks and a detail of %d bytes, bounds %d and %d",
				c, len(row.History), len(row.LastCheckDetail), v1alpha1.MaxCheckHistory, MaxCheckDetailLength)
		}
	}
	for c := range v.result {
		row, ok := v.rows[c]
		switch {
		case !ok:
			t.Errorf("no row for proxy cluster %s", c)
		case row.Phase == v1alpha1.ClusterActive:
			if !reflect.DeepEqual(row, v1alpha1.ClusterStatus{Name: c, Phase: v1alpha1.ClusterActive}) {
				t.Errorf("rule 5: Active row of %s has drain state: %+v", c, row)
			}
			if v.in.RealKnown && !v.inReal(c) {
				t.Errorf("draining cluster %s has an Active row", c)
			}
			if !v.in.RealKnown && v.wasDraining(c) {
				t.Errorf("rule 7: draining cluster %s became Active", c)
			}
		case row.Phase == v1alpha1.ClusterDraining || row.Phase == v1alpha1.ClusterHeld:
			if v.inReal(c) {
				t.Errorf("rule 5: real cluster %s has a %s row", c, row.Phase)
			}
			if row.DrainStartTime == nil || !row.DrainStartTime.Time.Equal(v.drainStart(c)) {
				t.Errorf("rule 9: row of %s starts at %v, want %v", c, row.DrainStartTime, v.drainStart(c))
			}
			if row.NextEvaluationTime == nil || row.Message == "" || strings.Contains(row.Message, "2030") {
				t.Errorf("row of %s lacks its next check or a message without times: %+v", c, row)
			}
			if (row.Phase == v1alpha1.ClusterHeld) != v.pastDeadline(c) {
				t.Errorf("rule 8: row of %s is %s, past deadline %v", c, row.Phase, v.pastDeadline(c))
			}
			v.checkCounted(c, row)
			if row.ConsecutiveSuccesses > v.maxSuccesses(c) {
				t.Errorf("rule 3: %s counts %d successes, at most %d", c, row.ConsecutiveSuccesses, v.maxSuccesses(c))
			}
			// A cluster whose gate passed stays only for want of another ready cluster.
			if v.in.DNS != nil && row.DNSWithdrawalTime == nil && v.in.DNS.Withdrawn.Has(c) {
				t.Errorf("DNS let go of %s, and its drain clock did not start", c)
			}
			if v.in.RealKnown && !p.Suspend && row.ConsecutiveSuccesses >= p.ConsecutiveSuccesses &&
				!v.in.Now.Before(row.DrainStartTime.Add(p.MinDrainDuration)) && v.readyLeft(c) > 0 &&
				v.dnsMinDrainReached(row) {
				t.Errorf("rule 3: %s stays though its gate passed", c)
			}
			if v.in.RealKnown && v.pastCeiling(c) && p.Ceiling.Action == v1alpha1.DeadlineRemove && v.readyLeft(c) > 0 {
				t.Errorf("rule 13: %s stays past the hub's ceiling", c)
			}
			v.stallRight(c, row)
		default:
			t.Errorf("proxy cluster %s has a %s row", c, row.Phase)
		}
	}
	for c, row := range v.rows {
		if _, stays := v.result[c]; stays {
			continue
		}
		if row.Phase != v1alpha1.ClusterRemoved || row.RemovalTime == nil {
			t.Errorf("row of %s, not in the proxy, is not Removed: %+v", c, row)
			continue
		}
		if v.removed[c] != "" {
			v.checkCounted(c, row)
			if !row.RemovalTime.Time.Equal(ceilSecond(v.in.Now)) {
				t.Errorf("removal time of %s is %v", c, row.RemovalTime)
			}
			continue
		}
		if prev, ok := v.previous[c]; !ok || !reflect.DeepEqual(prev, row) ||
			!v.in.Now.Before(row.RemovalTime.Add(RemovedRowRetention)) {
			t.Errorf("row of %s is neither a removal nor a recent Removed row: %+v", c, row)
		}
	}
}

// stallRight: a stalled row is one that DNS let go of, against a reference from the
// withdrawal on, with no estimate and a message that says so; other rows do not say so.
func (v *verifier) stallRight(c string, row v1alpha1.ClusterStatus) {
	if row.Stalled != strings.Contains(row.Message, msgStalled) {
		v.t.Errorf("row of %s: stalled %v, but its message says otherwise: %q", c, row.Stalled, row.Message)
	}
	if ref := row.DNSWithdrawalCheck; ref != nil && (v.in.DNS == nil || row.DNSWithdrawalTime == nil || ref.Time.Before(row.DNSWithdrawalTime)) {
		v.t.Errorf("row of %s keeps a reference that is not one: %+v", c, row)
	}
	if !row.Stalled {
		return
	}
	v.stalls++
	e := v.in.Policy.Expectation
	if v.in.DNS == nil || row.DNSWithdrawalTime == nil || row.DNSWithdrawalCheck == nil || row.EstimatedRemovalTime != nil ||
		e == nil || (e.Operator != "<" && e.Operator != "<=") {
		v.t.Errorf("row of %s is stalled without the grounds for it: %+v", c, row)
	}
}

// forceRemoveAccounted: each name of the annotation is removed or reported, once.
func (v *verifier) forceRemoveAccounted() {
	t := v.t
	skipped := map[string]SkipReason{}
	for _, s := range v.out.ForceRemoveSkipped {
		if _, dup := skipped[s.Cluster]; dup || v.removed[s.Cluster] != "" {
			t.Errorf("force-remove of %s reported twice", s.Cluster)
		}
		skipped[s.Cluster] = s.Reason
		_, listed := v.proxy[s.Cluster]
		switch s.Reason {
		case SkipInRealDecisions:
			if !v.inReal(s.Cluster) {
				t.Errorf("force-remove of %s skipped as real", s.Cluster)
			}
		case SkipNotInProxy:
			if listed || v.inReal(s.Cluster) {
				t.Errorf("force-remove of %s skipped as not listed", s.Cluster)
			}
		case SkipRealDecisionsUnknown:
			if v.in.RealKnown || !listed {
				t.Errorf("force-remove of %s deferred", s.Cluster)
			}
		default:
			t.Errorf("force-remove of %s skipped for an unknown reason %q", s.Cluster, s.Reason)
		}
	}
	for c := range v.forced {
		if _, ok := skipped[c]; !ok && v.removed[c] == "" {
			t.Errorf("force-remove of %s neither done nor reported", c)
		}
	}
}

// dueIsDraining: only draining clusters that stay for now are checked.
func (v *verifier) dueIsDraining(due []string) {
	for _, c := range due {
		if _, listed := v.proxy[c]; !v.in.RealKnown || !listed || v.inReal(c) || v.gone(c) || v.forced.Has(c) {
			v.t.Errorf("%s is due but not a draining cluster to check", c)
		}
	}
	if !slices.IsSorted(due) {
		v.t.Errorf("due not sorted: %v", due)
	}
}

func cloneInput(in Input) Input {
	out := in
	cloneGroups := func(groups []Group) []Group {
		var c []Group
		for _, g := range groups {
			g.Clusters = slices.Clone(g.Clusters)
			c = append(c, g)
		}
		return c
	}
	out.Real = cloneGroups(in.Real)
	out.Proxy = cloneGroups(in.Proxy)
	if in.Policy.MaxDrainDuration != nil {
		d := *in.Policy.MaxDrainDuration
		out.Policy.MaxDrainDuration = &d
	}
	if in.Policy.Ceiling != nil {
		c := *in.Policy.Ceiling
		out.Policy.Ceiling = &c
	}
	out.Previous = nil
	for _, r := range in.Previous {
		out.Previous = append(out.Previous, *r.DeepCopy())
	}
	out.ManagedClusters = maps.Clone(in.ManagedClusters)
	out.GatewayReady = maps.Clone(in.GatewayReady)
	out.Checks = maps.Clone(in.Checks)
	out.ForceRemove = slices.Clone(in.ForceRemove)
	return out
}

// TestFuzzInputIsVaried guards the fuzzer's generator: over the seeds it must reach
// every removal reason, both phases of a staying drain, and unknown real decisions.
func TestFuzzInputIsVaried(t *testing.T) {
	seen := sets.New[string]()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		data := make([]byte, 128)
		for i := range data {
			data[i] = byte(rng.UintN(256))
		}
		in := fuzzInput(data)
		out := Decide(in)
		if !in.RealKnown {
			seen.Insert("real unknown")
		}
		for _, r := range out.Removed {
			seen.Insert(string(r.Reason))
		}
		for _, r := range out.Clusters {
			seen.Insert(string(r.Phase))
		}
		for _, s := range out.ForceRemoveSkipped {
			seen.Insert(string(s.Reason))
		}
		if len(out.Restored) > 0 {
			seen.Insert("restored")
		}
		for _, r := range out.Clusters {
			if r.Stalled {
				seen.Insert("stalled")
			}
		}
	}
	want := []string{"real unknown", "restored", string(RemovalGatePassed), string(RemovalForceRemoved),
		string(RemovalManagedClusterGone), string(RemovalMaxDrainDuration), string(RemovalHubMaxDrainDuration),
		"Active", "Draining", "Held", "Removed", "stalled",
		string(SkipInRealDecisions), string(SkipNotInProxy), string(SkipRealDecisionsUnknown)}
	for _, w := range want {
		if !seen.Has(w) {
			t.Errorf("the fuzz generator never reaches %q", w)
		}
	}
}
