// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"time"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// recoveryCases are the rules for what goes wrong or is overridden: unknown real
// decisions (rule 7), the deadline (rule 8), a lost status (rule 9), force-remove, and
// rows of clusters that are nowhere. TestDecide and the tests that reuse decideCases
// run them too.
var recoveryCases = map[string]decideCase{
	"rule 7: unknown real decisions keep the proxy and the drain state": {
		in: input().realUnknown().real("c1", "c3").proxyGroup(0, "a", "c1").proxyGroup(1, "b", "c2").ready("c1").
			rows(active("c1"), dueNow("c2", 2, pass)).
			eval("c2", pass, ""),
		out: Output{
			Proxy: []Group{grp(0, "a", "c1"), grp(1, "b", "c2")},
			Clusters: rows(active("c1"),
				dueNow("c2", 2, pass).next(ago(0)).
					msg("the real Placement's decisions cannot be read; waiting for 1 more passing check")),
		},
	},
	"rule 7: with unknown real decisions a cluster without a draining row is Active": {
		in: input().realUnknown().proxy("c1", "c2").proxyGroup(1, "empty").rows(removed("c2").removedAt(ago(time.Minute))),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c2"), grp(1, "empty")},
			Clusters: rows(active("c1"), active("c2")),
		},
	},
	"rule 7: with unknown real decisions a gone draining cluster is still removed": {
		in: input().realUnknown().proxy("c1", "c2", "c3").goneClusters("c2", "c3").
			rows(active("c1"), draining("c2").started(ago(time.Minute)), active("c3")),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c3")},
			Clusters: rows(active("c1"),
				removed("c2").started(ago(time.Minute)).removedAt(ago(0)).
					msg("removed: its ManagedCluster no longer exists"),
				active("c3")),
			Removed:   []Removal{{Cluster: "c2", Reason: RemovalManagedClusterGone}},
			RequeueAt: now.Add(RemovedRowRetention),
		},
	},
	"rule 7: with unknown real decisions a force-remove is deferred": {
		in: input().realUnknown().proxy("c1", "c2").ready("c1").force("c2", "c9").
			rows(active("c1"), draining("c2").started(ago(5*time.Minute)).failed()),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"),
				draining("c2").started(ago(5*time.Minute)).failed().next(after(20*time.Second)).
					msg("the real Placement's decisions cannot be read; waiting for 3 more passing checks")),
			ForceRemoveSkipped: []ForceRemoveSkip{
				{Cluster: "c2", Reason: SkipRealDecisionsUnknown},
				{Cluster: "c9", Reason: SkipNotInProxy},
			},
		},
	},
	"rule 8: Hold keeps a cluster past its deadline as Held": {
		in: c2Leaves().policy(deadline(time.Hour, v1alpha1.DeadlineHold)).
			rows(draining("c2").started(ago(2 * time.Hour)).failed()),
		out: c2Kept(20*time.Second,
			held("c2").started(ago(2*time.Hour)).failed().next(after(20*time.Second)).
				msg("maximum drain duration exceeded; waiting for 3 more passing checks")),
	},
	"rule 8: a Held cluster whose gate passes is removed": {
		in: c2Leaves().policy(deadline(time.Hour, v1alpha1.DeadlineHold)).
			rows(held("c2").started(ago(2*time.Hour)).checked(ago(30*time.Second), 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Removed(RemovalGatePassed,
			removed("c2").started(ago(2*time.Hour)).checked(ago(0), 3, pass).recorded().removedByGate()),
	},
	"rule 8: Remove removes a cluster past its deadline": {
		in: c2Leaves().policy(deadline(time.Hour, v1alpha1.DeadlineRemove)).
			rows(draining("c2").started(ago(time.Hour)).failed()),
		out: c2Removed(RemovalMaxDrainDuration,
			removed("c2").started(ago(time.Hour)).failed().removedAt(ago(0)).
				msg("removed: maximum drain duration exceeded")),
	},
	"rule 8: Remove waits while removals are suspended": {
		in: c2Leaves().policy(deadline(time.Hour, v1alpha1.DeadlineRemove)).
			policy(suspend).
			rows(draining("c2").started(ago(time.Hour)).failed()),
		out: c2Kept(20*time.Second,
			held("c2").started(ago(time.Hour)).failed().next(after(20*time.Second)).
				msg("maximum drain duration exceeded; removals suspended")),
	},
	"rule 8: Remove never takes the last cluster with the Gateway ready": {
		in: input().real("c1").proxy("c1", "c2").ready("c2").policy(deadline(time.Hour, v1alpha1.DeadlineRemove)).
			rows(draining("c2").started(ago(time.Hour)).failed()),
		out: c2Kept(20*time.Second,
			held("c2").started(ago(time.Hour)).failed().next(after(20*time.Second)).
				msg("maximum drain duration exceeded; no other cluster has the Gateway ready")),
	},
	"rule 8: the deadline is not reached yet": {
		in: c2Leaves().policy(deadline(time.Hour, v1alpha1.DeadlineRemove)).
			rows(draining("c2").started(ago(time.Hour - 5*time.Second)).failed()),
		out: c2Kept(5*time.Second,
			draining("c2").started(ago(time.Hour-5*time.Second)).failed().
				next(after(20*time.Second)).msg("waiting for 3 more passing checks")),
	},
	"rule 8: the deadline never comes before the minimum drain duration": {
		in: c2Leaves().policy(deadline(time.Minute, v1alpha1.DeadlineRemove)).
			rows(draining("c2").started(ago(90 * time.Second)).failed()),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(90*time.Second)).failed().next(after(20*time.Second)).
				msg("minimum drain duration not reached; waiting for 3 more passing checks")),
	},
	"rule 9: after a restart without status a draining cluster starts over": {
		in:  c2Leaves(),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			drainStarts("c2")),
	},
	"rule 9: a draining row without a check does not carry successes": {
		in:  c2Leaves().rows(draining("c2").started(ago(5*time.Minute)).checked(nil, 3, pass)),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			draining("c2").started(ago(5*time.Minute)).next(ago(5*time.Minute)).
				msg("waiting for 3 more passing checks")),
	},
	"rule 9: a Removed row of a cluster the proxy still lists starts the drain over": {
		in:  c2Leaves().rows(removed("c2").started(ago(time.Hour)).removedAt(ago(time.Minute))),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			drainStarts("c2")),
	},
	"rule 9: a drain start in the future is kept (later, never earlier)": {
		in: c2Leaves().rows(draining("c2").started(after(5 * time.Second))),
		out: c2Kept(5*time.Second,
			draining("c2").started(after(5*time.Second)).next(after(5*time.Second)).
				msg("minimum drain duration not reached; waiting for 3 more passing checks")),
	},
	"force-remove: a draining cluster goes whatever its gate says, even suspended": {
		in: input().real("c1").proxy("c1", "c2").policy(suspend).force("c2").
			rows(active("c1"), draining("c2").started(ago(time.Minute)).failed()),
		out: c2Removed(RemovalForceRemoved,
			removed("c2").started(ago(time.Minute)).failed().removedAt(ago(0)).
				msg("removed: named in the force-remove annotation")),
	},
	"force-remove: a cluster of R stays and the name is reported": {
		in: input().real("c1").proxy("c1").force("c1", " ", "").rows(active("c1")),
		out: Output{
			Proxy:              []Group{grp(0, "", "c1")},
			Clusters:           rows(active("c1")),
			ForceRemoveSkipped: []ForceRemoveSkip{{Cluster: " ", Reason: SkipNotInProxy}, {Cluster: "c1", Reason: SkipInRealDecisions}},
		},
	},
	"force-remove: a cluster the proxy does not list is reported": {
		in: input().real("c1").proxy("c1").force("c7", "c7").rows(active("c1")),
		out: Output{
			Proxy:              []Group{grp(0, "", "c1")},
			Clusters:           rows(active("c1")),
			ForceRemoveSkipped: []ForceRemoveSkip{{Cluster: "c7", Reason: SkipNotInProxy}},
		},
	},
	"force-remove: a cluster whose ManagedCluster is gone is removed as gone": {
		in: input().real("c1").proxy("c1", "c2").force("c2").goneClusters("c2"),
		out: c2Removed(RemovalManagedClusterGone,
			removed("c2").started(ago(0)).removedAt(ago(0)).msg("removed: its ManagedCluster no longer exists")),
	},
	"force-remove: the gate counts the ready clusters left after forced removals": {
		in: input().real("c1").proxy("c1", "c2", "c3").ready("c2", "c3").force("c2").
			rows(dueNow("c3", 2, pass)).
			eval("c3", pass, ""),
		due: []string{"c3"},
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c3")},
			Clusters: rows(active("c1"),
				removed("c2").started(ago(0)).removedAt(ago(0)).msg("removed: named in the force-remove annotation"),
				checkedNow("c3", 3, pass).msg("no other cluster has the Gateway ready")),
			Removed:   []Removal{{Cluster: "c2", Reason: RemovalForceRemoved}},
			RequeueAt: now.Add(30 * time.Second),
		},
	},
	"rows: a Removed row is kept for a while": {
		in: input().real("c1").proxy("c1").
			rows(active("c1"), removed("c3").started(ago(time.Hour)).removedAt(ago(4*time.Minute)).msg("removed: the removal gate passed")),
		out: Output{
			Proxy: []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1"),
				removed("c3").started(ago(time.Hour)).removedAt(ago(4*time.Minute)).msg("removed: the removal gate passed")),
			RequeueAt: now.Add(RemovedRowRetention - 4*time.Minute),
		},
	},
	"rows: a Removed row is dropped after RemovedRowRetention": {
		in: input().real("c1").proxy("c1").
			rows(active("c1"), removed("c3").removedAt(ago(RemovedRowRetention)), removed("c4")),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1")),
		},
	},
	"rows: a removed cluster back in R is Active": {
		in: input().real("c1", "c3").proxy("c1").
			rows(active("c1"), removed("c3").removedAt(ago(time.Minute))),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c3")},
			Clusters: rows(active("c1"), active("c3")),
		},
	},
	"rows: an Active row of a cluster that is nowhere is dropped": {
		in: input().real("c1").proxy("c1").rows(active("c1"), active("c6")),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1")),
		},
	},
}
