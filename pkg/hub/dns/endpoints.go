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
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
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
	// Endpoint is what it publishes.
	Endpoint Endpoint
	// Generation is its metadata.generation.
	Generation int64
	// ObservedGeneration is its status.observedGeneration, written by external-dns.
	ObservedGeneration int64
	// Ours is false when the manager did not create it (it lacks the policy label).
	Ours bool
	// obj is the object, for updates.
	obj *unstructured.Unstructured
}

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
	// enqueue is called with a policy's key when its DNSEndpoint changes.
	enqueue func(key string)
	// fieldManager names the manager's writes.
	fieldManager string

	mu          sync.Mutex
	served      bool
	lastCheck   time.Time
	informer    cache.SharedIndexInformer
	lastWritten map[string]*unstructured.Unstructured
	stopCtx     context.Context
}

// NewEndpoints returns the DNSEndpoint reader and writer. enqueue is called with a
// policy's "<namespace>/<name>" key when its DNSEndpoint changes; it can be set later
// with SetEnqueue. The informer starts, once the hub serves DNSEndpoints, with ctx.
func NewEndpoints(ctx context.Context, client dynamic.Interface, disc discovery.DiscoveryInterface, clk clock.PassiveClock, fieldManager string) *Endpoints {
	return &Endpoints{client: client, discovery: disc, clock: clk, fieldManager: fieldManager,
		lastWritten: map[string]*unstructured.Unstructured{}, stopCtx: ctx, enqueue: func(string) {}}
}

// SetEnqueue sets the function called with a policy's key when its DNSEndpoint changes.
func (e *Endpoints) SetEnqueue(enqueue func(key string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.enqueue = enqueue
}

// Get returns the DNSEndpoint of the given name, nil when there is none; ErrNotServed
// when the hub does not serve DNSEndpoints and ErrNotSynced while the cache starts.
// A DNSEndpoint the manager did not label is read from the API server, so that a
// name taken by someone else is found.
func (e *Endpoints) Get(ctx context.Context, namespace, name string) (*Observed, error) {
	informer, err := e.ensureInformer(ctx)
	if err != nil {
		return nil, err
	}
	if !informer.HasSynced() {
		return nil, ErrNotSynced
	}
	key := namespace + "/" + name
	var obj *unstructured.Unstructured
	if item, exists, err := informer.GetStore().GetByKey(key); err == nil && exists {
		obj, _ = item.(*unstructured.Unstructured)
	}
	e.mu.Lock()
	if w := e.lastWritten[key]; w != nil {
		if obj == nil || (obj.GetUID() == w.GetUID() && obj.GetGeneration() < w.GetGeneration()) {
			obj = w // the cache is behind this manager's own write
		} else {
			delete(e.lastWritten, key)
		}
	}
	e.mu.Unlock()
	if obj == nil {
		// Not ours, or not there: only the API server can tell.
		obj, err = e.client.Resource(Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read DNSEndpoint %s: %w", key, err)
		}
	}
	return observe(obj), nil
}

// observe reads what a DNSEndpoint publishes.
func observe(obj *unstructured.Unstructured) *Observed {
	o := &Observed{obj: obj, Generation: obj.GetGeneration()}
	_, o.Ours = obj.GetLabels()[trafficv1alpha1.PolicyLabel]
	o.ObservedGeneration, _, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if clusters := obj.GetAnnotations()[trafficv1alpha1.PublishedClustersAnnotation]; clusters != "" {
		o.Endpoint.Clusters = sortedUnique(strings.Split(clusters, ","))
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
		o.Endpoint.Records = append(o.Endpoint.Records, r)
	}
	return o
}

// Apply makes the policy's DNSEndpoint publish desired: it creates it, or updates
// current (the manager's own). The update carries the resourceVersion it was made
// from, so a concurrent change fails it with a conflict, and the next sync decides
// again.
func (e *Endpoints) Apply(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, current *Observed, desired Endpoint) (*Observed, error) {
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
	e.mu.Lock()
	e.lastWritten[policy.Namespace+"/"+policy.Name] = written
	e.mu.Unlock()
	return observe(written), nil
}

// Forget drops what the manager remembers of a policy's DNSEndpoint.
func (e *Endpoints) Forget(namespace, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.lastWritten, namespace+"/"+name)
}

// ensureInformer starts the DNSEndpoint informer once the hub serves DNSEndpoints,
// asking at most every CRDRecheck while it does not.
func (e *Endpoints) ensureInformer(ctx context.Context) (cache.SharedIndexInformer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.informer != nil {
		return e.informer, nil
	}
	now := e.clock.Now()
	if !e.lastCheck.IsZero() && now.Sub(e.lastCheck) < CRDRecheck {
		return nil, ErrNotServed
	}
	e.lastCheck = now
	resources, err := e.discovery.ServerResourcesForGroupVersion(GroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return nil, ErrNotServed
	case err != nil:
		e.lastCheck = time.Time{} // not an answer: ask again next time
		return nil, fmt.Errorf("discover %s: %w", GroupVersion, err)
	}
	if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == Resource.Resource }) {
		return nil, ErrNotServed
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(e.client, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = trafficv1alpha1.PolicyLabel
	})
	informer := factory.ForResource(Resource).Informer()
	notify := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if policy := u.GetLabels()[trafficv1alpha1.PolicyLabel]; policy != "" {
			e.mu.Lock()
			enqueue := e.enqueue
			e.mu.Unlock()
			enqueue(u.GetNamespace() + "/" + policy)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}); err != nil {
		return nil, fmt.Errorf("watch DNSEndpoints: %w", err)
	}
	klog.FromContext(ctx).Info("The hub serves DNSEndpoints: watching those of the policies with spec.dns", "resource", Resource.String())
	factory.Start(e.stopCtx.Done())
	e.informer = informer
	return informer, nil
}
