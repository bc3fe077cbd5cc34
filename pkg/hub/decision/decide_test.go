// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

const (
	pass   = v1alpha1.EvaluationPass
	fail   = v1alpha1.EvaluationFail
	noData = v1alpha1.EvaluationNoData
	errd   = v1alpha1.EvaluationError
)

func suspend(p *Policy) { p.Suspend = true }

func deadline(d time.Duration, action v1alpha1.DeadlineAction) func(*Policy) {
	return func(p *Policy) {
		p.MaxDrainDuration = &d
		p.OnMaxDrainDuration = action
	}
}

// decideCase is one case of the rules: an input, the clusters due, the decision.
type decideCase struct {
	in  *builder
	due []string
	out Output
}

// decideCases are rules 1 to 6 of the proxy decision, one or more cases each (rules 7
// on are in recoveryCases). TestDecide checks their exact output; the other tests
// reuse them as inputs.
var decideCases = map[string]decideCase{
	"rule 1: a cluster added to R is in the proxy at once": {
		in: input().real("c1", "c2").proxy("c1").rows(active("c1")),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), active("c2")),
		},
	},
	"rule 1: the real decision groups are mirrored": {
		in: input().realGroup(1, "west", "c3").realGroup(0, "east", "c2", "c1"),
		out: Output{
			Proxy:    []Group{grp(0, "east", "c1", "c2"), grp(1, "west", "c3")},
			Clusters: rows(active("c1"), active("c2"), active("c3")),
		},
	},
	"rule 1: an empty real decision group is mirrored": {
		in: input().realGroup(0, "canary").realGroup(1, "rest", "c1"),
		out: Output{
			Proxy:    []Group{grp(0, "canary"), grp(1, "rest", "c1")},
			Clusters: rows(active("c1")),
		},
	},
	"rule 1: no real decisions and no proxy decisions": {
		in:  input(),
		out: Output{},
	},
	"rule 2: a cluster that leaves R starts draining now": {
		in:  input().real("c1").proxy("c1", "c2").rows(active("c1"), active("c2")).ready("c1"),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			drainStarts("c2")),
	},
	"rule 2: a draining cluster keeps its proxy group": {
		in: input().realGroup(0, "east", "c1").proxyGroup(0, "east", "c1").proxyGroup(1, "west", "c2").
			rows(draining("c2").started(ago(time.Minute)).checked(ago(10*time.Second), 1, pass)).
			ready("c1"),
		out: Output{
			Proxy: []Group{grp(0, "east", "c1"), grp(1, "west", "c2")},
			Clusters: rows(active("c1"),
				draining("c2").started(ago(time.Minute)).checked(ago(10*time.Second), 1, pass).
					next(after(20*time.Second)).
					msg("minimum drain duration not reached; waiting for 2 more passing checks")),
			RequeueAt: now.Add(20 * time.Second),
		},
	},
	"rule 2: a draining cluster in a group index that R uses takes R's group name": {
		in:  input().realGroup(0, "new", "c1").proxyGroup(0, "old", "c1", "c2").ready("c1"),
		due: []string{"c2"},
		out: Output{
			Proxy: []Group{grp(0, "new", "c1", "c2")},
			Clusters: rows(active("c1"),
				drainStarts("c2")),
			RequeueAt: now.Add(30 * time.Second),
		},
	},
	"rule 2: an empty proxy group not in R is dropped": {
		in: input().realGroup(0, "", "c1").proxyGroup(0, "", "c1").proxyGroup(3, "old"),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1")),
		},
	},
	"rule 3: the gate passes and the cluster is removed": {
		in: c2Leaves().
			rows(active("c1"), dueNow("c2", 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Removed(RemovalGatePassed,
			removed("c2").started(ago(5*time.Minute)).checked(ago(0), 3, pass).recorded().removedByGate()),
	},
	"rule 3: suspend keeps a cluster whose gate would pass": {
		in: c2Leaves().policy(suspend).
			rows(active("c1"), dueNow("c2", 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 3, pass).msg("removals suspended")),
	},
	"rule 3: the minimum drain duration is not reached": {
		in: c2Leaves().
			rows(active("c1"), draining("c2").started(ago(time.Minute)).checked(ago(30*time.Second), 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			draining("c2").started(ago(time.Minute)).checked(ago(0), 3, pass).recorded().next(after(30*time.Second)).
				msg("minimum drain duration not reached")),
	},
	"rule 3: a zero minimum drain duration lets the gate pass at once": {
		in: c2Leaves().
			policy(func(p *Policy) { p.MinDrainDuration = 0; p.ConsecutiveSuccesses = 1 }).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Removed(RemovalGatePassed,
			removed("c2").started(ago(0)).checked(ago(0), 1, pass).recorded().removedByGate()),
	},
	"rule 3: more passing checks are needed": {
		in: c2Leaves().rows(dueNow("c2", 0, fail)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 1, pass).msg("waiting for 2 more passing checks")),
	},
	"rule 3: one more passing check is needed": {
		in: c2Leaves().rows(draining("c2").started(ago(5*time.Minute)).checked(ago(40*time.Second), 1, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 2, pass).msg("waiting for 1 more passing check")),
	},
	"rule 3: a check of a cluster that is not due is not counted": {
		in: c2Leaves().rows(draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 2, pass)).
			eval("c2", pass, ""),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 2, pass).
				next(after(20*time.Second)).msg("waiting for 1 more passing check")),
	},
	"rule 3: a cluster is kept when no other cluster has the Gateway ready": {
		in: input().real("c1").proxy("c1", "c2").ready("c2").
			rows(dueNow("c2", 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 3, pass).msg("no other cluster has the Gateway ready")),
	},
	"rule 3: when several pass, the last ready cluster stays (name order)": {
		in: input().real("c1").proxy("c1", "c2", "c3").ready("c2", "c3").
			rows(dueNow("c2", 2, pass), dueNow("c3", 2, pass)).
			eval("c2", pass, "").eval("c3", pass, ""),
		due: []string{"c2", "c3"},
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c3")},
			Clusters: rows(active("c1"),
				removed("c2").started(ago(5*time.Minute)).checked(ago(0), 3, pass).recorded().removedByGate(),
				checkedNow("c3", 3, pass).msg("no other cluster has the Gateway ready")),
			Removed:   []Removal{{Cluster: "c2", Reason: RemovalGatePassed}},
			RequeueAt: now.Add(30 * time.Second),
		},
	},
	"rule 3: several pass and all go when a ready cluster stays": {
		in: input().real("c1").proxy("c1", "c2", "c3").ready("c1", "c2", "c3").
			rows(dueNow("c2", 2, pass), dueNow("c3", 2, pass)).
			eval("c2", pass, "").eval("c3", pass, ""),
		due: []string{"c2", "c3"},
		out: Output{
			Proxy: []Group{grp(0, "", "c1")},
			Clusters: rows(active("c1"),
				removed("c2").started(ago(5*time.Minute)).checked(ago(0), 3, pass).recorded().removedByGate(),
				removed("c3").started(ago(5*time.Minute)).checked(ago(0), 3, pass).recorded().removedByGate()),
			Removed: []Removal{
				{Cluster: "c2", Reason: RemovalGatePassed},
				{Cluster: "c3", Reason: RemovalGatePassed},
			},
			RequeueAt: now.Add(RemovedRowRetention),
		},
	},
	"rule 3: no data counts as a pass with noDataPolicy Pass": {
		in: c2Leaves().
			policy(func(p *Policy) { p.NoDataPolicy = v1alpha1.NoDataPass }).
			rows(dueNow("c2", 2, noData)).
			eval("c2", noData, "the query returned no data"),
		due: []string{"c2"},
		out: c2Removed(RemovalGatePassed,
			removed("c2").started(ago(5*time.Minute)).checked(ago(0), 3, noData).recorded().removedByGate()),
	},
	"rule 4: an error starts the run over and keeps the cluster": {
		in: c2Leaves().rows(dueNow("c2", 2, pass)).
			eval("c2", errd, "query failed: connection refused"),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 0, errd).
				msg("waiting for 3 more passing checks; last check: query failed: connection refused").detail("query failed: connection refused")),
	},
	"rule 4: no data with noDataPolicy Hold starts the run over": {
		in: c2Leaves().rows(dueNow("c2", 2, pass)).
			eval("c2", noData, "the query returned no data"),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 0, noData).
				msg("waiting for 3 more passing checks; last check: the query returned no data").detail("the query returned no data")),
	},
	"rule 4: a failed check starts the run over": {
		in: c2Leaves().rows(dueNow("c2", 2, pass)).
			eval("c2", fail, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 0, fail).msg("waiting for 3 more passing checks")),
	},
	"rule 4: the last check's message stays until the next check": {
		in: c2Leaves().rows(draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 0, errd).
			msg("waiting for 3 more passing checks; last check: query failed: timeout").detail("query failed: timeout")),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 0, errd).
				next(after(20*time.Second)).
				msg("waiting for 3 more passing checks; last check: query failed: timeout").detail("query failed: timeout")),
	},
	"rule 4: a result of unknown kind counts as an error": {
		in: c2Leaves().rows(dueNow("c2", 2, pass)).
			eval("c2", "Maybe", "odd"),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 0, errd).msg("waiting for 3 more passing checks; last check: odd").detail("odd")),
	},
	"rule 5: a draining cluster back in R is Active and its drain state is dropped": {
		in: input().real("c1", "c2").proxy("c1", "c2").ready("c1").
			rows(active("c1"), dueNow("c2", 2, pass).
				msg("waiting for 1 more passing check")).
			eval("c2", pass, ""),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), active("c2")),
		},
	},
	"rule 6: a draining cluster whose ManagedCluster is gone is removed at once, even suspended": {
		in: input().real("c1").proxy("c1", "c2").goneClusters("c2").policy(suspend).
			rows(active("c1"), draining("c2").started(ago(time.Minute))),
		out: c2Removed(RemovalManagedClusterGone,
			removed("c2").started(ago(time.Minute)).removedAt(ago(0)).
				msg("removed: its ManagedCluster no longer exists")),
	},
	"rule 6: a cluster of R whose ManagedCluster is gone stays": {
		in: input().real("c1", "c2").proxy("c1", "c2").goneClusters("c2"),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), active("c2")),
		},
	},
	"rule 6: nothing is removed as gone when the ManagedClusters are not known": {
		in:  input().real("c1").proxy("c1", "c2").clustersUnknown().ready("c1"),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			drainStarts("c2")),
	},
	"rule 6: a cluster whose ManagedCluster is gone does not count as ready": {
		in: input().real("c1", "c3").proxy("c1", "c2", "c3").ready("c1", "c3").goneClusters("c1").
			policy(func(p *Policy) { p.ConsecutiveSuccesses = 1 }).
			rows(draining("c2").started(ago(5*time.Minute)).checked(ago(time.Minute), 0, fail)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c3")},
			Clusters: rows(active("c1"),
				removed("c2").started(ago(5*time.Minute)).checked(ago(0), 1, pass).recorded().removedByGate(),
				active("c3")),
			Removed:   []Removal{{Cluster: "c2", Reason: RemovalGatePassed}},
			RequeueAt: now.Add(RemovedRowRetention),
		},
	},
	"rule 6: a gone cluster's readiness does not let another go": {
		in: c2Leaves().goneClusters("c1").
			policy(func(p *Policy) { p.ConsecutiveSuccesses = 1 }).
			rows(draining("c2").started(ago(5*time.Minute)).checked(ago(time.Minute), 0, fail)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			checkedNow("c2", 1, pass).msg("no other cluster has the Gateway ready")),
	},
}

// allDecideCases are decideCases, recoveryCases and guardCases.
func allDecideCases() map[string]decideCase {
	all := maps.Clone(decideCases)
	maps.Copy(all, recoveryCases)
	maps.Copy(all, guardCases)
	return all
}

func TestDecide(t *testing.T) {
	for name, tc := range allDecideCases() {
		t.Run(name, func(t *testing.T) {
			in := tc.in.build()
			checkEqual(t, "Due", Due(in), tc.due)
			checkEqual(t, "Decide", Decide(in), tc.out)
		})
	}
}

// TestDecideIsIdempotent feeds every case's output back as the next input at the same
// time, with no new checks: the decision must not change, so a second sync writes
// nothing. The rows go through JSON on the way, as they do through the API server.
func TestDecideIsIdempotent(t *testing.T) {
	for name, tc := range allDecideCases() {
		t.Run(name, func(t *testing.T) {
			in := tc.in.build()
			first := Decide(in)
			second := Decide(nextInput(t, in, first))
			checkEqual(t, "proxy", second.Proxy, first.Proxy)
			checkEqual(t, "rows", asJSON(second.Clusters), asJSON(first.Clusters))
			checkEqual(t, "removed", second.Removed, []Removal(nil))
			checkEqual(t, "restored", second.Restored, []string(nil))
			if !second.RequeueAt.Equal(first.RequeueAt) {
				t.Errorf("requeueAt %v, first decision %v", second.RequeueAt, first.RequeueAt)
			}
		})
	}
}

// nextInput is the input of the sync after the one that decided out: the same world,
// with out written and read back, and no new checks.
func nextInput(t testing.TB, in Input, out Output) Input {
	t.Helper()
	data, err := json.Marshal(out.Clusters)
	if err != nil {
		t.Fatalf("marshal rows: %v", err)
	}
	var previous []v1alpha1.ClusterStatus
	if err := json.Unmarshal(data, &previous); err != nil {
		t.Fatalf("unmarshal rows: %v", err)
	}
	in.Proxy = out.Proxy
	in.Previous = previous
	in.Checks = nil
	return in
}

// TestDecideIgnoresInputOrder reverses every list of every case's input: the output
// must not change.
func TestDecideIgnoresInputOrder(t *testing.T) {
	reverseGroups := func(groups []Group) []Group {
		out := slices.Clone(groups)
		slices.Reverse(out)
		for i := range out {
			out[i].Clusters = slices.Clone(out[i].Clusters)
			slices.Reverse(out[i].Clusters)
		}
		return out
	}
	for name, tc := range allDecideCases() {
		t.Run(name, func(t *testing.T) {
			in := tc.in.build()
			want := Decide(in)
			in.Real = reverseGroups(in.Real)
			in.Proxy = reverseGroups(in.Proxy)
			in.Previous = slices.Clone(in.Previous)
			slices.Reverse(in.Previous)
			in.ForceRemove = slices.Clone(in.ForceRemove)
			slices.Reverse(in.ForceRemove)
			checkEqual(t, "Decide", Decide(in), want)
		})
	}
}

// TestDecideDrain follows one cluster through a whole drain, sync after sync, as the
// controller would run them: each sync checks what Due lists and feeds the output back.
func TestDecideDrain(t *testing.T) {
	in := c2Leaves().build()
	var removedAt time.Time
	for step := 0; step < 20 && removedAt.IsZero(); step++ {
		evaluations := map[string]Check{}
		for _, name := range Due(in) {
			evaluations[name] = Check{Result: pass, Value: "0", Query: queryOf(name)}
		}
		in.Checks = evaluations
		out := Decide(in)
		if len(out.Removed) > 0 {
			checkEqual(t, "removed", out.Removed, []Removal{{Cluster: "c2", Reason: RemovalGatePassed}})
			removedAt = in.Now
			break
		}
		if out.RequeueAt.IsZero() {
			t.Fatalf("step %d: nothing to requeue while c2 drains", step)
		}
		in = nextInput(t, in, out)
		in.Now = out.RequeueAt
	}
	// The checks come at 0s, 30s, 60s, but the gate waits for the minimum drain
	// duration of 2m; at 90s and 120s the run goes on.
	if want := now.Add(2 * time.Minute); !removedAt.Equal(want) {
		t.Errorf("c2 removed at %v, want %v", removedAt, want)
	}
}

func TestCeilSecond(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want time.Time
	}{
		"whole second":           {in: now, want: now},
		"fraction rounds up":     {in: now.Add(time.Millisecond), want: now.Add(time.Second)},
		"other zone becomes UTC": {in: now.In(time.FixedZone("x", 3600)), want: now},
	} {
		t.Run(name, func(t *testing.T) {
			checkEqual(t, "ceilSecond", ceilSecond(tc.in), tc.want)
		})
	}
}

func TestDecideRoundsTimesUp(t *testing.T) {
	in := c2Leaves().build()
	in.Now = now.Add(400 * time.Millisecond)
	out := Decide(in)
	want := metav1.NewTime(now.Add(time.Second))
	checkEqual(t, "drain start", out.Clusters[1].DrainStartTime, &want)
	// Not due before its drain starts: the first check comes at the next whole second.
	checkEqual(t, "due", Due(in), []string(nil))
	checkEqual(t, "requeueAt", out.RequeueAt, now.Add(time.Second))
}

// TestChecked: Checked lists the draining clusters whose checks run, due or not, but
// not one that is removed anyway, and the Active clusters' replacement checks.
func TestChecked(t *testing.T) {
	in := input().real("c1").proxy("c1", "c2", "c3").force("c3").
		rows(draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 2, pass), draining("c3").started(ago(5*time.Minute))).build()
	checkEqual(t, "Due", Due(in), []string(nil))
	drains, replacements := Checked(in)
	checkEqual(t, "Checked", drains, []string{"c2"})
	checkEqual(t, "Checked replacements", replacements, []string(nil))

	// c1's replacement check ran 10 s ago: it is not due, and still checked.
	in = input().real("c1").proxy("c1", "c2").
		rows(active("c1").checked(ago(10*time.Second), 0, pass), draining("c2").started(ago(5*time.Minute)).checked(ago(10*time.Second), 2, pass)).build()
	in.Policy.ReplacementCheck, in.Policy.MinReadyClusters = true, 1
	checkEqual(t, "DueReplacements", DueReplacements(in), []string(nil))
	_, replacements = Checked(in)
	checkEqual(t, "Checked replacements with a replacement check", replacements, []string{"c1"})
}
