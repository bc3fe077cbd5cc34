// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"open-cluster-management.io/api/client/cluster/clientset/versioned/fake"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
)

// TestCheckResultsOnly: what a status write may wait for, and what is written at once.
func TestCheckResultsOnly(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, s, 0, time.UTC)} }
	base := trafficv1alpha1.TrafficMigrationPolicyStatus{
		ObservedGeneration: 1,
		Clusters: []trafficv1alpha1.ClusterStatus{active("c2"), {
			Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: at(0),
			LastEvaluationTime: at(10), LastResult: trafficv1alpha1.EvaluationFail, LastValue: "12",
			History: []trafficv1alpha1.CheckRecord{{Time: *at(10), Result: trafficv1alpha1.EvaluationFail, Value: "12"}},
		}},
	}
	tests := map[string]struct {
		change func(row *trafficv1alpha1.ClusterStatus, s *trafficv1alpha1.TrafficMigrationPolicyStatus)
		want   bool
	}{
		"another failing check": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.LastEvaluationTime, row.NextEvaluationTime, row.LastValue, row.LastCheckDetail = at(20), at(30), "9", "9% > 5%"
			row.Message, row.ResolvedQuery, row.EstimatedRemovalTime = "waiting for 3 more passing checks; last check: 9% > 5%", "sum(...)", at(50)
			row.History = append(row.History, trafficv1alpha1.CheckRecord{Time: *at(20), Result: trafficv1alpha1.EvaluationFail, Value: "9"})
		}, true},
		"a pass": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.LastResult, row.ConsecutiveSuccesses = trafficv1alpha1.EvaluationPass, 1
		}, false},
		"another result": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.LastResult = trafficv1alpha1.EvaluationError
		}, false},
		"a phase": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.Phase = trafficv1alpha1.ClusterHeld
		}, false},
		"a stall": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.Stalled = true
		}, false},
		"a DNS withdrawal": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.DNSWithdrawalTime = at(15)
		}, false},
		"a removal": {func(row *trafficv1alpha1.ClusterStatus, _ *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			row.Phase, row.RemovalTime = trafficv1alpha1.ClusterRemoved, at(20)
		}, false},
		"a condition": {func(_ *trafficv1alpha1.ClusterStatus, s *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			s.Conditions = []metav1.Condition{{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse}}
		}, false},
		"another generation": {func(_ *trafficv1alpha1.ClusterStatus, s *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			s.ObservedGeneration = 2
		}, false},
		"a new row": {func(_ *trafficv1alpha1.ClusterStatus, s *trafficv1alpha1.TrafficMigrationPolicyStatus) {
			s.Clusters = append(s.Clusters, active("c3"))
		}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			updated := *base.DeepCopy()
			tc.change(&updated.Clusters[1], &updated)
			if got := checkResultsOnly(base, updated); got != tc.want {
				t.Errorf("checkResultsOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStatusWritesWait: a status with only new check results waits in memory while
// the budget is spent, the next sync decides from it, and it is written with the
// next change of the decision or once it has waited the flush interval; a status that
// changes a run of passes is written at once.
func TestStatusWritesWait(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	api := &fakeAPI{client: fake.NewSimpleClientset()}
	policyClient := trafficfake.NewSimpleClientset()
	policyClient.PrependReactor("*", "trafficmigrationpolicies", api.reactor(policyClient.Tracker()))
	row := draining("c1", 0)
	row.LastResult = trafficv1alpha1.EvaluationFail
	created, err := policyClient.TrafficV1alpha1().TrafficMigrationPolicies(lagNS).Create(ctx, lagPolicy(row), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{policyClient: policyClient, clock: clk, memory: newMemories(), metrics: NewMetrics(nil),
		expectations: newExpectations(clk), statusBudget: spentBudget{},
		limits: Limits{StatusWrites: StatusWrites{QPS: 1, FlushInterval: time.Minute}}}
	key := keyOf(created)
	get := func() *trafficv1alpha1.TrafficMigrationPolicy {
		t.Helper()
		p, err := policyClient.TrafficV1alpha1().TrafficMigrationPolicies(lagNS).Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// check is the status after one more failing check at now, from what the sync
	// decides from.
	check := func(from *trafficv1alpha1.TrafficMigrationPolicy, value string) trafficv1alpha1.TrafficMigrationPolicyStatus {
		s := *from.Status.DeepCopy()
		r := &s.Clusters[0]
		r.LastEvaluationTime, r.LastValue = &metav1.Time{Time: clk.Now()}, value
		r.History = append(r.History, trafficv1alpha1.CheckRecord{Time: metav1.Time{Time: clk.Now()}, Result: trafficv1alpha1.EvaluationFail, Value: value})
		return s
	}

	// The first check since the process started waits: the budget is spent.
	clk.Step(10 * time.Second)
	written := get()
	flushAt, err := c.writeStatus(ctx, written, check(c.withUnwritten(key, written), "12"))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); got.ResourceVersion != written.ResourceVersion {
		t.Fatalf("a status with only a new check result was written with the budget spent")
	}
	if want := clk.Now().Add(time.Minute); !flushAt.Equal(want) {
		t.Errorf("the kept status is due at %v, want %v", flushAt, want)
	}
	// The next sync decides from the kept status: the history has the first check.
	clk.Step(10 * time.Second)
	decideFrom := c.withUnwritten(key, get())
	if n := len(decideFrom.Status.Clusters[0].History); n != 1 {
		t.Fatalf("the next sync decides from %d checks of history, want the kept one", n)
	}
	if _, err := c.writeStatus(ctx, get(), check(decideFrom, "11")); err != nil {
		t.Fatal(err)
	}
	// A pass changes the run of passes: written at once, with the kept checks.
	clk.Step(10 * time.Second)
	decideFrom = c.withUnwritten(key, get())
	passed := check(decideFrom, "4")
	passed.Clusters[0].LastResult, passed.Clusters[0].ConsecutiveSuccesses = trafficv1alpha1.EvaluationPass, 1
	if flushAt, err := c.writeStatus(ctx, get(), passed); err != nil || !flushAt.IsZero() {
		t.Fatalf("writeStatus of a pass: kept until %v, err %v; want it written", flushAt, err)
	}
	got := get().Status.Clusters[0]
	if got.ConsecutiveSuccesses != 1 || len(got.History) != 3 || got.LastValue != "4" {
		t.Errorf("written row: %d passes, %d checks of history, last value %q; want 1, 3 and 4", got.ConsecutiveSuccesses, len(got.History), got.LastValue)
	}
	if kept := c.withUnwritten(key, get()); len(kept.Status.Clusters[0].History) != 3 {
		t.Errorf("after the write the sync decides from %d checks, want the 3 written", len(kept.Status.Clusters[0].History))
	}

	// A failing check after it ends the run (written at once); the next ones wait
	// until a minute after that write.
	clk.Step(10 * time.Second)
	failed := check(get(), "8")
	failed.Clusters[0].LastResult, failed.Clusters[0].ConsecutiveSuccesses = trafficv1alpha1.EvaluationFail, 0
	if _, err := c.writeStatus(ctx, get(), failed); err != nil {
		t.Fatal(err)
	}
	lastWrite := clk.Now()
	for i := 0; ; i++ {
		clk.Step(10 * time.Second)
		before := get()
		flushAt, err := c.writeStatus(ctx, before, check(c.withUnwritten(key, before), "7"))
		if err != nil {
			t.Fatal(err)
		}
		wrote := get().ResourceVersion != before.ResourceVersion
		if due := !clk.Now().Before(lastWrite.Add(time.Minute)); wrote != due {
			t.Fatalf("check %d, %s after the last write: written %v, want %v (kept until %v)", i, clk.Now().Sub(lastWrite), wrote, due, flushAt)
		}
		if wrote {
			if n := len(get().Status.Clusters[0].History); n != 4+i+1 {
				t.Errorf("the flush wrote %d checks of history, want every kept one (%d)", n, 4+i+1)
			}
			break
		}
	}

	// A kept status is dropped once the cache shows the policy changed.
	clk.Step(10 * time.Second)
	before := get()
	if _, err := c.writeStatus(ctx, before, check(before, "6")); err != nil {
		t.Fatal(err)
	}
	changed := before.DeepCopy()
	changed.ResourceVersion += "0"
	if kept := c.withUnwritten(key, changed); kept != changed {
		t.Errorf("the sync decided from a status kept for resourceVersion %s of the policy, now at %s", before.ResourceVersion, changed.ResourceVersion)
	}
}

// spentBudget is a write budget always spent.
type spentBudget struct{}

func (spentBudget) TryAccept(string, int) bool { return false }

// TestFairBudget checks that the status-write budget is shared by namespace: a tenant
// alone gets the whole rate, and one that asks for at most its share gets all of it
// beside a tenant that asks for ten times the whole budget.
func TestFairBudget(t *testing.T) {
	const qps = 20
	for _, tc := range []struct {
		name string
		// hogs is how many writes the noisy tenant asks for every 10 ms.
		hogs int
		// quiet is how many writes a second the quiet tenant asks for.
		quiet int
		// wantHog is at least how many of the noisy tenant's writes go through in the
		// 10 s, wantQuiet exactly how many of the quiet one's.
		wantHog, wantQuiet int
	}{
		{name: "alone", hogs: 2, quiet: 0, wantHog: 10 * qps},
		{name: "beside a tenant within its share", hogs: 2, quiet: qps / 4, wantHog: 10 * qps * 3 / 4, wantQuiet: 10 * qps / 4},
		{name: "a tenant within its share alone", hogs: 0, quiet: qps / 4, wantQuiet: 10 * qps / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			b := newFairBudget(qps, clk)
			hog, quiet := 0, 0
			for step := range 1000 {
				clk.SetTime(clk.Now().Add(10 * time.Millisecond))
				for range tc.hogs {
					if b.TryAccept("noisy", 1) {
						hog++
					}
				}
				if tc.quiet > 0 && step%(100/tc.quiet) == 0 && b.TryAccept("quiet", 1) {
					quiet++
				}
			}
			if quiet != tc.wantQuiet {
				t.Errorf("the quiet tenant wrote %d times in 10 s, want all %d it asked for", quiet, tc.wantQuiet)
			}
			if hog < tc.wantHog {
				t.Errorf("the noisy tenant wrote %d times in 10 s, want at least %d", hog, tc.wantHog)
			}
			// The burst is one second's worth.
			if total := hog + quiet; total > 11*qps {
				t.Errorf("%d writes in 10 s, more than the budget of %d a second allows", total, qps)
			}
		})
	}
}

// TestStatusWriteCost: a status write spends one write of the budget for every 10
// rows, at least one.
func TestStatusWriteCost(t *testing.T) {
	for rows, want := range map[int]int{0: 1, 1: 1, 10: 1, 11: 2, 100: 10, 1000: 100} {
		if got := statusWriteCost(rows); got != want {
			t.Errorf("statusWriteCost(%d) = %d, want %d", rows, got, want)
		}
	}
}

// TestFairBudgetBySize: the budget counts a large status write as several. A tenant
// whose 100-row statuses are written 8 times a second (8 policies checked every
// second) gets through at most a share of them, while a tenant whose 1-row statuses
// are written 10 times a second (100 policies checked every 10 s) gets all of its, as
// it would alone; counted by writes, the 18 a second would all go through.
func TestFairBudgetBySize(t *testing.T) {
	const qps = 20
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := newFairBudget(qps, clk)
	large, small := 0, 0
	for step := range 1000 {
		clk.SetTime(clk.Now().Add(10 * time.Millisecond))
		if step%10 == 0 && step%100 < 80 && b.TryAccept("hostile", statusWriteCost(100)) {
			large++
		}
		if step%10 == 5 && b.TryAccept("tenant", statusWriteCost(1)) {
			small++
		}
	}
	if small != 100 {
		t.Errorf("the tenant of small statuses wrote %d of its 100 in 10 s, want all", small)
	}
	// 10 s at most the whole rate beyond the small writes (10 of 20 a second), at a
	// cost of 5 (a share's burst) each, and the first second's burst.
	if large > 10*(qps-10)/5+qps/5 {
		t.Errorf("the tenant of 100-row statuses wrote %d of its 80 in 10 s, more than its cost allows", large)
	}
	if large == 0 {
		t.Error("the tenant of 100-row statuses wrote none: a write over a share's burst must still go through")
	}
}
