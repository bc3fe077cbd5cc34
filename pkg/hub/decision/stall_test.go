// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// stallPolicy is the policy of the stall tests: checks every 30s, a TTL of 60s and a
// window of 1m, so a drain is stalled from the first check more than 4m (the larger of
// 60s + 60s and 4 × 1m) after DNS let go of it: the 9th check after the withdrawal.
func stallPolicy(p *Policy) {
	p.Expectation = &v1alpha1.Comparison{Operator: "<=", Threshold: 5}
	p.ShareWindow = time.Minute
}

// stallStep is what a drain's row says after one check.
type stallStep struct {
	row     v1alpha1.ClusterStatus
	removed *Removal
}

// drainStalling drains c2 (its drain started an hour ago, so its minimum drain is long
// over) through a check per value, interval apart, feeding each decision back as the
// next input, with the policy of stallPolicy and then edit. DNS lets go of c2 at the
// first check unless edit says otherwise. It returns c2's row after each check, and
// stops at its removal. Between two checks a sync changes nothing of the row.
func drainStalling(t *testing.T, values []string, edit func(*builder) *builder) []stallStep {
	t.Helper()
	b := c2Leaves().dns(time.Minute, "c2").policy(stallPolicy).
		rows(active("c1"), draining("c2").started(ago(time.Hour)))
	if edit != nil {
		b = edit(b)
	}
	in := b.build()
	var steps []stallStep
	for i, v := range values {
		in.Now = now.Add(time.Duration(i) * in.Policy.Interval)
		in.Checks = map[string]Check{"c2": checkOf("c2", *in.Policy.Expectation, v)}
		out := Decide(in)
		step := stallStep{row: findRow(t, out.Clusters, "c2")}
		for _, r := range out.Removed {
			if r.Cluster == "c2" {
				step.removed = &r
			}
		}
		steps = append(steps, step)
		if step.removed != nil {
			return steps
		}
		next := nextInput(t, in, out)
		next.Now = in.Now.Add(in.Policy.Interval / 2)
		again := findRow(t, Decide(next).Clusters, "c2")
		checkEqual(t, "the row between two checks", asJSON(again), asJSON(step.row))
		in = nextInput(t, in, out)
	}
	return steps
}

// repeat is n copies of v.
func repeat(v string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// falling is n values from first, each step lower.
func falling(first, step float64, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.FormatFloat(first-step*float64(i), 'g', -1, 64)
	}
	return out
}

func TestStalledDrain(t *testing.T) {
	for name, tc := range map[string]struct {
		values []string
		edit   func(*builder) *builder
		// stalledFrom is the index of the first check at which the row is stalled; -1
		// when it never is. It stays so until the check of index stalledUntil, when
		// that is set.
		stalledFrom, stalledUntil int
	}{
		"a flat share past the threshold is stalled": {
			values: repeat("40", 14), stalledFrom: 9,
		},
		"a flat share before the threshold is not stalled yet": {
			values: repeat("40", 9), stalledFrom: -1,
		},
		"a share that rises after the withdrawal is stalled": {
			values: append(repeat("20", 5), repeat("35", 8)...), stalledFrom: 9,
		},
		"a share that halved is not stalled": {
			values: append(repeat("40", 5), repeat("20", 8)...), stalledFrom: -1,
		},
		"a share that fell to a tenth is not stalled": {
			values: falling(40, 4, 10), stalledFrom: -1,
		},
		"a share still above half at the threshold, halved later, is stalled, then not": {
			values: append(repeat("40", 10), "19", "19"), stalledFrom: 9, stalledUntil: 10,
		},
		"a cluster DNS still publishes is not stalled": {
			values: repeat("40", 14), stalledFrom: -1,
			edit: func(b *builder) *builder { return b.dns(time.Minute) },
		},
		"without DNS followed, nothing is stalled": {
			values: repeat("40", 14), stalledFrom: -1,
			edit: func(b *builder) *builder { b.in.DNS = nil; return b },
		},
		"a longer TTL moves the threshold": {
			// 10m + 60s: the 23rd check after the withdrawal is the first past it.
			values: repeat("40", 24), stalledFrom: 23,
			edit: func(b *builder) *builder { return b.dns(10*time.Minute, "c2") },
		},
		"with a metricsQuery, the threshold counts intervals": {
			// No window: 4 × 30s = 2m, less than 60s + 60s = 2m: the 5th check.
			values: repeat("40", 8), stalledFrom: 5,
			edit: func(b *builder) *builder { b.in.Policy.ShareWindow = 0; return b },
		},
		"an expectation that the value rises says nothing of a stall": {
			values: repeat("40", 14), stalledFrom: -1,
			edit: func(b *builder) *builder {
				return b.policy(func(p *Policy) { p.Expectation = &v1alpha1.Comparison{Operator: ">=", Threshold: 50} })
			},
		},
		"a share already passing is not stalled": {
			values: repeat("4", 14), stalledFrom: -1,
			edit: func(b *builder) *builder {
				// Never removed: no other cluster has the Gateway ready.
				return b.ready()
			},
		},
		"no data since the withdrawal: nothing to compare, not stalled": {
			values: repeat("", 14), stalledFrom: -1,
		},
		"a reference of zero is not stalled": {
			values: append([]string{"0"}, repeat("40", 13)...), stalledFrom: -1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			steps := drainStalling(t, tc.values, tc.edit)
			if len(steps) != len(tc.values) {
				t.Fatalf("c2 left after %d checks: %+v", len(steps), steps[len(steps)-1].removed)
			}
			for i, s := range steps {
				want := tc.stalledFrom >= 0 && i >= tc.stalledFrom && (tc.stalledUntil == 0 || i < tc.stalledUntil)
				if s.row.Stalled != want {
					t.Errorf("after check %d (%s): stalled %v, want %v", i, tc.values[i], s.row.Stalled, want)
				}
				if strings.Contains(s.row.Message, msgStalled) != want {
					t.Errorf("after check %d: the message says stalled %v, want %v: %q", i, !want, want, s.row.Message)
				}
				if s.row.Stalled && s.row.EstimatedRemovalTime != nil {
					t.Errorf("after check %d: a stalled row has an estimate: %s", i, s.row.EstimatedRemovalTime)
				}
			}
		})
	}
}

// TestStalledMessage: the row of a stalled drain says what its removal waits for, that
// it is stalled, why and what to do, in that order, and holds no value or time.
func TestStalledMessage(t *testing.T) {
	steps := drainStalling(t, repeat("40", 10), nil)
	row := steps[9].row
	want := "waiting for 3 more passing checks; " + msgStalled
	if row.Message != want {
		t.Errorf("message %q, want %q", row.Message, want)
	}
	for _, w := range []string{"HTTP/2, gRPC, pooled keep-alive", "resolvers that ignore the TTL", "keepAliveMaxTime",
		"ClientTrafficPolicy", "docs/troubleshooting.md#stalled-drains", "maxDrainDuration", "force-remove"} {
		if !strings.Contains(row.Message, w) {
			t.Errorf("the message lacks %q", w)
		}
	}
	if strings.Contains(row.Message, "40") || strings.Contains(row.Message, "2030") {
		t.Errorf("the message holds a value or a time: %q", row.Message)
	}
}

// TestStalledNeverRemoves: a stalled drain stays, however long, until something else
// than the stall removes it: its deadline with onMaxDrainDuration Remove, or a
// force-remove.
func TestStalledNeverRemoves(t *testing.T) {
	steps := drainStalling(t, repeat("40", 60), nil)
	if len(steps) != 60 || !steps[59].row.Stalled || steps[59].row.Phase != v1alpha1.ClusterDraining {
		t.Fatalf("a stalled drain ended after %d checks: %+v", len(steps), steps[len(steps)-1])
	}

	// Held past its deadline, still stalled, and said so.
	steps = drainStalling(t, repeat("40", 12), func(b *builder) *builder {
		return b.policy(func(p *Policy) { p.MaxDrainDuration = duration(30 * time.Minute) })
	})
	if last := steps[11].row; last.Phase != v1alpha1.ClusterHeld || !last.Stalled ||
		!strings.HasPrefix(last.Message, msgPastDeadline+msgSeparator) {
		t.Errorf("held and stalled: %+v", last)
	}

	// The deadline's Remove removes it, for its own reason.
	steps = drainStalling(t, repeat("40", 12), func(b *builder) *builder {
		return b.policy(func(p *Policy) {
			p.MaxDrainDuration = duration(time.Hour + 5*time.Minute)
			p.OnMaxDrainDuration = v1alpha1.DeadlineRemove
		})
	})
	if last := steps[len(steps)-1]; last.removed == nil || last.removed.Reason != RemovalMaxDrainDuration || len(steps) != 11 {
		t.Errorf("at its deadline: %d checks, %+v", len(steps), last)
	}

	// A force-remove removes it.
	in := c2Leaves().dns(time.Minute, "c2").policy(stallPolicy).
		rows(active("c1"), stalledRow()).force("c2").build()
	out := Decide(in)
	checkEqual(t, "removed", out.Removed, []Removal{{Cluster: "c2", Reason: RemovalForceRemoved}})
}

// stalledRow is c2 stalled: out of DNS for 10m, its share 40% then and now.
func stalledRow() row {
	r := draining("c2").started(ago(time.Hour)).left(ago(10 * time.Minute)).failed()
	r.LastValue = "40"
	r.History = []v1alpha1.CheckRecord{{Time: *ago(10 * time.Second), Result: fail, Value: "40"}}
	r.DNSWithdrawalCheck = &v1alpha1.CheckRecord{Time: *ago(10 * time.Minute), Result: fail, Value: "40"}
	return r
}

// TestStalledReference: the reference is the first check with a value at or after the
// withdrawal, kept in the row after the history dropped it; one left in a row from
// before the withdrawal is not believed.
func TestStalledReference(t *testing.T) {
	steps := drainStalling(t, append([]string{"", "40"}, repeat("35", 20)...), nil)
	last := steps[len(steps)-1].row
	want := &v1alpha1.CheckRecord{Time: metav1.NewTime(now.Add(30 * time.Second)), Result: fail, Value: "40"}
	checkEqual(t, "the reference", asJSON(last.DNSWithdrawalCheck), asJSON(want))
	if len(last.History) != v1alpha1.MaxCheckHistory || !last.Stalled {
		t.Errorf("after 22 checks: %d in the history, stalled %v", len(last.History), last.Stalled)
	}

	// A reference from before the withdrawal is dropped, and the history gives the
	// right one again.
	r := stalledRow()
	r.DNSWithdrawalCheck = &v1alpha1.CheckRecord{Time: *ago(11 * time.Minute), Result: fail, Value: "90"}
	out := Decide(c2Leaves().dns(time.Minute, "c2").policy(stallPolicy).
		rows(active("c1"), r).build())
	got := findRow(t, out.Clusters, "c2")
	checkEqual(t, "the reference found again", asJSON(got.DNSWithdrawalCheck), asJSON(&r.History[0]))
	if got.Stalled {
		t.Error("stalled against a check made 10s ago")
	}

	// Without DNS followed, the reference goes with the withdrawal time.
	out = Decide(c2Leaves().policy(stallPolicy).rows(active("c1"), stalledRow()).build())
	if got := findRow(t, out.Clusters, "c2"); got.DNSWithdrawalCheck != nil || got.Stalled {
		t.Errorf("without DNS: %+v", got)
	}
}

// TestStalledHasNoEstimate: a share that falls slowly has an estimate until the drain
// is stalled, and none after.
func TestStalledHasNoEstimate(t *testing.T) {
	steps := drainStalling(t, falling(40, 0.5, 12), nil)
	if steps[8].row.Stalled || steps[8].row.EstimatedRemovalTime == nil {
		t.Errorf("before the threshold: stalled %v, estimate %v", steps[8].row.Stalled, steps[8].row.EstimatedRemovalTime)
	}
	for _, s := range steps[9:] {
		if !s.row.Stalled || s.row.EstimatedRemovalTime != nil {
			t.Errorf("past the threshold: stalled %v, estimate %v", s.row.Stalled, s.row.EstimatedRemovalTime)
		}
	}
}

func TestStallAfter(t *testing.T) {
	for _, tc := range []struct {
		ttl, window, interval, want time.Duration
	}{
		{ttl: time.Minute, window: 5 * time.Minute, interval: 30 * time.Second, want: 20 * time.Minute},
		{ttl: time.Hour, window: 5 * time.Minute, interval: 30 * time.Second, want: time.Hour + time.Minute},
		{ttl: time.Minute, interval: 30 * time.Second, want: 2 * time.Minute},
		{ttl: time.Minute, interval: 5 * time.Minute, want: 20 * time.Minute},
	} {
		p := Policy{DNSTTL: tc.ttl, ShareWindow: tc.window, Interval: tc.interval}
		if got := p.stallAfter(); got != tc.want {
			t.Errorf("TTL %s, window %s, interval %s: %s, want %s", tc.ttl, tc.window, tc.interval, got, tc.want)
		}
	}
}
