// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// maxParallelQueries bounds the Prometheus queries the manager runs at once, over all
// policies, so that a fleet of draining clusters cannot flood Prometheus.
const maxParallelQueries = 16

// maxParallelQueriesPerPolicy bounds the query slots one policy holds at once: a
// policy whose Prometheus is slow or hostile (each query bounded by its timeout)
// delays its own checks, and leaves the other policies three quarters of the slots.
const maxParallelQueriesPerPolicy = maxParallelQueries / 4

// evaluator runs the Prometheus checks of a policy's due clusters apart from its syncs:
// a sync starts a round of checks and returns at once, and the round wakes the policy
// when it is done. So a slow or hung Prometheus delays nothing but its own checks:
// additions still reach the proxy at once (rule 1), and other policies still sync.
type evaluator struct {
	// check runs the checks of one round.
	check func(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, due []string, labels map[string]map[string]string) (map[string]promcheck.Evaluation, time.Time)
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
	results    map[string]promcheck.Evaluation
	// at is the time the round's queries were evaluated at.
	at time.Time
}

func newEvaluator(check func(context.Context, *trafficv1alpha1.TrafficMigrationPolicy, []string, map[string]map[string]string) (map[string]promcheck.Evaluation, time.Time)) *evaluator {
	return &evaluator{check: check, rounds: map[string]*round{}}
}

// take returns the results of the policy's finished round with the time its queries
// were evaluated at, and whether a round is still in flight. Results of a round started for another version of the policy's spec, or
// for a policy of the same name that was deleted since, are dropped: they answered
// another question.
func (e *evaluator) take(key string, policy *trafficv1alpha1.TrafficMigrationPolicy) (results map[string]promcheck.Evaluation, at time.Time, inFlight bool) {
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

// evaluate checks the due clusters against Prometheus, a few at a time. Every failure
// to reach Prometheus, including a missing or invalid Secret, becomes an Error
// evaluation: the cluster stays (rule 4).
//
// The queries are evaluated at the whole second the round starts in (the clusters were
// due by then), which it returns: checks then keep to their interval exactly.
func (c *Controller) evaluate(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, due []string, clusterLabels map[string]map[string]string) (map[string]promcheck.Evaluation, time.Time) {
	out := make(map[string]promcheck.Evaluation, len(due))
	now := c.clock.Now().Truncate(time.Second)
	querier, problem := c.querierFor(ctx, policy)
	if problem != nil {
		for _, cluster := range due {
			out[cluster] = *problem
			c.metrics.evaluation(policy, problem)
		}
		return out, now
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// A round takes one of its policy's slots, then one of the manager's, for each
	// query: one policy never holds more than its share of the manager's slots.
	ownSlots := make(chan struct{}, maxParallelQueriesPerPolicy)
	for _, cluster := range due {
		select {
		case ownSlots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return out, now // the manager stops; the rest is checked after its restart
		}
		select {
		case c.querySlots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return out, now
		}
		wg.Add(1)
		go func() {
			defer func() { <-c.querySlots; <-ownSlots; wg.Done() }()
			data := promcheck.NewQueryData(policy, promcheck.ClusterInfo{Name: cluster, Labels: clusterLabels[cluster]})
			start := time.Now()
			ev := promcheck.Evaluate(ctx, querier, &policy.Spec, data, now)
			c.metrics.queryDuration.Observe(since(start))
			c.metrics.evaluation(policy, &ev)
			mu.Lock()
			out[cluster] = ev
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, now
}

// querierFor returns a Prometheus client for the policy's Secret, or the evaluation
// that every due cluster gets when the Secret is missing or invalid. The Secret is read
// from the API, not from a cache of all Secrets: the manager reads only the Secrets
// that policies name, in the policies' namespaces.
func (c *Controller) querierFor(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy) (promcheck.Querier, *promcheck.Evaluation) {
	name := policy.Spec.PrometheusSecret.Name
	// client-go logs response bodies at high verbosity with the request context's
	// logger: this request gets none, so the Secret's data never reaches a log.
	quiet := klog.NewContext(ctx, logr.Discard())
	secret, err := c.kubeClient.CoreV1().Secrets(policy.Namespace).Get(quiet, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.queriers.forget(policy.Namespace, name)
		return nil, &promcheck.Evaluation{Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonSecretNotFound,
			Message: fmt.Sprintf("Secret %s not found in namespace %s", name, policy.Namespace)}
	case apierrors.IsForbidden(err):
		return nil, &promcheck.Evaluation{Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonSecretNotFound,
			Message: fmt.Sprintf("the manager may not read Secret %s in namespace %s", name, policy.Namespace)}
	case err != nil:
		return nil, &promcheck.Evaluation{Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonSecretNotFound,
			Message: fmt.Sprintf("Secret %s in namespace %s cannot be read", name, policy.Namespace)}
	}
	q, err := c.queriers.get(secret)
	if err != nil {
		// An invalid Secret, or a url outside the hub admin's allowlist.
		return nil, &promcheck.Evaluation{Result: trafficv1alpha1.EvaluationError, Reason: promcheck.ConfigErrorReason(err),
			Message: fmt.Sprintf("Secret %s: %v", name, err)}
	}
	return q, nil
}
