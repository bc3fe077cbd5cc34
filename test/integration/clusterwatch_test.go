// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clustersdkv1beta1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"
)

// clusterWatch records every change of the clusters a Placement lists, read as a
// consumer reads them (sdk-go's PlacementDecisionClustersTracker over the Placement's
// labelled PlacementDecisions), from its start until stop.
//
// It lists the decisions once and then watches them from the list's resourceVersion,
// resuming a closed watch where it left off, so it sees every write to them in the
// order the API server made it: a removal and a re-addition, however close together,
// are two sightings. A watch that cannot resume without a gap (its resourceVersion is
// no longer kept) is an error of the watch, never skipped over.
type clusterWatch struct {
	ns, placement string
	list          func(ctx context.Context) (*clusterv1beta1.PlacementDecisionList, error)
	cancel        context.CancelFunc
	done          <-chan struct{}

	mu sync.Mutex
	// objects are the decisions as the watch last saw them, by name.
	objects map[string]*clusterv1beta1.PlacementDecision
	seen    []clusterSighting
	err     error
}

// clusterSighting is a state of a Placement's clusters: the clusters its decisions
// list after the write of resourceVersion. at is when the watch received that write,
// so the write was made no later than at.
type clusterSighting struct {
	at              time.Time
	resourceVersion string
	clusters        []string
}

func (s clusterSighting) String() string {
	return fmt.Sprintf("%s (rv %s): %v", s.at.Format(time.StampMilli), s.resourceVersion, s.clusters)
}

// watchClusters starts recording the clusters of a Placement. The first sighting is
// the state the watch starts from.
func (f *fleet) watchClusters(t *testing.T, ns, placement string) *clusterWatch {
	t.Helper()
	client := f.Cluster.ClusterV1beta1().PlacementDecisions(ns)
	selector := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement}).String()
	ctx, cancel := context.WithCancel(t.Context())
	w := &clusterWatch{
		ns: ns, placement: placement,
		list: func(ctx context.Context) (*clusterv1beta1.PlacementDecisionList, error) {
			return client.List(ctx, metav1.ListOptions{LabelSelector: selector})
		},
		cancel:  cancel,
		objects: map[string]*clusterv1beta1.PlacementDecision{},
	}
	list, err := w.list(ctx)
	if err != nil {
		cancel()
		t.Fatalf("list the decisions of Placement %s/%s: %v", ns, placement, err)
	}
	for i := range list.Items {
		w.objects[list.Items[i].Name] = &list.Items[i]
	}
	w.record(list.ResourceVersion)
	done, err := gaplessWatch(ctx, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return client.Watch(ctx, o)
	}, w.apply, w.fail)
	if err != nil {
		cancel()
		t.Fatalf("watch the decisions of Placement %s/%s: %v", ns, placement, err)
	}
	w.done = done
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// gaplessWatch watches from resourceVersion with client-go's RetryWatcher, which
// resumes a closed watch where it left off, and hands each event to apply until apply
// returns false or ctx ends. A watch that ends by itself is reported to fail. The
// channel is closed once the watch has stopped.
func gaplessWatch(ctx context.Context, resourceVersion string, watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error),
	apply func(watch.Event) bool, fail func(error)) (<-chan struct{}, error) {
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, &cache.ListWatch{WatchFuncWithContext: watchFunc})
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					fail(fmt.Errorf("the watch ended before it was stopped"))
					return
				}
				if !apply(ev) {
					return
				}
			}
		}
	}()
	return done, nil
}

// apply takes one event of the watch in; false ends the watch.
func (w *clusterWatch) apply(ev watch.Event) bool {
	if ev.Type == watch.Error {
		w.fail(fmt.Errorf("the watch failed: %w", apierrors.FromObject(ev.Object)))
		return false
	}
	d, ok := ev.Object.(*clusterv1beta1.PlacementDecision)
	if !ok {
		w.fail(fmt.Errorf("the watch sent a %T", ev.Object))
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		w.objects[d.Name] = d
	case watch.Deleted:
		delete(w.objects, d.Name)
	}
	w.recordLocked(d.ResourceVersion)
	return true
}

func (w *clusterWatch) record(resourceVersion string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recordLocked(resourceVersion)
}

// recordLocked adds a sighting when the decisions as now seen list other clusters than
// the last sighting.
func (w *clusterWatch) recordLocked(resourceVersion string) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: w.placement, Namespace: w.ns}}
	tracker := clustersdkv1beta1.NewPlacementDecisionClustersTracker(p, seenDecisions(slices.Collect(maps.Values(w.objects))), nil)
	if err := tracker.Refresh(); err != nil {
		// A state that a consumer cannot read is as bad as a wrong one.
		if w.err == nil {
			w.err = fmt.Errorf("a consumer cannot read the decisions at rv %s: %w", resourceVersion, err)
		}
		return
	}
	clusters := sets.List(tracker.ExistingClusterGroupsBesides().GetClusters())
	if n := len(w.seen); n > 0 && slices.Equal(w.seen[n-1].clusters, clusters) {
		return
	}
	w.seen = append(w.seen, clusterSighting{at: time.Now(), resourceVersion: resourceVersion, clusters: clusters})
}

func (w *clusterWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// seenDecisions lets sdk-go's tracker read the decisions the watch holds.
type seenDecisions []*clusterv1beta1.PlacementDecision

func (s seenDecisions) List(labels.Selector, string) ([]*clusterv1beta1.PlacementDecision, error) {
	return s, nil
}

// caughtUp reports whether the watch has seen every write that a read of the
// decisions now sees: the same objects at the same resourceVersions.
func (w *clusterWatch) caughtUp(ctx context.Context) (bool, error) {
	list, err := w.list(ctx)
	if err != nil {
		return false, err
	}
	now := map[string]string{}
	for _, d := range list.Items {
		now[d.Name] = d.ResourceVersion
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, w.err
	}
	seen := map[string]string{}
	for name, d := range w.objects {
		seen[name] = d.ResourceVersion
	}
	return maps.Equal(now, seen), nil
}

// stop waits until the watch has caught up with the API server, so that it holds
// every change made before stop was called, then ends it and returns what it saw. It
// fails the test if the watch could not see every change.
func (w *clusterWatch) stop(t *testing.T) []clusterSighting {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := w.caughtUp(ctx)
		if err != nil && w.failed() {
			return false, err // the watch itself broke: waiting cannot help
		}
		return ok, nil
	})
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Errorf("the watch of Placement %s/%s's clusters may have missed changes: %v; it saw:\n%s", w.ns, w.placement, w.err, sightingList(w.seen))
	} else if err != nil {
		t.Errorf("the watch of Placement %s/%s's clusters did not catch up with the API server: %v; it saw:\n%s", w.ns, w.placement, err, sightingList(w.seen))
	}
	return slices.Clone(w.seen)
}

func (w *clusterWatch) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

func sightingList(seen []clusterSighting) string {
	lines := make([]string, 0, len(seen))
	for _, s := range seen {
		lines = append(lines, "  "+s.String())
	}
	return strings.Join(lines, "\n")
}
