// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/gate"
)

// evaluator runs the Prometheus checks of a policy's due clusters apart from its syncs:
// a sync starts a round of checks and returns at once, and the round wakes the policy
// when it is done. So a slow or hung Prometheus delays nothing but its own checks:
// additions still reach the proxy at once (rule 1), and other policies still sync.
type evaluator struct {
	// check runs the checks of one round.
	check func(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, due []string, labels map[string]map[string]string) (map[string]gate.Evaluation, time.Time)
	// wake enqueues a policy's key.
	wake func(key string)

	mu     sync.Mutex
	rounds map[string]*round
}

// round is one policy's checks, in flight or done.
type round struct {
	uid        types.UID
	generation int64
	done       bool
	results    map[string]gate.Evaluation
	// at is the time the round's queries were evaluated at.
	at time.Time
}

func newEvaluator(check func(context.Context, *trafficv1alpha1.TrafficMigrationPolicy, []string, map[string]map[string]string) (map[string]gate.Evaluation, time.Time)) *evaluator {
	return &evaluator{check: check, rounds: map[string]*round{}}
}

// take returns the results of the policy's finished round with the time its queries
// were evaluated at, and whether a round is still in flight. Results of a round started for another version of the policy's spec, or
// for a policy of the same name that was deleted since, are dropped: they answered
// another question.
func (e *evaluator) take(key string, policy *trafficv1alpha1.TrafficMigrationPolicy) (results map[string]gate.Evaluation, at time.Time, inFlight bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.rounds[key]
	if !ok {
		return nil, time.Time{}, false
	}
	if !r.done {
		return nil, time.Time{}, true
	}
	delete(e.rounds, key)
	if r.uid != policy.UID || r.generation != policy.Generation {
		return nil, time.Time{}, false
	}
	return r.results, r.at, false
}

// start begins a round of checks of the due clusters unless one is in flight. ctx ends
// the round early when the controller stops.
func (e *evaluator) start(ctx context.Context, key string, policy *trafficv1alpha1.TrafficMigrationPolicy, due []string, labels map[string]map[string]string) {
	e.mu.Lock()
	if _, ok := e.rounds[key]; ok {
		e.mu.Unlock()
		return
	}
	r := &round{uid: policy.UID, generation: policy.Generation}
	e.rounds[key] = r
	e.mu.Unlock()

	go func() {
		results, at := e.check(ctx, policy, due, labels)
		e.mu.Lock()
		r.done, r.results, r.at = true, results, at
		e.mu.Unlock()
		if ctx.Err() == nil {
			e.wake(key)
		}
	}()
}

// forget drops what is known of a deleted policy.
func (e *evaluator) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.rounds[key]; ok && r.done {
		delete(e.rounds, key)
	}
}
