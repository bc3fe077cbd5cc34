// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestHistoryFillsAndRollsOver drains a cluster through more checks than the history
// keeps, feeding each decision back as the next input: the history fills up to
// MaxCheckHistory, oldest first, then drops its oldest check for each new one.
func TestHistoryFillsAndRollsOver(t *testing.T) {
	const checks = v1alpha1.MaxCheckHistory + 3
	in := c2Leaves().
		policy(func(p *Policy) { p.ConsecutiveSuccesses = 100 }).
		rows(draining("c2").started(ago(time.Hour))).build()
	var want []v1alpha1.CheckRecord
	for i := range checks {
		in.Now = now.Add(time.Duration(i) * in.Policy.Interval)
		result := v1alpha1.EvaluationFail
		if i%2 == 0 {
			result = v1alpha1.EvaluationPass
		}
		in.Checks = map[string]Check{"c2": {Result: result, Value: valueOf(result), Query: queryOf("c2")}}
		out := Decide(in)
		row := findRow(t, out.Clusters, "c2")
		want = append(want, v1alpha1.CheckRecord{Time: metav1.NewTime(in.Now), Result: result, Value: valueOf(result)})
		if len(want) > v1alpha1.MaxCheckHistory {
			want = want[1:]
		}
		checkEqual(t, fmt.Sprintf("history after check %d", i+1), row.History, want)
		in.Proxy, in.Previous, in.Checks = out.Proxy, out.Clusters, nil
	}
	if got := len(want); got != v1alpha1.MaxCheckHistory {
		t.Fatalf("the test made %d checks and kept %d, want the history full", checks, got)
	}
}

// TestHistoryAcrossPhases: a Held row goes on recording, a Removed row keeps its
// history, and a cluster that is Active again has none.
func TestHistoryAcrossPhases(t *testing.T) {
	full := dueNow("c2", 2, pass)
	for range v1alpha1.MaxCheckHistory {
		full = full.recorded()
	}
	tests := map[string]struct {
		in        *builder
		wantPhase v1alpha1.ClusterPhase
		wantLen   int
	}{
		"a draining cluster back in R": {
			in:        input().real("c1", "c2").proxy("c1", "c2").ready("c1").rows(full),
			wantPhase: v1alpha1.ClusterActive,
		},
		"removed by its gate": {
			in:        c2Leaves().rows(full).eval("c2", pass, ""),
			wantPhase: v1alpha1.ClusterRemoved, wantLen: v1alpha1.MaxCheckHistory,
		},
		"held past its deadline": {
			in: c2Leaves().rows(full).eval("c2", fail, "").
				policy(func(p *Policy) { d := 4 * time.Minute; p.MaxDrainDuration = &d }),
			wantPhase: v1alpha1.ClusterHeld, wantLen: v1alpha1.MaxCheckHistory,
		},
		"an oversized history from an older writer is cut": {
			in:        c2Leaves().rows(full.recorded().recorded()),
			wantPhase: v1alpha1.ClusterDraining, wantLen: v1alpha1.MaxCheckHistory,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			row := findRow(t, Decide(tc.in.build()).Clusters, "c2")
			if row.Phase != tc.wantPhase || len(row.History) != tc.wantLen {
				t.Errorf("row %s with %d checks in its history, want %s with %d", row.Phase, len(row.History), tc.wantPhase, tc.wantLen)
			}
		})
	}
}

// TestCheckDetailIsAField: the last check's detail survives in lastCheckDetail, whatever
// the message says, and is cut to MaxCheckDetailLength.
func TestCheckDetailIsAField(t *testing.T) {
	huge := strings.Repeat("é", MaxCheckDetailLength) // two bytes each
	in := c2Leaves().rows(dueNow("c2", 2, pass)).
		eval("c2", errd, huge).build()
	row := findRow(t, Decide(in).Clusters, "c2")
	if len(row.LastCheckDetail) > MaxCheckDetailLength || !strings.HasSuffix(row.LastCheckDetail, "...") ||
		!strings.HasPrefix(row.LastCheckDetail, "éé") || !strings.Contains(row.Message, row.LastCheckDetail) {
		t.Errorf("detail of %d bytes %q..., message %d bytes: want it cut to at most %d bytes and in the message",
			len(row.LastCheckDetail), row.LastCheckDetail[:8], len(row.Message), MaxCheckDetailLength)
	}

	// A reworded message loses nothing: the next sync reads the field.
	row.Message = "some other wording"
	in.Previous = []v1alpha1.ClusterStatus{row}
	in.Checks = nil
	next := findRow(t, Decide(in).Clusters, "c2")
	if next.LastCheckDetail != row.LastCheckDetail || !strings.HasSuffix(next.Message, msgLastCheck+row.LastCheckDetail) {
		t.Errorf("after a reworded message: detail %q, message %q", next.LastCheckDetail, next.Message)
	}
}

// TestRemovalGateOrder: the gate lists what it waits for in the order of removalGate,
// and only the checks that fail.
func TestRemovalGateOrder(t *testing.T) {
	var names []string
	for _, c := range removalGate {
		names = append(names, c.name)
	}
	want := []string{"realDecisionsKnown", "pastDeadline", "pastCeiling", "notSuspended", "dnsWithdrawn", "minDrainDuration", "consecutiveSuccesses", "otherGatewayReady", "replacementsReady"}
	checkEqual(t, "gate", names, want)

	in := input().real("c1").proxy("c1", "c2").rows(draining("c2").started(ago(time.Minute))).
		policy(func(p *Policy) { p.Suspend = true }).build()
	row := findRow(t, Decide(in).Clusters, "c2")
	wantMsg := strings.Join([]string{msgSuspended, msgMinDrain, waitingForChecks(3), msgNoOtherReady}, msgSeparator)
	if row.Message != wantMsg {
		t.Errorf("message %q, want %q", row.Message, wantMsg)
	}
}

func findRow(t *testing.T, rows []v1alpha1.ClusterStatus, name string) v1alpha1.ClusterStatus {
	t.Helper()
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row for %s in %+v", name, rows)
	return v1alpha1.ClusterStatus{}
}
