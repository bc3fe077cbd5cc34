// Package nsinformer merges the informers of one resource, each watching one
// namespace, into one SharedIndexInformer. A manager that may watch only some
// namespaces (--watch-namespaces) asks the API server for those namespaces alone,
// and needs no cluster-wide right to list or watch, while its controllers keep one
// lister, one set of indexes and one set of handlers over all of them.
//
// The merged informer's indexer is read-only: only the namespaces' own informers
// write their stores. LastSyncResourceVersion is empty, as namespaces' lists have no
// common resourceVersion.
package nsinformer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ForNamespaces returns newInformer's informer of every namespace when namespaces is
// empty, and otherwise one informer of each of namespaces, merged.
func ForNamespaces(namespaces []string, newInformer func(namespace string) cache.SharedIndexInformer) cache.SharedIndexInformer {
	if len(namespaces) == 0 {
		return newInformer(metav1.NamespaceAll)
	}
	perNamespace := make(map[string]cache.SharedIndexInformer, len(namespaces))
	for _, ns := range namespaces {
		perNamespace[ns] = newInformer(ns)
	}
	return Merge(perNamespace)
}

// Merge returns one informer over informers, which are keyed by the namespace each
// watches. It starts, syncs and stops them together, and adds a handler or an index
// to each.
func Merge(informers map[string]cache.SharedIndexInformer) cache.SharedIndexInformer {
	m := &merged{indexer: indexer{byNamespace: map[string]cache.Indexer{}}}
	namespaces := make([]string, 0, len(informers))
	for ns := range informers {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	for _, ns := range namespaces {
		m.all = append(m.all, informers[ns])
		m.indexer.byNamespace[ns] = informers[ns].GetIndexer()
		m.indexer.all = append(m.indexer.all, informers[ns].GetIndexer())
	}
	return m
}

type merged struct {
	all     []cache.SharedIndexInformer
	indexer indexer
}

var _ cache.SharedIndexInformer = &merged{}

// registration is a handler's registration with each namespace's informer.
type registration []cache.ResourceEventHandlerRegistration

func (r registration) HasSynced() bool {
	for _, one := range r {
		if !one.HasSynced() {
			return false
		}
	}
	return true
}

func (m *merged) add(add func(cache.SharedIndexInformer) (cache.ResourceEventHandlerRegistration, error)) (cache.ResourceEventHandlerRegistration, error) {
	var r registration
	for _, i := range m.all {
		one, err := add(i)
		if err != nil {
			for j, done := range r {
				_ = m.all[j].RemoveEventHandler(done)
			}
			return nil, err
		}
		r = append(r, one)
	}
	return r, nil
}

func (m *merged) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i cache.SharedIndexInformer) (cache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandler(h)
	})
}

func (m *merged) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i cache.SharedIndexInformer) (cache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandlerWithResyncPeriod(h, resync)
	})
}

func (m *merged) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i cache.SharedIndexInformer) (cache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandlerWithOptions(h, o)
	})
}

func (m *merged) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(registration)
	if !ok || len(r) != len(m.all) {
		return errors.New("not a registration of this merged informer")
	}
	var errs []error
	for j, one := range r {
		errs = append(errs, m.all[j].RemoveEventHandler(one))
	}
	return errors.Join(errs...)
}

func (m *merged) GetStore() cache.Store           { return m.indexer }
func (m *merged) GetIndexer() cache.Indexer       { return m.indexer }
func (m *merged) GetController() cache.Controller { return m }

func (m *merged) Run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		<-stop
	}()
	m.RunWithContext(ctx)
}

// RunWithContext runs every namespace's informer and returns when all have stopped.
func (m *merged) RunWithContext(ctx context.Context) {
	var wg sync.WaitGroup
	for _, i := range m.all {
		wg.Go(func() { i.RunWithContext(ctx) })
	}
	wg.Wait()
}

func (m *merged) HasSynced() bool {
	for _, i := range m.all {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}

// LastSyncResourceVersion is empty: the namespaces' lists have no common one.
func (m *merged) LastSyncResourceVersion() string { return "" }

func (m *merged) each(f func(cache.SharedIndexInformer) error) error {
	var errs []error
	for _, i := range m.all {
		errs = append(errs, f(i))
	}
	return errors.Join(errs...)
}

func (m *merged) SetWatchErrorHandler(h cache.WatchErrorHandler) error {
	return m.each(func(i cache.SharedIndexInformer) error { return i.SetWatchErrorHandler(h) })
}

func (m *merged) SetWatchErrorHandlerWithContext(h cache.WatchErrorHandlerWithContext) error {
	return m.each(func(i cache.SharedIndexInformer) error { return i.SetWatchErrorHandlerWithContext(h) })
}

func (m *merged) SetTransform(t cache.TransformFunc) error {
	return m.each(func(i cache.SharedIndexInformer) error { return i.SetTransform(t) })
}

func (m *merged) AddIndexers(ix cache.Indexers) error {
	return m.each(func(i cache.SharedIndexInformer) error { return i.AddIndexers(ix) })
}

func (m *merged) IsStopped() bool {
	for _, i := range m.all {
		if !i.IsStopped() {
			return false
		}
	}
	return true
}

// indexer reads the namespaces' stores as one.
type indexer struct {
	all         []cache.Indexer
	byNamespace map[string]cache.Indexer
}

var _ cache.Indexer = indexer{}

var errReadOnly = errors.New("a merged informer's store is read-only: each namespace's informer writes its own")

func (indexer) Add(any) error               { return errReadOnly }
func (indexer) Update(any) error            { return errReadOnly }
func (indexer) Delete(any) error            { return errReadOnly }
func (indexer) Replace([]any, string) error { return errReadOnly }
func (indexer) Resync() error               { return errReadOnly }
func (x indexer) AddIndexers(ix cache.Indexers) error {
	var errs []error
	for _, i := range x.all {
		errs = append(errs, i.AddIndexers(ix))
	}
	return errors.Join(errs...)
}

func (x indexer) List() []any {
	var out []any
	for _, i := range x.all {
		out = append(out, i.List()...)
	}
	return out
}

func (x indexer) ListKeys() []string {
	var out []string
	for _, i := range x.all {
		out = append(out, i.ListKeys()...)
	}
	return out
}

func (x indexer) Get(obj any) (any, bool, error) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return x.GetByKey(key)
}

// GetByKey asks the store of the key's namespace; a namespace not watched has none.
func (x indexer) GetByKey(key string) (any, bool, error) {
	ns, _, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false, err
	}
	i, ok := x.byNamespace[ns]
	if !ok {
		return nil, false, nil
	}
	return i.GetByKey(key)
}

func (x indexer) Index(name string, obj any) ([]any, error) {
	return concat(x.all, func(i cache.Indexer) ([]any, error) { return i.Index(name, obj) })
}

func (x indexer) IndexKeys(name, value string) ([]string, error) {
	return concat(x.all, func(i cache.Indexer) ([]string, error) { return i.IndexKeys(name, value) })
}

// ByIndex asks only the namespace's store for the namespace index.
func (x indexer) ByIndex(name, value string) ([]any, error) {
	if name == cache.NamespaceIndex {
		i, ok := x.byNamespace[value]
		if !ok {
			return nil, nil
		}
		return i.ByIndex(name, value)
	}
	return concat(x.all, func(i cache.Indexer) ([]any, error) { return i.ByIndex(name, value) })
}

func (x indexer) ListIndexFuncValues(name string) []string {
	var out []string
	for _, i := range x.all {
		out = append(out, i.ListIndexFuncValues(name)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (x indexer) GetIndexers() cache.Indexers {
	if len(x.all) == 0 {
		return cache.Indexers{}
	}
	return x.all[0].GetIndexers()
}

func concat[T any](all []cache.Indexer, f func(cache.Indexer) ([]T, error)) ([]T, error) {
	var out []T
	for _, i := range all {
		some, err := f(i)
		if err != nil {
			return nil, err
		}
		out = append(out, some...)
	}
	return out, nil
}
