// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// engineView is the manager's policy informer as the notifications engine sees it,
// so that the policies are cached once for the manager and the engine:
//   - the engine's event handler is added to the informer, kept for replay (a change
//     of the configuration, and every resyncPeriod, as a drain stalls by the clock
//     alone) and removed when the engine stops;
//   - the engine stores each policy it annotated, as the API server returned it, so
//     that it does not notify twice before the watch brings the annotation. The view
//     keeps that object beside the cache, which belongs to the manager's controllers,
//     and hands it out until the cache holds the same resourceVersion or a newer one.
type engineView struct {
	cache.SharedIndexInformer

	mu         sync.Mutex
	handlers   []cache.ResourceEventHandler
	registered []cache.ResourceEventHandlerRegistration
	// err is the first error of adding a handler (the engine drops it).
	err error
	// annotated holds the policies the engine annotated, by key, until the cache has
	// caught up with them.
	annotated map[string]*trafficv1alpha1.TrafficMigrationPolicy
}

func newEngineView(informer cache.SharedIndexInformer) *engineView {
	return &engineView{SharedIndexInformer: informer, annotated: map[string]*trafficv1alpha1.TrafficMigrationPolicy{}}
}

// AddEventHandler adds handler to the informer and keeps it for replay. The engine
// adds its one handler when it is built.
func (v *engineView) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := v.SharedIndexInformer.AddEventHandler(handler)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		v.err = err
		return nil, err
	}
	v.handlers = append(v.handlers, handler)
	v.registered = append(v.registered, reg)
	return reg, nil
}

// HasSynced reports whether the informer has handed the engine every policy it held
// when the engine started.
func (v *engineView) HasSynced() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, reg := range v.registered {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// stop takes the engine's handlers off the informer.
func (v *engineView) stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, reg := range v.registered {
		_ = v.SharedIndexInformer.RemoveEventHandler(reg)
	}
	v.registered, v.handlers = nil, nil
}

// replay hands every cached policy to the engine's handlers as an update.
func (v *engineView) replay() {
	v.mu.Lock()
	handlers := v.handlers
	v.mu.Unlock()
	for _, obj := range v.SharedIndexInformer.GetStore().List() {
		for _, h := range handlers {
			h.OnUpdate(obj, obj)
		}
	}
}

// GetStore and GetIndexer are the informer's cache, read through the engine's own
// writes, which never reach it.
func (v *engineView) GetStore() cache.Store { return v.GetIndexer() }
func (v *engineView) GetIndexer() cache.Indexer {
	return viewIndexer{v.SharedIndexInformer.GetIndexer(), v}
}

// viewIndexer is the informer's indexer with the engine's writes beside it.
type viewIndexer struct {
	cache.Indexer
	view *engineView
}

// Update keeps a policy the engine annotated beside the cache.
func (i viewIndexer) Update(obj any) error {
	p, err := asPolicy(obj)
	if err != nil {
		return err
	}
	key, err := cache.MetaNamespaceKeyFunc(p)
	if err != nil {
		return err
	}
	i.view.mu.Lock()
	defer i.view.mu.Unlock()
	i.view.annotated[key] = p
	return nil
}

// GetByKey returns the cached policy, or the one the engine annotated while the cache
// is older than it. A policy gone from the cache is gone.
func (i viewIndexer) GetByKey(key string) (any, bool, error) {
	obj, exists, err := i.Indexer.GetByKey(key)
	i.view.mu.Lock()
	defer i.view.mu.Unlock()
	annotated, ok := i.view.annotated[key]
	if err != nil || !exists || !ok {
		delete(i.view.annotated, key)
		return obj, exists, err
	}
	cached, isMeta := obj.(metav1.Object)
	if isMeta {
		if cmp, err := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), annotated.ResourceVersion); err == nil && cmp < 0 {
			return annotated, true, nil
		}
	}
	delete(i.view.annotated, key)
	return obj, exists, nil
}

// asPolicy is obj as a typed policy: the cache's, or the engine's patch result.
func asPolicy(obj any) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	switch o := obj.(type) {
	case *trafficv1alpha1.TrafficMigrationPolicy:
		return o, nil
	case *unstructured.Unstructured:
		p := &trafficv1alpha1.TrafficMigrationPolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, p); err != nil {
			return nil, fmt.Errorf("read the policy %s/%s: %w", o.GetNamespace(), o.GetName(), err)
		}
		p.ManagedFields = nil
		return p, nil
	default:
		return nil, fmt.Errorf("not a TrafficMigrationPolicy: %T", obj)
	}
}

// trimmedRow is a row as the triggers and templates see it: without its history, the
// resolved query of up to 16 KiB, the last check's detail and the check kept from its
// DNS withdrawal, the bulk of a draining row, which neither the default triggers nor
// the default templates use and each trigger run would convert.
func trimmedRow(row trafficv1alpha1.ClusterStatus) trafficv1alpha1.ClusterStatus {
	row.History, row.ResolvedQuery, row.LastCheckDetail, row.DNSWithdrawalCheck = nil, "", "", nil
	return row
}

// policyObject is a policy as the engine's triggers and templates see it: as JSON,
// with its apiVersion and kind, without its managed fields, and its rows trimmed
// (trimmedRow). The cached policy is not changed.
func policyObject(obj metav1.Object) (*unstructured.Unstructured, error) {
	p, err := asPolicy(obj)
	if err != nil {
		return nil, err
	}
	view := *p
	view.TypeMeta = metav1.TypeMeta{APIVersion: trafficv1alpha1.SchemeGroupVersion.String(), Kind: "TrafficMigrationPolicy"}
	view.ManagedFields = nil
	if p.Status.Clusters != nil {
		view.Status.Clusters = make([]trafficv1alpha1.ClusterStatus, len(p.Status.Clusters))
		for n, row := range p.Status.Clusters {
			view.Status.Clusters[n] = trimmedRow(row)
		}
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&view)
	if err != nil {
		return nil, fmt.Errorf("convert the policy %s/%s: %w", p.Namespace, p.Name, err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}
