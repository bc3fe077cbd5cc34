// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestCheckStampKeepsInterval: a check is recorded at the time it was evaluated at,
// when that is known and not before the cluster was due nor after Now, so that checks
// keep their interval instead of slipping a second each time. Rule 3.
func TestCheckStampKeepsInterval(t *testing.T) {
	tests := map[string]struct {
		at       time.Time
		wantLast time.Time
	}{
		"evaluated at the due time": {at: now.Add(-400 * time.Millisecond), wantLast: now.Add(-time.Second)},
		"time unknown":              {wantLast: now},
		"evaluated before it was due": {
			at: now.Add(-1500 * time.Millisecond), wantLast: now,
		},
		"evaluated after Now": {at: now.Add(2 * time.Second), wantLast: now},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Due at now-1s (last check at now-2s, interval 1s); the decision runs at now.
			in := input().policy(func(p *Policy) { p.Interval = time.Second }).
				real("b").proxy("a", "b").ready("a", "b").
				rows(draining("a").started(ago(time.Minute)).checked(ago(2*time.Second), 1, v1alpha1.EvaluationPass)).
				eval("a", v1alpha1.EvaluationPass, "").build()
			ev := in.Checks["a"]
			ev.At = tc.at
			in.Checks["a"] = ev
			out := Decide(in)
			var got *v1alpha1.ClusterStatus
			for i := range out.Clusters {
				if out.Clusters[i].Name == "a" {
					got = &out.Clusters[i]
				}
			}
			if got == nil || got.LastEvaluationTime == nil || got.NextEvaluationTime == nil {
				t.Fatalf("no checked row for a: %+v", out.Clusters)
			}
			if !got.LastEvaluationTime.Time.Equal(tc.wantLast) {
				t.Errorf("lastEvaluationTime %s, want %s", got.LastEvaluationTime.Time, tc.wantLast)
			}
			if want := tc.wantLast.Add(time.Second); !got.NextEvaluationTime.Time.Equal(want) {
				t.Errorf("nextEvaluationTime %s, want %s", got.NextEvaluationTime.Time, want)
			}
			if got.ConsecutiveSuccesses != 2 {
				t.Errorf("successes %d, want 2", got.ConsecutiveSuccesses)
			}
		})
	}
}
