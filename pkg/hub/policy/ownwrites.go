// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"cmp"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// ownWriteTTL is how long a write is remembered when the cache never shows it: an
// object that this controller created and someone deleted before the cache saw it
// looks, in the cache, like one whose creation is still on its way. Watches deliver
// in well under a second; a cache that lags longer than this has bigger problems.
const ownWriteTTL = time.Minute

// written are the controller's own writes of the objects a sync decides from. The
// policy, the proxy Placement and the proxy's PlacementDecisions come from three
// informers fed by separate watches, and one may deliver the previous sync's writes
// before another: a sync that read the new policy status (a cluster Removed) with the
// old decisions (the cluster still listed) would start draining the removed cluster
// again; one that read the old status with the new decisions would act on drain state
// that the previous sync reset, and its decision writes come before the status write
// that would fail on the old resourceVersion. Reading these objects through written,
// a sync sees each as at least as new as the controller last wrote it.
type written struct {
	policies   *ownWrites[*trafficv1alpha1.TrafficMigrationPolicy]
	placements *ownWrites[*clusterv1beta1.Placement]
	decisions  *ownWrites[*clusterv1beta1.PlacementDecision]
}

func newWritten(clk clock.PassiveClock) written {
	return written{
		policies:   newOwnWrites[*trafficv1alpha1.TrafficMigrationPolicy](clk),
		placements: newOwnWrites[*clusterv1beta1.Placement](clk),
		decisions:  newOwnWrites[*clusterv1beta1.PlacementDecision](clk),
	}
}

// object is an API object as clients and listers return it.
type object interface {
	metav1.Object
	runtime.Object
}

// ownWrites remembers, for the objects of one resource, the controller's last write of
// each (the object the API server returned, or its deletion) until the informer's
// cache has caught up with it, and reads the cache's copies through it: the newer of
// the cache's copy and the write, without the objects deleted and with those created.
//
// It is client-go's MutationCache (tools/cache) with two differences the controller
// needs: it records deletions, and it forgets a write only once the cache has caught
// up or after ownWriteTTL, never because a hundred later writes paged it out (a fleet's
// policies make thousands of writes at once when a Placement changes for all of them).
// Like the MutationCache it orders copies by resourceVersion as an integer, which
// kube-apiserver's are (etcd revisions, growing with every write); when a version is
// not one, the cache's copy wins, as if nothing were remembered.
//
// Objects it returns are shared: copy before changing them, as with a cache's.
type ownWrites[T object] struct {
	clock clock.PassiveClock

	mu        sync.Mutex
	writes    map[string]ownWrite[T]
	lastSweep time.Time
}

// ownWrite is one remembered write: an object as written, or a deletion.
type ownWrite[T object] struct {
	obj T
	// deleted is set for a deletion of the object with uid at resourceVersion version.
	deleted bool
	uid     types.UID
	version string
	// at is when it was written.
	at time.Time
}

func newOwnWrites[T object](clk clock.PassiveClock) *ownWrites[T] {
	return &ownWrites[T]{clock: clk, writes: map[string]ownWrite[T]{}, lastSweep: clk.Now()}
}

func keyOf(namespace, name string) string {
	return namespace + "/" + name
}

// wrote remembers obj as the API server returned it after a create, an update or a
// patch.
func (w *ownWrites[T]) wrote(obj T) {
	obj.SetManagedFields(nil) // as the caches hold them
	key := keyOf(obj.GetNamespace(), obj.GetName())
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.sweep(now)
	if prev, ok := w.writes[key]; ok && !prev.deleted && isNewer(prev.obj.GetResourceVersion(), obj.GetResourceVersion()) {
		return
	}
	w.writes[key] = ownWrite[T]{obj: obj, at: now}
}

// deleted remembers that the object with uid, read at resourceVersion version, was
// deleted.
func (w *ownWrites[T]) deleted(namespace, name string, uid types.UID, version string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.sweep(now)
	w.writes[keyOf(namespace, name)] = ownWrite[T]{deleted: true, uid: uid, version: version, at: now}
}

// forget drops what is remembered of an object.
func (w *ownWrites[T]) forget(namespace, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.writes, keyOf(namespace, name))
}

// get returns the object as the controller last knows it, given the cache's copy (ok
// is false when the cache has none): the newer of the cache's copy and the last write,
// nothing when it was deleted and the cache still has it, and the written object when
// it was created and the cache does not have it yet.
func (w *ownWrites[T]) get(namespace, name string, cached T, ok bool) (T, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resolve(keyOf(namespace, name), cached, ok, w.clock.Now())
}

// list returns the objects as the controller last knows them, given the cache's copies
// of those that match: each resolved as get does, and the objects written that match
// but that the cache does not have yet.
func (w *ownWrites[T]) list(cached []T, match func(T) bool) []T {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	out := make([]T, 0, len(cached))
	seen := make(map[string]bool, len(cached))
	for _, obj := range cached {
		key := keyOf(obj.GetNamespace(), obj.GetName())
		seen[key] = true
		if obj, ok := w.resolve(key, obj, true, now); ok {
			out = append(out, obj)
		}
	}
	for key, write := range w.writes {
		if seen[key] || write.deleted || !match(write.obj) {
			continue
		}
		var none T
		if obj, ok := w.resolve(key, none, false, now); ok {
			out = append(out, obj)
		}
	}
	return out
}

// resolve picks between the cache's copy of key and its last write, and forgets the
// write once the cache has caught up with it. Must be called with mu held.
func (w *ownWrites[T]) resolve(key string, cached T, ok bool, now time.Time) (T, bool) {
	write, found := w.writes[key]
	if !found {
		return cached, ok
	}
	if now.Sub(write.at) > ownWriteTTL {
		delete(w.writes, key)
		return cached, ok
	}
	var none T
	switch {
	case write.deleted && ok:
		// The cache has not seen the deletion while it holds the deleted object, or
		// an older one of the same name; a newer one has a newer version.
		if c, known := compareVersions(cached.GetResourceVersion(), write.version); cached.GetUID() == write.uid || known && c <= 0 {
			return none, false
		}
	case write.deleted:
	case !ok:
		// Created and not in the cache yet; or deleted by someone else since, which
		// a missing copy cannot tell apart: then it is forgotten after ownWriteTTL.
		return write.obj, true
	case isNewer(write.obj.GetResourceVersion(), cached.GetResourceVersion()):
		return write.obj, true
	}
	delete(w.writes, key)
	return cached, ok
}

// sweep forgets the writes older than ownWriteTTL, once in a while, so that writes
// that are never read again (a deleted policy's proxy) do not pile up. Must be called
// with mu held.
func (w *ownWrites[T]) sweep(now time.Time) {
	if now.Sub(w.lastSweep) < ownWriteTTL {
		return
	}
	w.lastSweep = now
	for key, write := range w.writes {
		if now.Sub(write.at) > ownWriteTTL {
			delete(w.writes, key)
		}
	}
}

// compareVersions compares two resourceVersions as integers: -1, 0 or +1 as a is
// older than, the same as or newer than b. known is false when either is not an
// integer.
func compareVersions(a, b string) (c int, known bool) {
	va, errA := strconv.ParseUint(a, 10, 64)
	vb, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return 0, false
	}
	return cmp.Compare(va, vb), true
}

// isNewer reports whether resourceVersion a is known to be newer than b.
func isNewer(a, b string) bool {
	c, known := compareVersions(a, b)
	return known && c > 0
}
