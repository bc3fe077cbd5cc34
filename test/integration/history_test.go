// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestCheckHistory drains cluster1 while half the traffic still reaches it, with checks
// every second against the real Prometheus: its row's history fills up to
// MaxCheckHistory and then rolls over, oldest first, and every write of the policy
// seen by a gapless watch carries the checks made since the write before, none lost,
// none kept longer than the flush interval: the history adds no write of its own. Once the traffic is gone cluster1 is removed, and its Removed row keeps the
// history, ending with the passing checks.
func TestCheckHistory(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "history")
	f := m.f
	p := m.policy()
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)

	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	waitForPromValue(t, c1ShareQuery(m, p), func(v float64) bool { return v > 40 })
	m.moveToC2(t)
	first := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && len(r.History) > 0
	})
	w := f.watchPolicy(t, m.ns, p.Name, first.ResourceVersion)

	// Full, then rolled over: the oldest check of a full history is dropped.
	full := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && len(r.History) == trafficv1alpha1.MaxCheckHistory
	})
	oldest := fixture.PolicyRow(full, m.c1).History[0].Time
	rolled := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && len(r.History) == trafficv1alpha1.MaxCheckHistory && r.History[0].Time.After(oldest.Add(2*time.Second))
	})
	r := fixture.PolicyRow(rolled, m.c1)
	for i, h := range r.History {
		if h.Result != trafficv1alpha1.EvaluationFail || !strings.HasPrefix(h.Value, "5") && !strings.HasPrefix(h.Value, "4") {
			t.Errorf("check %d of the history is %s with value %q, want a failed check near 50%%", i, h.Result, h.Value)
		}
	}
	last := r.History[len(r.History)-1]
	if !last.Time.Equal(r.LastEvaluationTime) || last.Value != r.LastValue || last.Result != r.LastResult {
		t.Errorf("the history ends with %+v, the row's last check is %s %s %q", last, r.LastEvaluationTime, r.LastResult, r.LastValue)
	}

	// Every write seen since the first check carries the checks made since the write
	// before: one each while the manager's budget of such writes lasts, a few while it
	// is spent (as for the suite's manager: startManager), never more than
	// statusFlushInterval holds, and none lost between two writes.
	versions := w.stop(t)
	interval := p.Spec.Interval.Duration
	maxPerWrite := int(statusFlushInterval/interval) + 2
	prev, others, checks := fixture.PolicyRow(first, m.c1), 0, 0
	for _, v := range versions {
		r := fixture.PolicyRow(v, m.c1)
		if len(r.History) > trafficv1alpha1.MaxCheckHistory {
			t.Errorf("resourceVersion %s keeps %d checks, more than %d", v.ResourceVersion, len(r.History), trafficv1alpha1.MaxCheckHistory)
		}
		switch n := newChecks(prev.History, r.History); {
		case n == 0 && !reflect.DeepEqual(prev.History, r.History):
			t.Errorf("the write of resourceVersion %s changed the history without a new check:\n%+v\nto\n%+v", v.ResourceVersion, prev.History, r.History)
		case n == 0:
			// A write for something else (the minimum drain reached, say) leaves the
			// history as it was.
			others++
			t.Logf("the write of resourceVersion %s has no new check: message %q -> %q", v.ResourceVersion, prev.Message, r.Message)
		case n > maxPerWrite:
			t.Errorf("the write of resourceVersion %s added %d checks to the history: kept longer than --status-flush-interval (%s) allows at %s a check", v.ResourceVersion, n, statusFlushInterval, interval)
		default:
			checks += n
			before, next := prev.History[len(prev.History)-1].Time, r.History[len(r.History)-n].Time
			if gap := next.Sub(before.Time); gap > interval+2*time.Second {
				t.Errorf("the write of resourceVersion %s starts its new checks %s after the last one written before: a check was lost between the writes", v.ResourceVersion, gap)
			}
		}
		prev = r
	}
	if checks < trafficv1alpha1.MaxCheckHistory || others > 2 {
		t.Errorf("%d writes of the policy carried %d checks, and %d carried none: want at least %d checks, and no more than 2 writes without", len(versions), checks, others, trafficv1alpha1.MaxCheckHistory)
	}
	t.Logf("%d writes of the policy: %d with %d new checks, %d for other changes", len(versions), len(versions)-others, checks, others)

	// The traffic leaves cluster1: it passes, goes, and keeps its history.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	removed := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	h := fixture.PolicyRow(removed, m.c1).History
	if len(h) != trafficv1alpha1.MaxCheckHistory {
		t.Fatalf("the Removed row keeps %d checks, want %d", len(h), trafficv1alpha1.MaxCheckHistory)
	}
	for _, c := range h[len(h)-int(p.Spec.ConsecutiveSuccesses):] {
		if c.Result != trafficv1alpha1.EvaluationPass {
			t.Errorf("the Removed row's history ends with %+v, want its last %d checks passed", h, p.Spec.ConsecutiveSuccesses)
			break
		}
	}
}

// newChecks is how many checks after has that before did not: those later than the
// last check of before.
func newChecks(before, after []trafficv1alpha1.CheckRecord) int {
	if len(before) == 0 {
		return len(after)
	}
	last := before[len(before)-1].Time
	n := 0
	for _, c := range after {
		if c.Time.After(last.Time) {
			n++
		}
	}
	return n
}

// TestStatusSizeAtTheLimits writes, through the real API server, the largest status
// the manager makes for a policy with statusSizeClusters draining clusters: each with a
// full history of values as long as the CRD allows, a detail as long as the manager
// keeps, every reason to wait in its message and a long resolved query. The status
// must stay well inside etcd's request limit (1.5 MiB), as the API docs say.
func TestStatusSizeAtTheLimits(t *testing.T) {
	t.Parallel()
	const (
		statusSizeClusters = 100
		queryLength        = 1024
		etcdRequestLimit   = 3 << 19 // 1.5 MiB, etcd's default --max-request-bytes
		limit              = etcdRequestLimit / 3
	)
	f := newFleet(t)
	ns := f.namespace(t, "size")
	p := idlePolicy(ns, "gw")
	f.createPolicy(t, p)

	start := metav1.NewTime(time.Now().UTC().Truncate(time.Second).Add(-time.Hour))
	value := "0." + strings.Repeat("1", decision.MaxHistoryValueLength-2)
	detail := strings.Repeat("x", decision.MaxCheckDetailLength)
	var rows []trafficv1alpha1.ClusterStatus
	for i := range statusSizeClusters {
		name := fmt.Sprintf("cluster-%03d-%s", i, strings.Repeat("n", 63-12))
		r := trafficv1alpha1.ClusterStatus{
			Name: name, Phase: trafficv1alpha1.ClusterHeld,
			DrainStartTime: &start, LastEvaluationTime: &start, NextEvaluationTime: &start,
			LastResult: trafficv1alpha1.EvaluationError, LastValue: value,
			ResolvedQuery:   strings.Repeat("q", queryLength),
			LastCheckDetail: detail,
			Message: "the real Placement's decisions cannot be read; maximum drain duration exceeded; removals suspended; " +
				"minimum drain duration not reached; waiting for 2147483647 more passing checks; no other cluster has the Gateway ready; last check: " + detail,
		}
		for range trafficv1alpha1.MaxCheckHistory {
			r.History = append(r.History, trafficv1alpha1.CheckRecord{Time: start, Result: trafficv1alpha1.EvaluationNoData, Value: value})
		}
		rows = append(rows, r)
	}
	// The manager writes this status too (the policy has no real Placement): write it
	// on the policy as it is now.
	var written *trafficv1alpha1.TrafficMigrationPolicy
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := f.getPolicy(t, ns, p.Name)
		current.Status.Clusters = rows
		var err error
		written, err = f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).UpdateStatus(t.Context(), current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("write a status of %d draining clusters at the limits: %v", statusSizeClusters, err)
	}
	whole, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	history, err := json.Marshal(written.Status.Clusters[0].History)
	if err != nil {
		t.Fatal(err)
	}
	rowJSON, err := json.Marshal(written.Status.Clusters[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("policy with %d draining clusters at the limits: %d bytes (%.1f%% of etcd's 1.5 MiB); per cluster: %d bytes, of which the history %d",
		statusSizeClusters, len(whole), 100*float64(len(whole))/etcdRequestLimit, len(rowJSON), len(history))
	if len(whole) > limit {
		t.Errorf("the policy is %d bytes, more than %d (a third of etcd's request limit)", len(whole), limit)
	}
	if len(history) > historyBytesLimit {
		t.Errorf("a full history is %d bytes, more than the %d the API docs state", len(history), historyBytesLimit)
	}
}

// historyBytesLimit is what the API docs state a full history of one cluster costs at
// most, as JSON.
const historyBytesLimit = 1300

// policyWatch records every version of one policy from a resourceVersion on, with no
// gap (see gaplessWatch).
type policyWatch struct {
	cancel context.CancelFunc
	done   <-chan struct{}

	mu       sync.Mutex
	versions []*trafficv1alpha1.TrafficMigrationPolicy
	err      error
}

// watchPolicy starts recording the versions of a policy after resourceVersion.
func (f *fleet) watchPolicy(t *testing.T, ns, name, resourceVersion string) *policyWatch {
	t.Helper()
	client := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	ctx, cancel := context.WithCancel(t.Context())
	w := &policyWatch{cancel: cancel}
	done, err := gaplessWatch(ctx, resourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = selector
		return client.Watch(ctx, o)
	}, w.apply, w.fail)
	if err != nil {
		cancel()
		t.Fatalf("watch policy %s/%s: %v", ns, name, err)
	}
	w.done = done
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// apply records a new version of the policy; false ends the watch.
func (w *policyWatch) apply(ev watch.Event) bool {
	p, ok := ev.Object.(*trafficv1alpha1.TrafficMigrationPolicy)
	if ev.Type != watch.Modified || !ok {
		w.fail(fmt.Errorf("the watch got %s: %v", ev.Type, ev.Object))
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.versions = append(w.versions, p)
	return true
}

func (w *policyWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// stop ends the watch and returns the versions it saw.
func (w *policyWatch) stop(t *testing.T) []*trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("watch of the policy: %v", w.err)
	}
	return w.versions
}
