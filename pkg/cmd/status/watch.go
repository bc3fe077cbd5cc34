// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	addonlisters "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterlisters "open-cluster-management.io/api/client/cluster/listers/cluster/v1beta1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

// clearScreen moves a terminal's cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// watch shows the view, then again whenever an object it is built from changes, until
// ctx is done. On a terminal each view replaces the last; elsewhere the views follow
// each other, apart from text and YAML by a "---" line.
func (o *Options) watch(ctx context.Context, c *clients, q query) error {
	// One read through the API first, so that a missing CRD, policy or right is an
	// error at once, and to learn the proxy Placement whose decisions are watched.
	objs, err := gather(ctx, apiReader{c}, q)
	if err != nil {
		return err
	}
	proxy := ""
	if q.name != "" {
		proxy = objs[0].Policy.ProxyPlacementName()
	}

	w := newWatcher(c, q, proxy, o.ErrOut)
	ctx, cancel := context.WithCancel(ctx)
	defer w.shutdown()
	defer cancel()
	if err := w.start(ctx); err != nil || ctx.Err() != nil {
		return err
	}

	terminal := o.terminal()
	var last string
	shown := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
		}
		text, problem, err := o.watchView(ctx, w.reader, q)
		if err != nil {
			return err
		}
		if shown && text == last {
			continue
		}
		last = text
		switch {
		case problem != "" && !o.Print.IsText():
			w.write(o.ErrOut, problem)
		case terminal:
			w.write(o.Out, clearScreen+text)
		case shown && o.Print.Output != "json":
			w.write(o.Out, "---\n"+text)
		default:
			w.write(o.Out, text)
		}
		shown = true
	}
}

// watchView renders the view from the caches. A named policy that is gone is not an
// error while watching: the view says so (problem) and the watch goes on.
func (o *Options) watchView(ctx context.Context, r reader, q query) (text, problem string, err error) {
	objs, err := gather(ctx, r, q)
	var notFound *hubclient.PolicyNotFoundError
	if errors.As(err, &notFound) {
		return notFound.Error() + "\n", notFound.Error() + "\n", nil
	}
	if err != nil {
		return "", "", err
	}
	out, err := o.render(objs, q)
	return string(out), "", err
}

// watcher keeps informer caches of what a query reads and says when they change.
type watcher struct {
	traffic trafficinformers.SharedInformerFactory
	cluster clusterinformers.SharedInformerFactory
	addon   addoninformers.SharedInformerFactory
	// informers are the informers in use, by what they watch.
	informers map[string]cache.SharedIndexInformer
	reader    cacheReader
	// changed receives a value after any change; changes that come faster than the
	// views are rendered are coalesced.
	changed chan struct{}
	// fatal receives an error that ends the watch before the caches have synced.
	fatal  chan error
	synced atomic.Bool

	// mu serialises writes to the outputs, which may be one writer.
	mu     sync.Mutex
	errOut io.Writer
	// warned is the last warning written for each informer, so a failing watch that
	// retries does not repeat itself.
	warned map[string]string
}

// newWatcher sets up the informers a query needs: the policies, and for a detailed
// view the PlacementDecisions (of the proxy, when one policy is named) and the
// traffic-migration add-ons of all clusters.
func newWatcher(c *clients, q query, proxy string, errOut io.Writer) *watcher {
	w := &watcher{
		informers: map[string]cache.SharedIndexInformer{},
		changed:   make(chan struct{}, 1),
		fatal:     make(chan error, 1),
		errOut:    errOut,
		warned:    map[string]string{},
	}
	w.traffic = trafficinformers.NewSharedInformerFactoryWithOptions(c.traffic, 0,
		trafficinformers.WithNamespace(q.namespace),
		trafficinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
			if q.name != "" {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", q.name).String()
			}
		}))
	policies := w.traffic.Traffic().V1alpha1().TrafficMigrationPolicies()
	w.informers["TrafficMigrationPolicies"] = policies.Informer()
	w.reader.policyLister = policies.Lister()

	if q.detail {
		decisionSelector := labels.NewSelector()
		if proxy != "" {
			decisionSelector = labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: proxy})
		} else if req, err := labels.NewRequirement(clusterv1beta1.PlacementLabel, selection.Exists, nil); err == nil {
			decisionSelector = decisionSelector.Add(*req)
		}
		w.cluster = clusterinformers.NewSharedInformerFactoryWithOptions(c.cluster, 0,
			clusterinformers.WithNamespace(q.namespace),
			clusterinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
				opts.LabelSelector = decisionSelector.String()
			}))
		decisions := w.cluster.Cluster().V1beta1().PlacementDecisions()
		w.informers["PlacementDecisions"] = decisions.Informer()
		w.reader.decisionLister = decisions.Lister()

		w.addon = addoninformers.NewSharedInformerFactoryWithOptions(c.addon, 0,
			addoninformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String()
			}))
		addons := w.addon.Addon().V1alpha1().ManagedClusterAddOns()
		w.informers["ManagedClusterAddOns"] = addons.Informer()
		w.reader.addonLister = addons.Lister()
	}
	return w
}

// start starts the informers and waits until their caches are filled. It fails when
// a watch is refused (no rights, no such resource) before then, and returns nil when
// ctx is done first.
func (w *watcher) start(ctx context.Context) error {
	var hasSynced []cache.InformerSynced
	for what, informer := range w.informers {
		if err := informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { w.watchFailed(what, err) }); err != nil {
			return fmt.Errorf("watch %s: %w", what, err)
		}
		notify := func() {
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify() },
			UpdateFunc: func(any, any) { notify() },
			DeleteFunc: func(any) { notify() },
		}); err != nil {
			return fmt.Errorf("watch %s: %w", what, err)
		}
		hasSynced = append(hasSynced, informer.HasSynced)
	}
	w.traffic.Start(ctx.Done())
	if w.cluster != nil {
		w.cluster.Start(ctx.Done())
	}
	if w.addon != nil {
		w.addon.Start(ctx.Done())
	}

	syncCtx, stopSync := context.WithCancel(ctx)
	defer stopSync()
	synced := make(chan bool, 1)
	go func() { synced <- cache.WaitForCacheSync(syncCtx.Done(), hasSynced...) }()
	select {
	case ok := <-synced:
		if !ok {
			return nil // interrupted
		}
	case err := <-w.fatal:
		return err
	}
	w.synced.Store(true)
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return nil
}

// watchFailed handles an informer's failed list or watch. Before the caches have
// synced, a refusal ends the command; afterwards, and for other errors, it is a
// warning while the informer retries. Closed and expired watches are routine.
func (w *watcher) watchFailed(what string, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return
	}
	refused := apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err)
	if refused && !w.synced.Load() {
		select {
		case w.fatal <- fmt.Errorf("watch %s: %w", what, err):
		default:
		}
		return
	}
	msg := fmt.Sprintf("warning: watch %s: %v\n", what, err)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned[what] == msg {
		return
	}
	w.warned[what] = msg
	_, _ = io.WriteString(w.errOut, msg)
}

// write writes s to out, one write at a time.
func (w *watcher) write(out io.Writer, s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = io.WriteString(out, s)
}

// shutdown waits for the informers to stop; their context must be done.
func (w *watcher) shutdown() {
	w.traffic.Shutdown()
	if w.cluster != nil {
		w.cluster.Shutdown()
	}
	if w.addon != nil {
		w.addon.Shutdown()
	}
}

// cacheReader reads from the watcher's informer caches. The objects it returns are
// the caches' own and are only read.
type cacheReader struct {
	policyLister   trafficlisters.TrafficMigrationPolicyLister
	decisionLister clusterlisters.PlacementDecisionLister
	addonLister    addonlisters.ManagedClusterAddOnLister
}

func (r cacheReader) policies(_ context.Context, namespace string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error) {
	if namespace == "" {
		return r.policyLister.List(labels.Everything())
	}
	return r.policyLister.TrafficMigrationPolicies(namespace).List(labels.Everything())
}

func (r cacheReader) policy(_ context.Context, namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	p, err := r.policyLister.TrafficMigrationPolicies(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, &hubclient.PolicyNotFoundError{Namespace: namespace, Name: name}
	}
	return p, err
}

func (r cacheReader) decisions(_ context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	if r.decisionLister == nil {
		return nil, errors.New("PlacementDecisions are not watched")
	}
	sel := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement})
	return r.decisionLister.PlacementDecisions(namespace).List(sel)
}

func (r cacheReader) addon(_ context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	if r.addonLister == nil {
		return nil, errors.New("ManagedClusterAddOns are not watched")
	}
	a, err := r.addonLister.ManagedClusterAddOns(cluster).Get(trafficv1alpha1.AddonName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return a, err
}
