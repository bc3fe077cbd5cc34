// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// expectationTTL is how long a sync waits for a cache to show a write: a write that
// the cache never shows (an object this controller created and someone deleted before
// the watch delivered it, when the deletion's event came first) stops being awaited
// then. Watches deliver in well under a second; a cache that lags longer than this has
// bigger problems.
const expectationTTL = time.Minute

// kind is one of the resources the controller writes.
type kind int

const (
	kindPolicy kind = iota
	kindPlacement
	kindDecision
	kindDNSEndpoint
)

// objectRef names an object the controller wrote.
type objectRef struct {
	kind            kind
	namespace, name string
}

// expectation is one of the controller's writes that a cache has yet to show: the
// object with uid at resourceVersion version or newer, or its deletion.
type expectation struct {
	policy  string // the key of the policy whose sync wrote it
	uid     types.UID
	version string
	deleted bool
	at      time.Time
}

// expectations are the controller's own writes that its informers' caches have yet to
// show, as Kubernetes' ControllerExpectations keeps them: a sync waits until the caches
// show every write of the policy's previous syncs before it reads them. The policy, the
// proxy Placement, the proxy's PlacementDecisions and the DNSEndpoint come from four
// informers fed by separate watches, and one may deliver the previous sync's writes before another: a
// sync that read the new policy status (a cluster Removed) with the old decisions (the
// cluster still listed) would start draining the removed cluster again; one that read
// the old status with the new decisions would act on drain state that the previous
// sync reset. A sync that finds a cache behind returns: the watch event that brings
// the write wakes the policy (observe), and expectationTTL bounds the wait.
//
// Versions are compared with apimachinery's resourceversion.CompareResourceVersion;
// when one is not a version it can compare, the cache is taken as caught up.
type expectations struct {
	clock clock.PassiveClock
	// wake enqueues a policy's key.
	wake func(key string)

	mu       sync.Mutex
	byObject map[objectRef]expectation
	byPolicy map[string]map[objectRef]struct{}
}

func newExpectations(clk clock.PassiveClock) *expectations {
	return &expectations{clock: clk, wake: func(string) {}, byObject: map[objectRef]expectation{}, byPolicy: map[string]map[objectRef]struct{}{}}
}

// wrote records that policy's sync created, updated or patched obj, as the API server
// returned it.
func (e *expectations) wrote(policy string, k kind, obj metav1.Object) {
	e.expect(policy, objectRef{k, obj.GetNamespace(), obj.GetName()}, expectation{uid: obj.GetUID(), version: obj.GetResourceVersion()})
}

// deleted records that policy's sync deleted obj, as it read it.
func (e *expectations) deleted(policy string, k kind, obj metav1.Object) {
	e.expect(policy, objectRef{k, obj.GetNamespace(), obj.GetName()}, expectation{uid: obj.GetUID(), version: obj.GetResourceVersion(), deleted: true})
}

func (e *expectations) expect(policy string, ref objectRef, exp expectation) {
	exp.policy, exp.at = policy, e.clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if prev, ok := e.byObject[ref]; ok && prev.policy != policy {
		delete(e.byPolicy[prev.policy], ref)
	}
	e.byObject[ref] = exp
	refs := e.byPolicy[policy]
	if refs == nil {
		refs = map[objectRef]struct{}{}
		e.byPolicy[policy] = refs
	}
	refs[ref] = struct{}{}
}

// pending returns how long policy's sync must still wait for its writes to show in the
// caches that lookup reads (zero: it may read them now), and forgets the writes they
// show. lookup returns the cache's copy of an object, if it has one.
func (e *expectations) pending(policy string, lookup func(objectRef) (metav1.Object, bool)) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	var wait time.Duration
	for ref := range e.byPolicy[policy] {
		exp := e.byObject[ref]
		cached, ok := lookup(ref)
		if left := expectationTTL - now.Sub(exp.at); left > 0 && !exp.shownBy(cached, ok) {
			wait = max(wait, left)
			continue
		}
		e.drop(ref)
	}
	return wait
}

// observe forgets the write that a watch event shows, and wakes the policy whose sync
// made it. obj is the object as the event brings it; gone is set for a deletion.
func (e *expectations) observe(k kind, obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, gone = t.Obj, true
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	ref := objectRef{k, o.GetNamespace(), o.GetName()}
	e.mu.Lock()
	exp, expected := e.byObject[ref]
	shown := expected && (exp.shownBy(o, true) || gone && o.GetUID() == exp.uid)
	if shown {
		e.drop(ref)
	}
	e.mu.Unlock()
	if shown {
		e.wake(exp.policy)
	}
}

// handler is the event handler that feeds observe from an informer of kind k.
func (e *expectations) handler(k kind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { e.observe(k, obj, false) },
		UpdateFunc: func(_, obj any) { e.observe(k, obj, false) },
		DeleteFunc: func(obj any) { e.observe(k, obj, true) },
	}
}

// forget drops what is awaited of a deleted policy's writes.
func (e *expectations) forget(policy string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for ref := range e.byPolicy[policy] {
		delete(e.byObject, ref)
	}
	delete(e.byPolicy, policy)
}

// drop forgets one write. Must be called with mu held.
func (e *expectations) drop(ref objectRef) {
	exp := e.byObject[ref]
	delete(e.byObject, ref)
	if refs := e.byPolicy[exp.policy]; refs != nil {
		delete(refs, ref)
		if len(refs) == 0 {
			delete(e.byPolicy, exp.policy)
		}
	}
}

// shownBy reports whether a cache whose copy of the object is cached (ok false: it has
// none) shows the write: a write, once it holds the object at its version or newer, or
// another object of the name (ours was replaced); a deletion, once it holds no object
// of the name, or a newer one of another uid.
func (exp expectation) shownBy(cached metav1.Object, ok bool) bool {
	if !ok {
		return exp.deleted
	}
	c, err := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), exp.version)
	if err != nil {
		return true
	}
	if exp.deleted {
		return cached.GetUID() != exp.uid && c > 0
	}
	return cached.GetUID() != exp.uid || c >= 0
}

// lookupCaches returns, for pending, the controller's cached copy of an object it
// writes.
func (c *Controller) lookupCaches(ref objectRef) (metav1.Object, bool) {
	var obj runtime.Object
	var err error
	switch ref.kind {
	case kindPolicy:
		obj, err = c.policies.TrafficMigrationPolicies(ref.namespace).Get(ref.name)
	case kindPlacement:
		obj, err = c.placements.Placements(ref.namespace).Get(ref.name)
	case kindDNSEndpoint:
		if c.endpoints == nil {
			return nil, false
		}
		return c.endpoints.Cached(ref.namespace, ref.name)
	case kindDecision:
		var item any
		var exists bool
		item, exists, err = c.decisionIndex.GetByKey(ref.namespace + "/" + ref.name)
		if err != nil || !exists {
			return nil, false
		}
		obj, _ = item.(runtime.Object)
	}
	if err != nil || obj == nil {
		return nil, false
	}
	o, ok := obj.(metav1.Object)
	return o, ok
}
