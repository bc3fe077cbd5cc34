// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// TestEvaluatorRounds: a policy's rounds of checks, kept in its memory, from plan to
// take, and what forget keeps of them.
func TestEvaluatorRounds(t *testing.T) {
	release := make(chan struct{})
	woken := make(chan string, 4)
	check := func(_ context.Context, _ *trafficv1alpha1.TrafficMigrationPolicy, _ dueChecks, _ map[string]map[string]string, _ time.Time) roundResults {
		<-release
		return roundResults{draining: map[string]promcheck.Check{"c1": {Result: trafficv1alpha1.EvaluationPass}}}
	}
	clk := testingclock.NewFakeClock(time.Unix(100, 0))
	mem := newMemories()
	e := newEvaluator(check, mem, clk)
	e.wake = func(key string) { woken <- key }
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Generation: 3}}
	c1 := dueChecks{draining: []string{"c1"}}

	e.plan(t.Context(), "ns/p", policy, nil, c1, c1)
	e.plan(t.Context(), "ns/p", policy, nil, c1, c1) // one round at a time
	if results, _ := e.take("ns/p", policy); results.draining != nil {
		t.Fatal("took the results of a round in flight")
	}
	// The policy is deleted while its round runs: the round is kept, so that a policy
	// of the same name starts none beside it, and its checks stop.
	mem.forget("ns/p")
	if m := mem.byPolicy["ns/p"]; m == nil || len(m.rounds) != 1 || m.schedule != nil {
		t.Fatalf("forget kept %+v, want only the round in flight", m)
	}
	if clk.HasWaiters() {
		t.Errorf("forget left the policy's checks scheduled")
	}
	close(release)
	select {
	case key := <-woken:
		if key != "ns/p" {
			t.Fatalf("the round woke %q, want ns/p", key)
		}
	case <-time.After(time.Minute):
		t.Fatal("the round never woke its policy")
	}

	// A policy of the same name, but another object, does not take the old results.
	other := policy.DeepCopy()
	other.UID = "u2"
	if results, _ := e.take("ns/p", other); results.draining != nil {
		t.Errorf("another policy of the name took %v", results.draining)
	}

	// The same policy takes its results once, at the second the round started in.
	clk.Step(1500 * time.Millisecond)
	e.plan(t.Context(), "ns/p", policy, nil, c1, c1)
	select {
	case <-woken:
	case <-time.After(time.Minute):
		t.Fatal("the second round never woke its policy")
	}
	results, at := e.take("ns/p", policy)
	if results.draining["c1"].Result != trafficv1alpha1.EvaluationPass || !at.Equal(time.Unix(101, 0)) {
		t.Errorf("took %v at %v, want c1's pass at 101s", results.draining, at)
	}
	if again, _ := e.take("ns/p", policy); again.draining != nil {
		t.Errorf("the results were taken twice")
	}
	mem.forget("ns/p")
	if len(mem.byPolicy) != 0 {
		t.Errorf("forget left %d policies in memory", len(mem.byPolicy))
	}
	if clk.HasWaiters() {
		t.Errorf("forget left the policy's checks scheduled")
	}
}

// TestEvaluatorKeepsTheInterval: the evaluator starts each round an interval after
// the one before by itself, whether or not a sync took it; the rounds are taken in
// the order they ran; at most maxPendingRounds wait; a check no sync lists stops.
func TestEvaluatorKeepsTheInterval(t *testing.T) {
	woken := make(chan string, 16)
	var mu sync.Mutex
	var started []time.Time
	check := func(_ context.Context, _ *trafficv1alpha1.TrafficMigrationPolicy, due dueChecks, _ map[string]map[string]string, at time.Time) roundResults {
		mu.Lock()
		started = append(started, at)
		mu.Unlock()
		return roundResults{draining: map[string]promcheck.Check{due.draining[0]: {Result: trafficv1alpha1.EvaluationFail, Value: at.Format(time.TimeOnly)}}}
	}
	startedAt := func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(started)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := testingclock.NewFakeClock(t0)
	mem := newMemories()
	e := newEvaluator(check, mem, clk)
	e.wake = func(key string) { woken <- key }
	interval := metav1.Duration{Duration: 10 * time.Second}
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Generation: 1},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{Interval: &interval}}
	c1 := dueChecks{draining: []string{"c1"}}
	// roundEnds waits for a round's end; the round sets the schedule's next timer
	// before it wakes the policy.
	roundEnds := func() {
		t.Helper()
		select {
		case <-woken:
		case <-time.After(time.Minute):
			t.Fatalf("a round never ended; rounds started at %v", startedAt())
		}
	}

	e.plan(t.Context(), "ns/p", policy, nil, c1, c1)
	roundEnds()
	// No sync takes the rounds: the evaluator starts the next ones on time by itself,
	// until maxPendingRounds wait.
	for range maxPendingRounds - 1 {
		clk.Step(interval.Duration)
		roundEnds()
	}
	clk.Step(interval.Duration) // 30 s: none starts, also when the timer's function has run
	mem.mu.Lock()
	schedule := mem.byPolicy["ns/p"].schedule
	mem.mu.Unlock()
	e.fireScheduled("ns/p", schedule)
	mem.mu.Lock()
	pending := len(mem.byPolicy["ns/p"].rounds)
	mem.mu.Unlock()
	if pending != maxPendingRounds {
		t.Errorf("%d rounds wait, want at most %d", pending, maxPendingRounds)
	}
	clk.Step(interval.Duration) // 40 s
	for i := range maxPendingRounds {
		results, at := e.take("ns/p", policy)
		if want := t0.Add(time.Duration(i) * interval.Duration); !at.Equal(want) || results.draining["c1"].Value != want.Format(time.TimeOnly) {
			t.Errorf("round %d: took %v at %v, want c1's check at %v", i, results.draining, at, want)
		}
	}
	for len(woken) > 0 { // the takes woke the policy for the rounds still waiting
		<-woken
	}
	// The round due at 30 s waited for a take; a sync's plan starts it now (40 s).
	e.plan(t.Context(), "ns/p", policy, nil, dueChecks{}, c1)
	roundEnds()
	if results, at := e.take("ns/p", policy); !at.Equal(t0.Add(4*interval.Duration)) || results.draining == nil {
		t.Errorf("the round after the wait: took %v at %v, want c1's check at %v", results.draining, at, t0.Add(4*interval.Duration))
	}
	if got := startedAt(); len(got) != maxPendingRounds+1 {
		t.Errorf("rounds started at %v, want %d", got, maxPendingRounds+1)
	}

	// A round of another spec is dropped, and its checks are due again at once.
	clk.Step(interval.Duration)
	roundEnds()
	changed := policy.DeepCopy()
	changed.Generation = 2
	if results, _ := e.take("ns/p", changed); results.draining != nil {
		t.Errorf("took %v from a round of another spec", results.draining)
	}
	e.plan(t.Context(), "ns/p", changed, nil, dueChecks{}, c1)
	roundEnds()
	if results, at := e.take("ns/p", changed); !at.Equal(t0.Add(5*interval.Duration)) || results.draining == nil {
		t.Errorf("after the spec changed: took %v at %v, want c1's check at once (%v)", results.draining, at, t0.Add(5*interval.Duration))
	}

	// A cluster no longer checked is no longer scheduled.
	e.plan(t.Context(), "ns/p", changed, nil, dueChecks{}, dueChecks{})
	if clk.HasWaiters() {
		t.Errorf("a check no sync lists is still scheduled")
	}
}
