// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
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
