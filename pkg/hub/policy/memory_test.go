// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// TestEvaluatorRounds: a policy's round of checks, kept in its memory, from start to
// take, and what forget keeps of it.
func TestEvaluatorRounds(t *testing.T) {
	release := make(chan struct{})
	woken := make(chan string, 4)
	check := func(context.Context, *trafficv1alpha1.TrafficMigrationPolicy, dueChecks, map[string]map[string]string) (roundResults, time.Time) {
		<-release
		return roundResults{draining: map[string]promcheck.Check{"c1": {Result: trafficv1alpha1.EvaluationPass}}}, time.Unix(100, 0)
	}
	mem := newMemories()
	e := newEvaluator(check, mem)
	e.wake = func(key string) { woken <- key }
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Generation: 3}}

	e.start(t.Context(), "ns/p", policy, dueChecks{draining: []string{"c1"}}, nil)
	e.start(t.Context(), "ns/p", policy, dueChecks{draining: []string{"c1"}}, nil) // one round at a time
	if _, _, inFlight := e.take("ns/p", policy); !inFlight {
		t.Fatal("the round should be in flight")
	}
	// The policy is deleted while its round runs: the round is kept, so that a policy
	// of the same name starts none beside it.
	mem.forget("ns/p")
	if _, _, inFlight := e.take("ns/p", policy); !inFlight {
		t.Fatal("forget dropped a round in flight")
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
	if results, _, inFlight := e.take("ns/p", other); inFlight || results.draining != nil {
		t.Errorf("another policy of the name took %v (in flight %v)", results.draining, inFlight)
	}
	if len(woken) != 0 {
		t.Errorf("the second start ran a round beside the first")
	}

	// The same policy takes its results once.
	e.start(t.Context(), "ns/p", policy, dueChecks{draining: []string{"c1"}}, nil)
	var results roundResults
	var at time.Time
	select {
	case <-woken:
		results, at, _ = e.take("ns/p", policy)
	case <-time.After(time.Minute):
		t.Fatal("the second round never woke its policy")
	}
	if results.draining["c1"].Result != trafficv1alpha1.EvaluationPass || !at.Equal(time.Unix(100, 0)) {
		t.Errorf("took %v at %v, want c1's pass at 100s", results.draining, at)
	}
	if again, _, _ := e.take("ns/p", policy); again.draining != nil {
		t.Errorf("the results were taken twice")
	}
	mem.forget("ns/p")
	if len(mem.byPolicy) != 0 {
		t.Errorf("forget left %d policies in memory", len(mem.byPolicy))
	}
}
