// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions/apis/v1"
)

// gatewayWatch runs the Gateway informer while the Gateway API is installed. The
// informer cannot be started with the others: its list fails while the CRD is absent,
// and the CRD may come and go while the agent runs. The controller starts it when it
// sees the CRD established and stops it when the CRD goes; a CRD deleted and created
// again (a new UID) gets a new informer.
type gatewayWatch struct {
	client   gatewayclient.Interface
	selector labels.Selector
	// changed is called on every Gateway event and once the informer has synced.
	changed func()

	mu      sync.Mutex
	running *runningWatch
}

// runningWatch is one run of the Gateway informer, for one CRD.
type runningWatch struct {
	crdUID   types.UID
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	done     chan struct{}
}

func newGatewayWatch(client gatewayclient.Interface, selector labels.Selector, changed func()) *gatewayWatch {
	return &gatewayWatch{client: client, selector: selector, changed: changed}
}

// ensure runs the informer for the CRD with the given UID, and returns its store once
// it has synced; nil until then. The informer runs until stop is called or ctx ends.
func (w *gatewayWatch) ensure(ctx context.Context, crdUID types.UID) cache.Store {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running != nil && w.running.crdUID != crdUID {
		klog.FromContext(ctx).Info("The Gateway CRD was replaced, restarting the Gateway informer", "uid", crdUID)
		w.stopLocked()
	}
	if w.running == nil {
		w.running = w.start(ctx, crdUID)
	}
	if !w.running.informer.HasSynced() {
		return nil
	}
	return w.running.informer.GetStore()
}

// start starts an informer on Gateways of every namespace that match the selector.
func (w *gatewayWatch) start(ctx context.Context, crdUID types.UID) *runningWatch {
	logger := klog.FromContext(ctx)
	logger.Info("Watching Gateways", "selector", w.selector.String())
	tweak := func(o *metav1.ListOptions) {
		if !w.selector.Empty() {
			o.LabelSelector = w.selector.String()
		}
	}
	informer := gatewayinformers.NewFilteredGatewayInformer(w.client, metav1.NamespaceAll, 0, cache.Indexers{}, tweak)
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.changed() },
		UpdateFunc: func(any, any) { w.changed() },
		DeleteFunc: func(any) { w.changed() },
	})
	ctx, cancel := context.WithCancel(ctx)
	r := &runningWatch{crdUID: crdUID, informer: informer, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		informer.RunWithContext(ctx)
	}()
	// An empty cluster sends no event: say when the cache is complete.
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			w.changed()
		}
	}()
	return r
}

// stop stops the informer, if it runs, and waits for it to end.
func (w *gatewayWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *gatewayWatch) stopLocked() {
	if w.running == nil {
		return
	}
	w.running.cancel()
	<-w.running.done
	w.running = nil
}

// active tells whether an informer runs.
func (w *gatewayWatch) active() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running != nil
}
