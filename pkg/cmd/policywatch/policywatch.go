// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package policywatch follows TrafficMigrationPolicies for the commands that show
// them as they change: status --watch, wait and the dashboard's event streams. One
// Watcher keeps informer caches of the policies (and, when asked, of PlacementDecisions
// and the clusters' traffic-migration add-ons), reads from them, and tells each of its
// subscribers when any of them changed, as Argo Rollouts' viewcontroller serves its
// get, status and dashboard.
package policywatch

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// Scope says what a Watcher follows.
type Scope struct {
	// Namespace is the policies' namespace; "" for all namespaces.
	Namespace string
	// Name is the one policy to follow; "" for all of the namespace.
	Name string
	// Decisions follows PlacementDecisions too: those of Placement when it is set,
	// otherwise every PlacementDecision of a Placement in the namespace.
	Decisions bool
	Placement string
	// Addons follows the traffic-migration add-ons of all clusters too.
	Addons bool
}

// Watcher keeps informer caches of what its Scope names and says when they change.
type Watcher struct {
	*Broadcaster

	traffic trafficinformers.SharedInformerFactory
	cluster clusterinformers.SharedInformerFactory
	addon   addoninformers.SharedInformerFactory
	// informers are the informers in use, by what they watch.
	informers map[string]cache.SharedIndexInformer

	policies  trafficlisters.TrafficMigrationPolicyLister
	decisions clusterlisters.PlacementDecisionLister
	addons    addonlisters.ManagedClusterAddOnLister

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

// New sets up the informers that s names, on the hub clients c. Warnings of watches
// that fail after the caches synced, while they retry, go to errOut.
func New(c *hubclient.Clients, s Scope, errOut io.Writer) *Watcher {
	w := &Watcher{
		Broadcaster: NewBroadcaster(),
		informers:   map[string]cache.SharedIndexInformer{},
		fatal:       make(chan error, 1),
		errOut:      errOut,
		warned:      map[string]string{},
	}
	w.traffic = trafficinformers.NewSharedInformerFactoryWithOptions(c.Traffic, 0,
		trafficinformers.WithNamespace(s.Namespace),
		trafficinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
			if s.Name != "" {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.Name).String()
			}
		}))
	policies := w.traffic.Traffic().V1alpha1().TrafficMigrationPolicies()
	w.informers["TrafficMigrationPolicies"] = policies.Informer()
	w.policies = policies.Lister()

	if s.Decisions {
		decisionSelector := labels.NewSelector()
		if s.Placement != "" {
			decisionSelector = labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: s.Placement})
		} else if req, err := labels.NewRequirement(clusterv1beta1.PlacementLabel, selection.Exists, nil); err == nil {
			decisionSelector = decisionSelector.Add(*req)
		}
		w.cluster = clusterinformers.NewSharedInformerFactoryWithOptions(c.Cluster, 0,
			clusterinformers.WithNamespace(s.Namespace),
			clusterinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
				opts.LabelSelector = decisionSelector.String()
			}))
		decisions := w.cluster.Cluster().V1beta1().PlacementDecisions()
		w.informers["PlacementDecisions"] = decisions.Informer()
		w.decisions = decisions.Lister()
	}
	if s.Addons {
		w.addon = addoninformers.NewSharedInformerFactoryWithOptions(c.Addon, 0,
			addoninformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String()
			}))
		addons := w.addon.Addon().V1alpha1().ManagedClusterAddOns()
		w.informers["ManagedClusterAddOns"] = addons.Informer()
		w.addons = addons.Lister()
	}
	return w
}

// Start starts the informers and waits until their caches are filled, then tells the
// subscribers once. It fails when a watch is refused (no rights, no such resource)
// before then, and returns nil when ctx is done first. Shutdown waits for the
// informers to stop once ctx is done.
func (w *Watcher) Start(ctx context.Context) error {
	var hasSynced []cache.InformerSynced
	for what, informer := range w.informers {
		if err := informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { w.watchFailed(what, err) }); err != nil {
			return fmt.Errorf("watch %s: %w", what, err)
		}
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.Notify() },
			UpdateFunc: func(any, any) { w.Notify() },
			DeleteFunc: func(any) { w.Notify() },
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
	w.Notify()
	return nil
}

// watchFailed handles an informer's failed list or watch. Before the caches have
// synced, a refusal ends the command; afterwards, and for other errors, it is a
// warning while the informer retries. Closed and expired watches are routine.
func (w *Watcher) watchFailed(what string, err error) {
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

// Write writes s to out, one write at a time with the watcher's warnings.
func (w *Watcher) Write(out io.Writer, s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = io.WriteString(out, s)
}

// Shutdown waits for the informers to stop; the context Start was given must be done.
func (w *Watcher) Shutdown() {
	w.traffic.Shutdown()
	if w.cluster != nil {
		w.cluster.Shutdown()
	}
	if w.addon != nil {
		w.addon.Shutdown()
	}
}

// The watcher reads from its caches. The objects it returns are the caches' own and
// are only read.

// PolicyLister lists the policies from the cache.
func (w *Watcher) PolicyLister() trafficlisters.TrafficMigrationPolicyLister { return w.policies }

// Policies lists the policies of a namespace, or of all namespaces for "".
func (w *Watcher) Policies(namespace string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error) {
	if namespace == "" {
		return w.policies.List(labels.Everything())
	}
	return w.policies.TrafficMigrationPolicies(namespace).List(labels.Everything())
}

// Policy gets one policy; a *hubclient.PolicyNotFoundError when there is none.
func (w *Watcher) Policy(namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	p, err := w.policies.TrafficMigrationPolicies(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, &hubclient.PolicyNotFoundError{Namespace: namespace, Name: name}
	}
	return p, err
}

// Decisions lists the PlacementDecisions of a Placement, by their label.
func (w *Watcher) Decisions(namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	if w.decisions == nil {
		return nil, errors.New("PlacementDecisions are not watched")
	}
	sel := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement})
	return w.decisions.PlacementDecisions(namespace).List(sel)
}

// Addon gets the traffic-migration add-on of a cluster; nil, nil when there is none.
func (w *Watcher) Addon(cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	if w.addons == nil {
		return nil, errors.New("ManagedClusterAddOns are not watched")
	}
	a, err := w.addons.ManagedClusterAddOns(cluster).Get(trafficv1alpha1.AddonName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return a, err
}

// Broadcaster tells every subscriber that something changed. A subscriber that has
// not yet seen the last change is not told twice: changes coalesce.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// NewBroadcaster returns a broadcaster without subscribers.
func NewBroadcaster() *Broadcaster {
	return &Broadcaster{subs: map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives after each change, and the function that
// ends the subscription.
func (b *Broadcaster) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// Notify tells every subscriber of a change.
func (b *Broadcaster) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
