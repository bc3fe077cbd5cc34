// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/pkg/hub/slots"
)

// maxParallelQueries bounds the Prometheus queries the manager runs at once, over all
// policies, so that a fleet of draining clusters cannot flood Prometheus.
//
// The slots are shared fairly by namespace (a tenant), then by policy within it
// (package slots): a namespace holds a quarter of them, and more only while its
// Prometheus answers within fastQuery, so that a namespace with many policies, or
// whose Prometheus is slow or hostile (each query bounded by its timeout), delays its
// own checks and leaves the others at least three quarters of the slots.
const maxParallelQueries = 16

// DefaultQuerySpread is how much of a second the manager spreads the policies' queries
// over (Limits.QuerySpread).
const DefaultQuerySpread = time.Second

// fastQuery is how fast a namespace's queries must be for it to borrow query slots
// beyond its quarter.
const fastQuery = slots.DefaultFast

// maxPendingRounds bounds a policy's rounds that the evaluator starts by itself while
// its syncs have not taken the ones before: one in flight and the rest done.
const maxPendingRounds = 3

// evaluator runs the Prometheus checks of a policy's due clusters apart from its syncs:
// a sync plans the policy's checks and returns at once, and each round wakes the
// policy when it is done. So a slow or hung Prometheus delays nothing but its own
// checks: additions still reach the proxy at once (rule 1), and other policies still
// sync.
//
// It also keeps the checks to their interval whatever the work queue does: each
// round's clusters are due again an interval after it (decision.Policy.CheckDueAfter),
// and the evaluator starts that round on its clock by itself, without waiting for a
// sync, which may queue behind other policies' writes (--kube-api-qps). Rounds
// wait, done, until a sync takes them, one a sync and in the order they ran, so the
// decision records every check as it would one round a sync; at most
// maxPendingRounds wait, beyond which the rounds wait for the syncs.
type evaluator struct {
	// check runs the checks of one round, evaluated at at.
	check func(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, due dueChecks, labels map[string]map[string]string, at time.Time) roundResults
	// wake enqueues a policy's key.
	wake func(key string)
	// clock starts the rounds that fall due between syncs when it can wait
	// (clock.WithDelayedExecution); otherwise only syncs start rounds.
	clock clock.PassiveClock

	// memory holds each policy's rounds, check schedule and spacing measure.
	memory *memories
}

// spacingMeasure is a policy's last measure of the spacing of its trafficShare
// series' samples in Prometheus: what it says of the window, for which spec, and when.
type spacingMeasure struct {
	uid        types.UID
	generation int64
	// next is when to measure again.
	next time.Time
	// note says why the window is too short; "" when it is not, or when nothing could be measured.
	note string
}

// dueChecks are the checks a round makes: the draining clusters' checks and the Active
// clusters' replacement checks (spec.replacement.metricsQuery).
type dueChecks struct {
	draining     []string
	replacements []string
}

func (d dueChecks) empty() bool { return len(d.draining) == 0 && len(d.replacements) == 0 }

// roundResults are a round's checks by cluster, those of draining clusters and the
// replacement checks apart: a cluster may leave the real decisions while its
// replacement check is in flight, and that check must never count as a drain check.
type roundResults struct {
	draining     map[string]promcheck.Check
	replacements map[string]promcheck.Check
	// windowNote says why trafficShare.window is too short for the spacing of its
	// series' samples (promcheck.WindowTooShort); "" when it is not.
	windowNote string
}

// round is one policy's checks, in flight or done.
type round struct {
	uid        types.UID
	generation int64
	// checked are the clusters the round checks.
	checked dueChecks
	done    bool
	results roundResults
	// at is the time the round's queries are evaluated at.
	at time.Time
}

// checkKey names one check of a cluster: its drain check, or its replacement check.
type checkKey struct {
	cluster     string
	replacement bool
}

// checkSchedule is when the evaluator checks a policy's clusters next, and what it
// checks them with: the policy, and its clusters' labels, as its last sync saw them
// (policy is the informer's object, never modified).
type checkSchedule struct {
	ctx    context.Context
	policy *trafficv1alpha1.TrafficMigrationPolicy
	labels map[string]map[string]string
	// next is, by check, when it is due; a check that no round has made yet is due
	// when its sync said it was.
	next  map[checkKey]time.Time
	timer clock.Timer
}

// stop stops the schedule's timer; s may be nil.
func (s *checkSchedule) stop() {
	if s != nil && s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

func newEvaluator(check func(context.Context, *trafficv1alpha1.TrafficMigrationPolicy, dueChecks, map[string]map[string]string, time.Time) roundResults,
	memory *memories, clk clock.PassiveClock) *evaluator {
	return &evaluator{check: check, memory: memory, clock: clk, wake: func(string) {}}
}

// take returns the results of the policy's oldest finished round with the time its
// queries were evaluated at, and wakes the policy again when another finished round
// waits. Results of a round started for another version of the policy's spec, or for
// a policy of the same name that was deleted since, are dropped: they answered
// another question, and their clusters are due again at once.
func (e *evaluator) take(key string, policy *trafficv1alpha1.TrafficMigrationPolicy) (results roundResults, at time.Time) {
	var ready bool
	e.memory.with(key, func(m *memory) {
		for len(m.rounds) > 0 && m.rounds[0].done {
			r := m.rounds[0]
			m.rounds = m.rounds[1:]
			if r.uid == policy.UID && r.generation == policy.Generation {
				results, at = r.results, r.at
				break
			}
			if s := m.schedule; s != nil {
				now := e.clock.Now()
				for _, k := range r.checked.keys() {
					if _, ok := s.next[k]; ok {
						s.next[k] = now
					}
				}
			}
		}
		ready = len(m.rounds) > 0 && m.rounds[0].done
	})
	if ready {
		e.wake(key)
	}
	return results, at
}

// plan tells the evaluator what a sync found: the policy and its clusters' labels,
// the checks due now that no round has made (due) and all the checks that run, due
// now or later (checked; decision.Checked). It starts a round of the due checks
// unless one is in flight, and keeps checking every check of checked an interval
// after its last round; a check no longer in checked is no longer made. ctx ends the
// rounds early when the controller stops.
func (e *evaluator) plan(ctx context.Context, key string, policy *trafficv1alpha1.TrafficMigrationPolicy, labels map[string]map[string]string, due, checked dueChecks) {
	e.memory.with(key, func(m *memory) {
		if checked.empty() {
			m.schedule.stop()
			m.schedule = nil
			return
		}
		s := m.schedule
		if s == nil {
			s = &checkSchedule{next: map[checkKey]time.Time{}}
			m.schedule = s
		}
		s.ctx, s.policy, s.labels = ctx, policy, labels
		keep := map[checkKey]bool{}
		for _, k := range checked.keys() {
			keep[k] = true
		}
		for k := range s.next {
			if !keep[k] {
				delete(s.next, k)
			}
		}
		// A check the schedule has, due now by the decision while a round is pending,
		// is in that round or the next one the schedule starts.
		now, pending := e.clock.Now(), len(m.rounds) > 0
		for _, k := range due.keys() {
			if _, ok := s.next[k]; !ok || !pending {
				s.next[k] = now
			}
		}
		e.fire(key, m)
	})
}

// fire starts a round of the policy's checks that are due by its schedule, unless a
// round is in flight or maxPendingRounds wait (the round's end, or a sync's take and
// plan, fires again), and sets the schedule's timer for the next one. It is called
// with the memory's lock held.
func (e *evaluator) fire(key string, m *memory) {
	s := m.schedule
	if s == nil || s.ctx.Err() != nil { // the controller stops
		return
	}
	if n := len(m.rounds); n >= maxPendingRounds || (n > 0 && !m.rounds[n-1].done) {
		return
	}
	now := e.clock.Now()
	var due dueChecks
	for k, at := range s.next {
		if at.After(now) {
			continue
		}
		if k.replacement {
			due.replacements = append(due.replacements, k.cluster)
		} else {
			due.draining = append(due.draining, k.cluster)
		}
	}
	if !due.empty() {
		slices.Sort(due.draining)
		slices.Sort(due.replacements)
		at := now.Truncate(time.Second)
		next := decision.PolicyFromSpec(&s.policy.Spec).CheckDueAfter(at)
		for _, k := range due.keys() {
			s.next[k] = next
		}
		e.start(key, m, s, due, at)
	}
	s.stop()
	clk, ok := e.clock.(clock.WithDelayedExecution)
	if !ok || len(s.next) == 0 {
		return
	}
	first := time.Time{}
	for _, at := range s.next {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	// The function runs apart from the clock's own goroutine, which a fake clock
	// calls it under its lock.
	s.timer = clk.AfterFunc(first.Sub(now), func() { go e.fireScheduled(key, s) })
}

// fireScheduled fires the policy's schedule s unless the policy is forgotten or has
// another schedule since.
func (e *evaluator) fireScheduled(key string, s *checkSchedule) {
	e.memory.mu.Lock()
	defer e.memory.mu.Unlock()
	if m := e.memory.byPolicy[key]; m != nil && m.schedule == s {
		e.fire(key, m)
	}
}

// start begins a round of the due checks, evaluated at at, with the schedule's
// policy and labels. It is called with the memory's lock held.
func (e *evaluator) start(key string, m *memory, s *checkSchedule, due dueChecks, at time.Time) {
	r := &round{uid: s.policy.UID, generation: s.policy.Generation, checked: due, at: at}
	m.rounds = append(m.rounds, r)
	// The checks read the policy's metadata and spec, never its status.
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: *s.policy.ObjectMeta.DeepCopy(), Spec: *s.policy.Spec.DeepCopy()}
	ctx, labels := s.ctx, s.labels
	go func() {
		results := e.check(ctx, policy, due, labels, at)
		e.memory.mu.Lock()
		r.done, r.results = true, results
		if m := e.memory.byPolicy[key]; m != nil && ctx.Err() == nil {
			e.fire(key, m)
		}
		e.memory.mu.Unlock()
		if ctx.Err() == nil {
			e.wake(key)
		}
	}()
}

// keys lists the checks of d.
func (d dueChecks) keys() []checkKey {
	keys := make([]checkKey, 0, len(d.draining)+len(d.replacements))
	for _, c := range d.draining {
		keys = append(keys, checkKey{cluster: c})
	}
	for _, c := range d.replacements {
		keys = append(keys, checkKey{cluster: c, replacement: true})
	}
	return keys
}

// windowNote returns what the policy's last measure of its sample spacing says of its
// trafficShare window, measuring again, with one of the manager's query slots, when the
// last measure is older than promcheck.SpacingInterval (sooner when nothing could be
// measured yet) or was of another spec. A
// measure that fails keeps the last note: the checks say what is wrong with Prometheus.
func (c *Controller) windowNote(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, q promcheck.Querier, now time.Time) string {
	ts := policy.Spec.TrafficShare
	if ts == nil {
		return ""
	}
	key := keyOf(policy)
	var last spacingMeasure
	c.memory.with(key, func(m *memory) {
		if m.spacing != nil {
			last = *m.spacing
		}
	})
	sameSpec := last.uid == policy.UID && last.generation == policy.Generation
	if sameSpec && now.Before(last.next) {
		return last.note
	}
	release, err := c.querySlots.Acquire(ctx, policy.Namespace, policy.Name)
	if err != nil {
		return last.note
	}
	spacing, measured, err := promcheck.SampleSpacing(ctx, q, ts, now)
	release()
	next := spacingMeasure{uid: policy.UID, generation: policy.Generation, next: now.Add(promcheck.SpacingInterval)}
	switch {
	case err != nil:
		klog.FromContext(ctx).V(2).Info("Could not measure the sample spacing of trafficShare's series", "err", err)
		if sameSpec {
			next.note = last.note
		}
	case measured:
		next.note = promcheck.WindowTooShort(ts.WithDefaults().Window, spacing)
	default:
		// No series is old enough yet: measure again once one may be.
		if window, err := model.ParseDuration(ts.WithDefaults().Window); err == nil {
			next.next = now.Add(min(promcheck.SpacingLookbacks(time.Duration(window))[0], promcheck.SpacingInterval))
		}
	}
	c.memory.with(key, func(m *memory) { m.spacing = &next })
	return next.note
}

// evaluate checks the due clusters against Prometheus, a few at a time: the draining
// clusters with the policy's check, the Active ones with its replacement check. Every
// failure to reach Prometheus, including a missing or invalid Secret, becomes an Error
// evaluation: the cluster stays (rule 4), or does not count as a replacement.
//
// The queries are evaluated at now, the whole second the round starts in (the clusters
// were due by then): checks then keep to their interval exactly.
func (c *Controller) evaluate(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, due dueChecks, clusterLabels map[string]map[string]string, now time.Time) roundResults {
	out := roundResults{
		draining:     make(map[string]promcheck.Check, len(due.draining)),
		replacements: make(map[string]promcheck.Check, len(due.replacements)),
	}
	if !c.waitQueryOffset(ctx, policy.UID, now) {
		return out // the manager stops; the checks are made after its restart
	}
	type job struct {
		cluster     string
		replacement bool
		spec        *trafficv1alpha1.TrafficMigrationPolicySpec
		into        map[string]promcheck.Check
	}
	jobs := make([]job, 0, len(due.draining)+len(due.replacements))
	for _, cluster := range due.draining {
		jobs = append(jobs, job{cluster, false, &policy.Spec, out.draining})
	}
	replacement := policy.Spec.Replacement.Check()
	for _, cluster := range due.replacements {
		if replacement == nil {
			break
		}
		jobs = append(jobs, job{cluster, true, replacement, out.replacements})
	}
	querier, problem := c.querierFor(ctx, policy)
	if problem != nil {
		for _, j := range jobs {
			j.into[j.cluster] = *problem
			c.metrics.evaluation(policy, problem)
		}
		return out
	}
	if len(due.draining) > 0 {
		out.windowNote = c.windowNote(ctx, policy, querier, now)
	}
	key, interval := keyOf(policy), decision.PolicyFromSpec(&policy.Spec).Interval
	var mu sync.Mutex
	var wg sync.WaitGroup
	record := func(j job, ev promcheck.Check) {
		c.metrics.evaluation(policy, &ev)
		mu.Lock()
		j.into[j.cluster] = ev
		mu.Unlock()
	}
	// backingOff records the check of j without asking Prometheus while the policy's
	// checks of its kind back off after an answer over the manager's limits
	// (cappedRun), also one of this round's.
	backingOff := func(j job, data promcheck.QueryData) bool {
		ev, ok := c.memory.cappedRepeat(key, policy, j.replacement, now)
		if ok {
			ev.Query, _ = promcheck.ResolveQuery(j.spec, data) // the row keeps its own query
			record(j, ev)
		}
		return ok
	}
	// A round takes one of the manager's slots for each query, as its namespace's and
	// its policy's fair share allows.
	for _, j := range jobs {
		data := promcheck.NewQueryData(policy, promcheck.ClusterInfo{Name: j.cluster, Labels: clusterLabels[j.cluster]})
		if backingOff(j, data) {
			continue
		}
		asked := time.Now()
		release, err := c.querySlots.Acquire(ctx, policy.Namespace, policy.Name)
		c.metrics.slotWait.WithLabelValues(policy.Namespace).Observe(since(asked))
		if err != nil {
			wg.Wait()
			return out // the manager stops; the rest is checked after its restart
		}
		if backingOff(j, data) {
			release()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { release(); wg.Done() }()
			start := time.Now()
			ev := promcheck.Run(ctx, querier, j.spec, data, now)
			c.metrics.queryDuration.Observe(since(start))
			record(j, c.memory.noteCapped(key, policy, j.replacement, j.cluster, ev, now, interval))
		}()
	}
	wg.Wait()
	return out
}

// queryOffset is how long after the second its checks are evaluated at a policy sends
// their queries: a point within spread that the policy's UID fixes, so that the
// policy's queries keep to their interval. A check's time is a whole second and the
// next one falls due an interval later, so every policy due in a second would query at
// its start without it: 100 policies at a 10 s interval, created at any time, make 10
// queries at once each second and none in between, a burst beyond a namespace's query
// slots while others hold theirs. Prometheus spreads its scrapes over their interval
// the same way, from a hash of each target.
func queryOffset(uid types.UID, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(uid))
	return time.Duration(h.Sum64() % uint64(spread))
}

// waitQueryOffset waits until the policy's queryOffset past at, on the controller's
// clock (not at all on a clock that cannot wait). It returns false when ctx ends first.
func (c *Controller) waitQueryOffset(ctx context.Context, uid types.UID, at time.Time) bool {
	clk, ok := c.clock.(clock.Clock)
	if !ok {
		return true
	}
	wait := at.Add(queryOffset(uid, c.limits.QuerySpread)).Sub(clk.Now())
	if wait <= 0 {
		return true
	}
	timer := clk.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// querierFor returns the Prometheus client of the policy's Secret, or the evaluation
// that every due cluster gets when the Secret is missing, may not be read or is
// invalid. The Secret is read from the API, not from a cache of all Secrets: the
// manager reads only the Secrets that policies name, in the policies' namespaces, and
// each at most every promcheck.SecretMaxAge while it can be read.
func (c *Controller) querierFor(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy) (promcheck.Querier, *promcheck.Check) {
	q, err := c.prometheus.Get(ctx, policy.Namespace, policy.Spec.PrometheusSecret.Name)
	var problem *promcheck.SecretError
	if errors.As(err, &problem) {
		return nil, &promcheck.Check{Result: trafficv1alpha1.EvaluationError, Reason: problem.Reason, Message: problem.Error()}
	}
	return q, nil
}

// prometheusClient builds a Prometheus client under the hub admin's bounds: where it
// may connect and how much of an answer it reads.
func (l Limits) prometheusClient(cfg promcheck.Config) (promcheck.Client, error) {
	cfg.Allowlist, cfg.MaxAnswerBytes, cfg.MaxSeries = l.Allowlist, l.MaxAnswerBytes, l.MaxSeries
	return promcheck.NewClient(cfg)
}
