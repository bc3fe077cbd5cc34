// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/nsinformer"
)

// GroupVersion and Resource of external-dns's DNSEndpoint, which external-dns reads
// with --source=crd.
var (
	GroupVersion = schema.GroupVersion{Group: "externaldns.k8s.io", Version: "v1alpha1"}
	Resource     = GroupVersion.WithResource("dnsendpoints")
)

// Kind is the DNSEndpoint's kind.
const Kind = "DNSEndpoint"

// CRDRecheck is how often the manager asks the API server again whether it serves
// DNSEndpoints, while it does not.
const CRDRecheck = 30 * time.Second

// Errors of Endpoints.Get.
var (
	// ErrNotServed: the hub does not serve DNSEndpoints (the CRD is not installed).
	ErrNotServed = errors.New("the hub does not serve " + Resource.Resource + "." + Resource.Group + "/" + Resource.Version)
	// ErrNotSynced: the DNSEndpoint cache has just started; try again shortly.
	ErrNotSynced = errors.New("the DNSEndpoint cache has not synced yet")
)

// Observed is a policy's DNSEndpoint as the manager reads it.
type Observed struct {
	// Publication is what it publishes.
	Publication Publication
	// Generation is its metadata.generation.
	Generation int64
	// ObservedGeneration is its status.observedGeneration, written by external-dns.
	ObservedGeneration int64
	// Ours is false when the manager did not create it: it lacks the policy label, or
	// another manager's id owns it (DNSOwnerAnnotation).
	Ours bool
	// EditedByOthers: its spec changed since this manager last wrote it (its
	// generation is newer), so someone else edited it.
	EditedByOthers bool
	// RecreatedAfterDelete: this manager wrote it, then someone else deleted it, and
	// the manager has just created it again (set by Apply).
	RecreatedAfterDelete bool
	// obj is the object, for updates.
	obj *unstructured.Unstructured
}

// Object is the DNSEndpoint's metadata as read or written.
func (o *Observed) Object() metav1.Object { return o.obj }

// Applied reports whether external-dns applied the DNSEndpoint's current generation.
func (o *Observed) Applied() bool {
	return o.Generation > 0 && o.ObservedGeneration >= o.Generation
}

// Endpoints reads and writes the policies' DNSEndpoints. It watches only the
// DNSEndpoints that the manager labelled, and only once the hub serves them: a hub
// without external-dns's CRD costs nothing, and the CRD installed later is found
// within CRDRecheck.
type Endpoints struct {
	client    dynamic.Interface
	discovery discovery.DiscoveryInterface
	clock     clock.PassiveClock
	// enqueue is called with a policy's key and the hostnames its DNSEndpoint
	// published before and after a change.
	enqueue func(key string, hostnames []string)
	// fieldManager names the manager's writes.
	fieldManager string
	// ownerID is the manager's id on its DNSEndpoints (DNSOwnerAnnotation).
	ownerID string
	// namespaces are those whose DNSEndpoints are watched; empty: all.
	namespaces []string

	mu sync.Mutex
	// answered: the API server said once whether it serves DNSEndpoints.
	answered bool
	informer cache.SharedIndexInformer
	// served is called once the informer has started.
	served func()
	// handlers are added to the informer when it starts (AddEventHandler).
	handlers []cache.ResourceEventHandler
	// written is, for each DNSEndpoint, the object and generation of this manager's
	// last write, to tell a change or a deletion by someone else.
	written map[string]ownWrite
	// deletedByOthers are the DNSEndpoints this manager wrote that someone deleted.
	deletedByOthers map[string]bool
}

// ownWrite is what a write of the manager's made: the object and its generation.
type ownWrite struct {
	uid        types.UID
	generation int64
}

// byHostname indexes the DNSEndpoints by the hostnames they publish.
const byHostname = "byHostname"

// NewEndpoints returns the DNSEndpoint reader and writer of the manager whose id is
// ownerID. Run starts its informer once the hub serves DNSEndpoints.
func NewEndpoints(client dynamic.Interface, disc discovery.DiscoveryInterface, clk clock.PassiveClock, fieldManager, ownerID string) *Endpoints {
	return &Endpoints{client: client, discovery: disc, clock: clk, fieldManager: fieldManager, ownerID: ownerID,
		written: map[string]ownWrite{}, deletedByOthers: map[string]bool{},
		enqueue: func(string, []string) {}, served: func() {}}
}

// WatchNamespaces makes Run watch the DNSEndpoints of namespaces alone (an informer
// per namespace), as the manager does with --watch-namespaces; call it before Run.
func (e *Endpoints) WatchNamespaces(namespaces []string) {
	e.namespaces = slices.Clone(namespaces)
}

// SetServed sets the function called once the informer has started: the policies
// that waited for the hub to serve DNSEndpoints read theirs then.
func (e *Endpoints) SetServed(served func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.served = served
}

// discoveryRetry is how soon Run asks again when the API server did not answer
// whether it serves DNSEndpoints.
const discoveryRetry = 2 * time.Second

// Run watches the manager's DNSEndpoints from when the hub serves them: it asks the
// API server at once, then every CRDRecheck while it does not serve them, starts the
// informer when it does, and returns. Until the first answer, Get says ErrNotSynced
// (drains wait); after an answer that they are not served, ErrNotServed.
func (e *Endpoints) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		served, err := e.discover()
		next := CRDRecheck
		switch {
		case err != nil:
			logger.Error(err, "Could not ask the API server whether it serves DNSEndpoints", "retryIn", discoveryRetry)
			next = discoveryRetry
		case served:
			if err = e.start(ctx); err == nil {
				return
			}
			logger.Error(err, "Could not watch DNSEndpoints", "retryIn", discoveryRetry)
			next = discoveryRetry
		default:
			e.mu.Lock()
			e.answered = true
			e.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

// discover asks the API server whether it serves DNSEndpoints.
func (e *Endpoints) discover() (bool, error) {
	resources, err := e.discovery.ServerResourcesForGroupVersion(GroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discover %s: %w", GroupVersion, err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == Resource.Resource }), nil
}

// SetEnqueue sets the function called when a DNSEndpoint of the manager's changes,
// with its policy's "<namespace>/<name>" key and the hostnames it published before
// and after the change (so that the policies that wait for one of them wake).
func (e *Endpoints) SetEnqueue(enqueue func(key string, hostnames []string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.enqueue = enqueue
}

// AddEventHandler makes handler see the changes of the manager's DNSEndpoints, from
// when the informer starts.
func (e *Endpoints) AddEventHandler(handler cache.ResourceEventHandler) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers = append(e.handlers, handler)
	if e.informer != nil {
		_, err := e.informer.AddEventHandler(handler)
		return err
	}
	return nil
}

// Cached returns the cache's copy of a DNSEndpoint of the manager's, if it has one.
func (e *Endpoints) Cached(namespace, name string) (metav1.Object, bool) {
	e.mu.Lock()
	informer := e.informer
	e.mu.Unlock()
	if informer == nil {
		return nil, false
	}
	item, exists, err := informer.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !exists {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	return u, ok
}

// Get returns the DNSEndpoint of the given name, nil when there is none; ErrNotServed
// when the hub does not serve DNSEndpoints, and ErrNotSynced until Run knows whether
// it does and while the cache starts.
// A DNSEndpoint the manager did not label is read from the API server, so that a
// name taken by someone else is found.
func (e *Endpoints) Get(ctx context.Context, namespace, name string) (*Observed, error) {
	e.mu.Lock()
	informer, answered := e.informer, e.answered
	e.mu.Unlock()
	switch {
	case informer == nil && answered:
		return nil, ErrNotServed
	case informer == nil:
		return nil, ErrNotSynced
	case !informer.HasSynced():
		return nil, ErrNotSynced
	}
	key := namespace + "/" + name
	var obj *unstructured.Unstructured
	if item, exists, err := informer.GetStore().GetByKey(key); err == nil && exists {
		obj, _ = item.(*unstructured.Unstructured)
	}
	edited := false
	e.mu.Lock()
	if own, ok := e.written[key]; ok && obj != nil {
		edited = obj.GetUID() == own.uid && obj.GetGeneration() > own.generation
	}
	e.mu.Unlock()
	if obj == nil {
		// Not ours, or not there: only the API server can tell.
		var err error
		obj, err = e.client.Resource(Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read DNSEndpoint %s: %w", key, err)
		}
	}
	o := e.observe(obj)
	o.EditedByOthers = edited
	return o, nil
}

// Publishers returns the keys of the manager's DNSEndpoints that publish hostname, as
// the cache has them; none before the cache started.
func (e *Endpoints) Publishers(hostname string) []string {
	e.mu.Lock()
	informer := e.informer
	e.mu.Unlock()
	if informer == nil {
		return nil
	}
	objs, err := informer.GetIndexer().ByIndex(byHostname, normalizeName(hostname))
	if err != nil {
		return nil
	}
	var out []string
	for _, item := range objs {
		if u, ok := item.(*unstructured.Unstructured); ok && e.observe(u).Ours {
			out = append(out, u.GetNamespace()+"/"+u.GetName())
		}
	}
	slices.Sort(out)
	return out
}

// hostnamesOf returns the names a DNSEndpoint publishes, normalized, sorted, once each.
func hostnamesOf(obj *unstructured.Unstructured) []string {
	if obj == nil {
		return nil
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	var out []string
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			if name, _, _ := unstructured.NestedString(m, "dnsName"); name != "" {
				out = append(out, normalizeName(name))
			}
		}
	}
	return sortedUnique(out)
}

// observe reads what a DNSEndpoint publishes.
func (e *Endpoints) observe(obj *unstructured.Unstructured) *Observed {
	o := &Observed{obj: obj, Generation: obj.GetGeneration()}
	_, labelled := obj.GetLabels()[trafficv1alpha1.PolicyLabel]
	owner, stamped := obj.GetAnnotations()[trafficv1alpha1.DNSOwnerAnnotation]
	// One written by a release without the annotation is the manager's.
	o.Ours = labelled && (!stamped || owner == e.ownerID)
	o.ObservedGeneration, _, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if clusters := obj.GetAnnotations()[trafficv1alpha1.PublishedClustersAnnotation]; clusters != "" {
		o.Publication.Clusters = sortedUnique(strings.Split(clusters, ","))
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		r := Record{}
		r.DNSName, _, _ = unstructured.NestedString(m, "dnsName")
		r.RecordType, _, _ = unstructured.NestedString(m, "recordType")
		r.TTL, _, _ = unstructured.NestedInt64(m, "recordTTL")
		r.Targets, _, _ = unstructured.NestedStringSlice(m, "targets")
		o.Publication.Records = append(o.Publication.Records, r)
	}
	return o
}

// Apply makes the policy's DNSEndpoint publish desired: it creates it, or updates
// current (the manager's own). The update carries the resourceVersion it was made
// from, so a concurrent change fails it with a conflict, and the next sync decides
// again.
func (e *Endpoints) Apply(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, current *Observed, desired Publication) (*Observed, error) {
	client := e.client.Resource(Resource).Namespace(policy.Namespace)
	var obj *unstructured.Unstructured
	if current == nil {
		obj = &unstructured.Unstructured{}
		obj.SetAPIVersion(GroupVersion.String())
		obj.SetKind(Kind)
		obj.SetNamespace(policy.Namespace)
		obj.SetName(policy.Name)
		obj.SetLabels(map[string]string{trafficv1alpha1.PolicyLabel: policy.Name})
	} else {
		obj = current.obj.DeepCopy()
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[trafficv1alpha1.PublishedClustersAnnotation] = strings.Join(desired.Clusters, ",")
	annotations[trafficv1alpha1.DNSOwnerAnnotation] = e.ownerID
	obj.SetAnnotations(annotations)
	endpoints := make([]any, 0, len(desired.Records))
	for _, r := range desired.Records {
		targets := make([]any, 0, len(r.Targets))
		for _, t := range r.Targets {
			targets = append(targets, t)
		}
		endpoints = append(endpoints, map[string]any{
			"dnsName": r.DNSName, "recordType": r.RecordType, "recordTTL": r.TTL, "targets": targets,
		})
	}
	if err := unstructured.SetNestedSlice(obj.Object, endpoints, "spec", "endpoints"); err != nil {
		return nil, fmt.Errorf("build DNSEndpoint %s/%s: %w", policy.Namespace, policy.Name, err)
	}
	var written *unstructured.Unstructured
	var err error
	if current == nil {
		written, err = client.Create(ctx, obj, metav1.CreateOptions{FieldManager: e.fieldManager})
	} else {
		written, err = client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: e.fieldManager})
	}
	if err != nil {
		return nil, fmt.Errorf("write DNSEndpoint %s/%s: %w", policy.Namespace, policy.Name, err)
	}
	key := policy.Namespace + "/" + policy.Name
	e.mu.Lock()
	e.written[key] = ownWrite{uid: written.GetUID(), generation: written.GetGeneration()}
	recreated := current == nil && e.deletedByOthers[key]
	delete(e.deletedByOthers, key)
	e.mu.Unlock()
	o := e.observe(written)
	o.RecreatedAfterDelete = recreated
	return o, nil
}

// Forget drops what the manager remembers of a policy's DNSEndpoint.
func (e *Endpoints) Forget(namespace, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.written, namespace+"/"+name)
	delete(e.deletedByOthers, namespace+"/"+name)
}

// deleted notes that a DNSEndpoint was deleted: one this manager wrote was deleted by
// someone else (the manager never deletes one).
func (e *Endpoints) deleted(obj *unstructured.Unstructured) {
	key := obj.GetNamespace() + "/" + obj.GetName()
	e.mu.Lock()
	defer e.mu.Unlock()
	if own, ok := e.written[key]; ok && own.uid == obj.GetUID() {
		delete(e.written, key)
		e.deletedByOthers[key] = true
	}
}

// start starts the DNSEndpoint informer, with the handlers added so far.
func (e *Endpoints) start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = trafficv1alpha1.PolicyLabel }
	var factories []dynamicinformer.DynamicSharedInformerFactory
	informer := nsinformer.ForNamespaces(e.namespaces, func(namespace string) cache.SharedIndexInformer {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(e.client, 0, namespace, tweak)
		factories = append(factories, f)
		return f.ForResource(Resource).Informer()
	})
	if err := informer.AddIndexers(cache.Indexers{byHostname: func(obj any) ([]string, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			return hostnamesOf(u), nil
		}
		return nil, nil
	}}); err != nil {
		return fmt.Errorf("index DNSEndpoints: %w", err)
	}
	asObject := func(obj any) *unstructured.Unstructured {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, _ := obj.(*unstructured.Unstructured)
		return u
	}
	notify := func(u *unstructured.Unstructured, hostnames []string) {
		if u == nil {
			return
		}
		if policy := u.GetLabels()[trafficv1alpha1.PolicyLabel]; policy != "" {
			e.mu.Lock()
			enqueue := e.enqueue
			e.mu.Unlock()
			enqueue(u.GetNamespace()+"/"+policy, hostnames)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			u := asObject(obj)
			notify(u, hostnamesOf(u))
		},
		UpdateFunc: func(old, obj any) {
			u := asObject(obj)
			notify(u, sortedUnique(append(hostnamesOf(asObject(old)), hostnamesOf(u)...)))
		},
		DeleteFunc: func(obj any) {
			if u := asObject(obj); u != nil {
				e.deleted(u)
				notify(u, hostnamesOf(u))
			}
		},
	}); err != nil {
		return fmt.Errorf("watch DNSEndpoints: %w", err)
	}
	for _, h := range e.handlers {
		if _, err := informer.AddEventHandler(h); err != nil {
			return fmt.Errorf("watch DNSEndpoints: %w", err)
		}
	}
	klog.FromContext(ctx).Info("The hub serves DNSEndpoints: watching those of the policies with spec.dns", "resource", Resource.String())
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	e.informer, e.answered = informer, true
	go e.served()
	return nil
}
