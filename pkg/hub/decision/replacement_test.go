// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"slices"
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestReplacementMinReadyClusters: with spec.replacement, a draining cluster whose own
// gate passes leaves only while at least minReadyClusters Active clusters have the
// Gateway ready; a ready draining cluster does not count, nor does the deadline
// override it; the Active rows say whether they count. Without it, today's rule holds.
func TestReplacementMinReadyClusters(t *testing.T) {
	passed := draining("c9").started(ago(time.Hour)).checked(ago(30*time.Second), 2, pass)
	tests := map[string]struct {
		in         *builder
		wantLeft   bool
		wantWaits  string
		wantActive map[string]string
	}{
		"two of two ready": {
			in: input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c1", "c2").rows(passed).eval("c9", pass, "").
				policy(func(p *Policy) { p.MinReadyClusters = 2 }),
			wantLeft:   true,
			wantActive: map[string]string{"c1": msgReplacementReady, "c2": msgReplacementReady},
		},
		"one of two ready": {
			in: input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c1").rows(passed).eval("c9", pass, "").
				policy(func(p *Policy) { p.MinReadyClusters = 2 }),
			wantWaits:  "waiting for 2 Active clusters with the Gateway ready (1 now: c1)",
			wantActive: map[string]string{"c1": msgReplacementReady, "c2": msgReplacementNotReady},
		},
		"a ready draining cluster does not count": {
			in: input().real("c1").proxy("c1", "c8", "c9").ready("c8").
				rows(passed, draining("c8").started(ago(time.Minute))).eval("c9", pass, "").
				policy(func(p *Policy) { p.MinReadyClusters = 1 }),
			wantWaits: "waiting for 1 Active clusters with the Gateway ready (0 now)",
		},
		"past the deadline with Remove, still held": {
			in: input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c1").rows(passed).eval("c9", fail, "").
				policy(func(p *Policy) {
					p.MinReadyClusters = 2
					d := 10 * time.Minute
					p.MaxDrainDuration, p.OnMaxDrainDuration = &d, v1alpha1.DeadlineRemove
				}),
			wantWaits: "waiting for 2 Active clusters with the Gateway ready (1 now: c1)",
		},
		"without spec.replacement, one other ready cluster is enough": {
			in:         input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c1").rows(passed).eval("c9", pass, ""),
			wantLeft:   true,
			wantActive: map[string]string{"c1": "", "c2": ""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := Decide(tc.in.build())
			row := findRow(t, out.Clusters, "c9")
			if left := row.Phase == v1alpha1.ClusterRemoved; left != tc.wantLeft {
				t.Fatalf("c9 left: %v, want %v; row %+v", left, tc.wantLeft, row)
			}
			if tc.wantWaits != "" && !strings.Contains(row.Message, tc.wantWaits) {
				t.Errorf("c9's message %q lacks %q", row.Message, tc.wantWaits)
			}
			for cluster, msg := range tc.wantActive {
				if got := findRow(t, out.Clusters, cluster); got.Phase != v1alpha1.ClusterActive || got.Message != msg {
					t.Errorf("%s: phase %s, message %q, want Active, %q", cluster, got.Phase, got.Message, msg)
				}
			}
		})
	}
}

// replEval records a replacement check of an Active cluster made in this sync.
func (b *builder) replEval(cluster string, result v1alpha1.EvaluationResult, message string) *builder {
	if b.in.ReplacementChecks == nil {
		b.in.ReplacementChecks = map[string]Check{}
	}
	b.in.ReplacementChecks[cluster] = Check{Result: result, Value: valueOf(result), Query: queryOf(cluster), Message: message}
	return b
}

// TestReplacementCheck: with replacement.metricsQuery, an Active cluster counts toward
// minReadyClusters only with the Gateway ready and a recent passing check of its own;
// no data or an error never counts, whatever noDataPolicy says; the checks run only
// while a cluster drains, each an interval apart, and the Active rows say why each
// cluster counts or not.
func TestReplacementCheck(t *testing.T) {
	passed := draining("c9").started(ago(time.Hour)).checked(ago(30*time.Second), 2, pass)
	withCheck := func(p *Policy) { p.MinReadyClusters, p.ReplacementCheck = 1, true }
	moving := func() *builder {
		return input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c1", "c2").eval("c9", pass, "").policy(withCheck)
	}
	tests := map[string]struct {
		in         *builder
		wantDue    []string
		wantLeft   bool
		wantWaits  string
		wantActive map[string]string // message prefixes
		wantResult map[string]v1alpha1.EvaluationResult
		wantCounts []string // the Active clusters that count, before any removal (Replacements); nil: not asserted
	}{
		"not checked yet: both due, nobody counts": {
			in:         moving().rows(passed),
			wantDue:    []string{"c1", "c2"},
			wantWaits:  "waiting for 1 Active clusters with the Gateway ready and passing replacement.metricsQuery (0 now)",
			wantActive: map[string]string{"c1": msgReplacementUnchecked, "c2": msgReplacementUnchecked},
			wantCounts: []string{},
		},
		"a check passes in this sync: the draining cluster leaves": {
			in:         moving().rows(passed).replEval("c1", pass, "").replEval("c2", fail, "the query's value does not meet > 1 yet"),
			wantDue:    []string{"c1", "c2"},
			wantLeft:   true,
			wantCounts: []string{"c1"},
			// Nothing drains any more: the Active rows drop their checks.
			wantActive: map[string]string{"c1": msgReplacementIdle, "c2": msgReplacementIdle},
		},
		"the checks fail: it stays and the rows say why": {
			in:         moving().rows(passed).replEval("c1", fail, "the query's value does not meet > 1 yet").replEval("c2", v1alpha1.EvaluationError, "Prometheus cannot be reached"),
			wantDue:    []string{"c1", "c2"},
			wantWaits:  "(0 now)",
			wantActive: map[string]string{"c1": msgReplacementFailed + ": the query's value does not meet > 1 yet", "c2": msgReplacementFailed + ": Prometheus cannot be reached"},
			wantResult: map[string]v1alpha1.EvaluationResult{"c1": fail, "c2": v1alpha1.EvaluationError},
		},
		"no data never counts, even with noDataPolicy Pass": {
			in: moving().rows(passed).replEval("c1", v1alpha1.EvaluationNoData, "no data").replEval("c2", v1alpha1.EvaluationNoData, "no data").
				policy(func(p *Policy) { p.NoDataPolicy = v1alpha1.NoDataPass }),
			wantDue:    []string{"c1", "c2"},
			wantWaits:  "(0 now)",
			wantResult: map[string]v1alpha1.EvaluationResult{"c1": v1alpha1.EvaluationNoData},
		},
		"a recent pass counts and is not due again": {
			in:         moving().rows(passed, active("c1").checked(ago(20*time.Second), 0, pass)),
			wantDue:    []string{"c2"},
			wantLeft:   true,
			wantCounts: []string{"c1"},
		},
		"a pass older than two intervals does not count": {
			in:         moving().rows(passed, active("c1").checked(ago(70*time.Second), 0, pass)),
			wantDue:    []string{"c1", "c2"},
			wantWaits:  "(0 now)",
			wantActive: map[string]string{"c1": msgReplacementStale},
		},
		"a passing check without the Gateway ready does not count": {
			in: input().real("c1", "c2").proxy("c1", "c2", "c9").ready("c2").eval("c9", pass, "").policy(withCheck).
				rows(passed).replEval("c1", pass, ""),
			wantDue:    []string{"c1", "c2"},
			wantWaits:  "(0 now)",
			wantActive: map[string]string{"c1": msgReplacementNotReady, "c2": msgReplacementUnchecked},
			wantResult: map[string]v1alpha1.EvaluationResult{"c1": pass},
			wantCounts: []string{},
		},
		"a check of a cluster that was not due is ignored": {
			in:         moving().rows(passed, active("c1").checked(ago(70*time.Second), 0, fail)).replEval("c2", pass, "").replEval("c1", pass, ""),
			wantDue:    []string{"c1", "c2"},
			wantLeft:   true,
			wantActive: map[string]string{"c1": msgReplacementIdle},
		},
		"nothing drains: nothing is checked": {
			in:         input().real("c1", "c2").proxy("c1", "c2").ready("c1", "c2").policy(withCheck).replEval("c1", pass, ""),
			wantActive: map[string]string{"c1": msgReplacementIdle, "c2": msgReplacementIdle},
		},
		"the real decisions cannot be read: nothing is checked": {
			in:        input().realUnknown().proxy("c1", "c2", "c9").ready("c1", "c2").policy(withCheck).rows(passed).replEval("c1", pass, ""),
			wantWaits: msgRealUnknown,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.in.build()
			checkEqual(t, "DueReplacements", DueReplacements(in), tc.wantDue)
			if tc.wantCounts != nil {
				for cluster, standing := range Replacements(in) {
					if want := slices.Contains(tc.wantCounts, cluster); standing.Counts != want || standing.Why == "" {
						t.Errorf("Replacements: %s counts %v (%q), want %v", cluster, standing.Counts, standing.Why, want)
					}
				}
			}
			out := Decide(in)
			if tc.wantLeft || tc.wantWaits != "" {
				row := findRow(t, out.Clusters, "c9")
				if left := row.Phase == v1alpha1.ClusterRemoved; left != tc.wantLeft {
					t.Fatalf("c9 left: %v, want %v; rows %s", left, tc.wantLeft, asJSON(out.Clusters))
				}
				if tc.wantWaits != "" && !strings.Contains(row.Message, tc.wantWaits) {
					t.Errorf("c9's message %q lacks %q", row.Message, tc.wantWaits)
				}
			}
			for cluster, msg := range tc.wantActive {
				if got := findRow(t, out.Clusters, cluster); got.Phase != v1alpha1.ClusterActive || !strings.HasPrefix(got.Message, msg) {
					t.Errorf("%s: phase %s, message %q, want Active, %q", cluster, got.Phase, got.Message, msg)
				}
			}
			for cluster, result := range tc.wantResult {
				got := findRow(t, out.Clusters, cluster)
				if got.LastResult != result || got.LastEvaluationTime == nil || got.NextEvaluationTime == nil || got.ResolvedQuery != queryOf(cluster) {
					t.Errorf("%s's row does not hold its check (%s): %s", cluster, result, asJSON(got))
				}
			}
			// The output fed back at the same time, with no new checks, is the same.
			again := in
			again.Proxy, again.Previous, again.ReplacementChecks, again.Checks = out.Proxy, out.Clusters, nil, nil
			checkEqual(t, "the decision fed back", Decide(again).Clusters, out.Clusters)
		})
	}
}

// TestReplacementCheckRequeue: while an Active cluster's pass counts, the decision is
// requeued for its next check, which comes before the pass stops counting.
func TestReplacementCheckRequeue(t *testing.T) {
	in := input().real("c1").proxy("c1", "c9").ready("c1").policy(func(p *Policy) { p.MinReadyClusters, p.ReplacementCheck = 1, true }).
		rows(draining("c9").started(ago(10*time.Second)), active("c1").checked(ago(20*time.Second), 0, pass)).build()
	out := Decide(in)
	if want := after(10 * time.Second).Time; !out.RequeueAt.Equal(want) {
		t.Errorf("requeued at %v, want %v (c1's next check)", out.RequeueAt, want)
	}
	if r := findRow(t, out.Clusters, "c1"); r.NextEvaluationTime == nil || !r.NextEvaluationTime.Time.Equal(after(10*time.Second).Time) || r.Message != msgReplacementPassed {
		t.Errorf("c1's row: %s", asJSON(r))
	}
}
