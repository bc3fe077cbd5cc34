// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// ceiling sets the hub's ceiling.
func (b *builder) ceiling(d time.Duration, action v1alpha1.DeadlineAction) *builder {
	b.in.Policy.Ceiling = &Ceiling{MaxDrainDuration: d, Action: action}
	return b
}

// guardCases are the rules that keep a shared hub safe: the proxy comes back from its
// own deletion (rule 12), and the hub's ceiling bounds every drain (rule 13).
// TestDecide and the tests that reuse decideCases run them.
var guardCases = map[string]decideCase{
	"a draining cluster the proxy lost is listed again, with its drain state": {
		in: input().real("c1").ready("c1").
			rows(active("c1"), draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 2, pass)),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"),
				draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 2, pass).
					next(after(20*time.Second)).msg("waiting for 1 more passing check")),
			Restored:  []string{"c2"},
			RequeueAt: now.Add(20 * time.Second),
		},
	},
	"a lost cluster goes back to the least group, its rows' Held phase with it": {
		in: input().realGroup(3, "b", "c1").realGroup(5, "c", "c3").ready("c1").
			policy(func(p *Policy) { d := 10 * time.Minute; p.MaxDrainDuration = &d }).
			rows(active("c1"), active("c3"), held("c2").started(ago(time.Hour))),
		due: []string{"c2"},
		out: Output{
			Proxy: []Group{grp(3, "b", "c1", "c2"), grp(5, "c", "c3")},
			Clusters: rows(active("c1"), held("c2").started(ago(time.Hour)).next(ago(time.Hour)).
				msg("maximum drain duration exceeded; waiting for 3 more passing checks"), active("c3")),
			Restored:  []string{"c2"},
			RequeueAt: now.Add(30 * time.Second),
		},
	},
	"a Removed row is not listed again": {
		in: input().real("c1").proxy("c1").ready("c1").
			rows(active("c1"), removed("c2").started(ago(time.Hour)).removedAt(ago(time.Minute))),
		out: Output{
			Proxy:     []Group{grp(0, "", "c1")},
			Clusters:  rows(active("c1"), removed("c2").started(ago(time.Hour)).removedAt(ago(time.Minute))),
			RequeueAt: now.Add(RemovedRowRetention - time.Minute),
		},
	},
	"while the real decisions are unknown, a lost draining cluster is kept too": {
		in: input().realUnknown().proxy("c1").ready("c1").
			rows(active("c1"), draining("c2").started(ago(time.Hour))),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), draining("c2").started(ago(time.Hour)).next(ago(time.Hour)).
				msg("the real Placement's decisions cannot be read; waiting for 3 more passing checks")),
			Restored: []string{"c2"},
		},
	},
	"past the hub's ceiling with Remove, a cluster goes whatever its checks and suspend say": {
		in: c2Leaves().ceiling(time.Hour, v1alpha1.DeadlineRemove).
			policy(func(p *Policy) { p.Suspend = true; p.MinDrainDuration = 2 * time.Hour }).
			rows(active("c1"), draining("c2").started(ago(time.Hour)).failed()),
		out: Output{
			Proxy: []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1"), removed("c2").started(ago(time.Hour)).failed().
				removedAt(ago(0)).msg("removed: the hub's maximum drain duration exceeded")),
			Removed:   []Removal{{Cluster: "c2", Reason: RemovalHubMaxDrainDuration}},
			RequeueAt: now.Add(RemovedRowRetention),
		},
	},
	"the hub's ceiling never removes the last cluster with the Gateway ready": {
		in: input().real("c1").proxy("c1", "c2").ready("c2").ceiling(time.Hour, v1alpha1.DeadlineRemove).
			rows(active("c1"), draining("c2").started(ago(2*time.Hour)).failed()),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), held("c2").started(ago(2*time.Hour)).failed().next(after(20*time.Second)).
				msg("the hub's maximum drain duration exceeded; no other cluster has the Gateway ready")),
			RequeueAt: now.Add(20 * time.Second),
		},
	},
	"past the hub's ceiling with Hold, a cluster is Held and its gate still decides": {
		in: c2Leaves().ceiling(time.Hour, v1alpha1.DeadlineHold).
			policy(func(p *Policy) {
				d := 3 * time.Hour
				p.MaxDrainDuration = &d
				p.OnMaxDrainDuration = v1alpha1.DeadlineRemove
			}).
			rows(active("c1"), draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 1, pass)),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), held("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 1, pass).
				next(after(20*time.Second)).msg("the hub's maximum drain duration exceeded; waiting for 2 more passing checks")),
			RequeueAt: now.Add(20 * time.Second),
		},
	},
	"before the hub's ceiling, the decision waits for it": {
		in: c2Leaves().ceiling(time.Hour, v1alpha1.DeadlineRemove).
			policy(func(p *Policy) { p.Interval = time.Hour }).
			rows(active("c1"), draining("c2").started(ago(50*time.Minute)).failed()),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), draining("c2").started(ago(50*time.Minute)).failed().
				next(after(time.Hour-10*time.Second)).msg("waiting for 3 more passing checks")),
			RequeueAt: now.Add(10 * time.Minute),
		},
	},
}

func TestCeilingBinds(t *testing.T) {
	hour := time.Hour
	two := 2 * time.Hour
	tests := map[string]struct {
		policy Policy
		want   bool
	}{
		"no ceiling":                         {Policy{}, false},
		"a ceiling of zero is none":          {Policy{Ceiling: &Ceiling{}}, false},
		"a policy without a deadline":        {Policy{Ceiling: &Ceiling{MaxDrainDuration: hour}}, true},
		"a policy whose deadline is later":   {Policy{MaxDrainDuration: &two, Ceiling: &Ceiling{MaxDrainDuration: hour}}, true},
		"a policy whose deadline is sooner":  {Policy{MaxDrainDuration: &hour, Ceiling: &Ceiling{MaxDrainDuration: two}}, false},
		"a minimum drain past the ceiling":   {Policy{MaxDrainDuration: &hour, MinDrainDuration: 3 * hour, Ceiling: &Ceiling{MaxDrainDuration: two}}, true},
		"the same deadline, the hub removes": {Policy{MaxDrainDuration: &hour, Ceiling: &Ceiling{MaxDrainDuration: hour, Action: v1alpha1.DeadlineRemove}}, true},
		"the same deadline and action":       {Policy{MaxDrainDuration: &hour, Ceiling: &Ceiling{MaxDrainDuration: hour}}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.policy.CeilingBinds(); got != tc.want {
				t.Errorf("CeilingBinds() = %v, want %v", got, tc.want)
			}
		})
	}
}
