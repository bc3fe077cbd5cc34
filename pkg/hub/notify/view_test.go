// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func policyAt(rv, notified string) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{
		Name: "p", Namespace: "ns", ResourceVersion: rv, Annotations: map[string]string{"notified": notified}}}
}

// notifiedOf reads the annotation of the policy the view hands out for ns/p.
func notifiedOf(t *testing.T, v *engineView) (string, bool) {
	t.Helper()
	obj, exists, err := v.GetIndexer().GetByKey("ns/p")
	if err != nil {
		t.Fatal(err)
	}
	if !exists {
		return "", false
	}
	return obj.(metav1.Object).GetAnnotations()["notified"], true
}

// TestEngineViewKeepsItsWrites: the policy the engine annotated is read back until the
// manager's cache holds it or a newer one, and never enters that cache.
func TestEngineViewKeepsItsWrites(t *testing.T) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &trafficv1alpha1.TrafficMigrationPolicy{}, 0, cache.Indexers{})
	shared := informer.GetIndexer()
	if err := shared.Add(policyAt("10", "")); err != nil {
		t.Fatal(err)
	}
	v := newEngineView(informer)

	// The engine stores its patch's result, as the API server returns it.
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(policyAt("11", "sent"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.GetStore().Update(&unstructured.Unstructured{Object: content}); err != nil {
		t.Fatal(err)
	}
	if got, _ := notifiedOf(t, v); got != "sent" {
		t.Errorf("while the cache is at 10: notified %q, want the engine's write", got)
	}
	cached, _, _ := shared.GetByKey("ns/p")
	if p, ok := cached.(*trafficv1alpha1.TrafficMigrationPolicy); !ok || p.ResourceVersion != "10" {
		t.Errorf("the manager's cache holds %#v, want its own policy at 10", cached)
	}

	// The watch brings a newer policy: the cache wins, and the write is forgotten.
	if err := shared.Update(policyAt("12", "sent, then changed")); err != nil {
		t.Fatal(err)
	}
	if got, _ := notifiedOf(t, v); got != "sent, then changed" {
		t.Errorf("with the cache at 12: notified %q, want the cache's", got)
	}
	if n := len(v.annotated); n != 0 {
		t.Errorf("%d writes kept after the cache caught up", n)
	}

	// A policy deleted is gone, whatever the engine wrote.
	if err := v.GetStore().Update(policyAt("13", "again")); err != nil {
		t.Fatal(err)
	}
	if err := shared.Delete(policyAt("12", "")); err != nil {
		t.Fatal(err)
	}
	if _, exists := notifiedOf(t, v); exists {
		t.Error("a deleted policy is still handed to the engine")
	}
	if err := v.GetStore().Update(&metav1.PartialObjectMetadata{}); err == nil {
		t.Error("the view stored an object that is not a policy")
	}
}

// TestEngineViewHandlers: the engine's handler gets every policy on a replay, and
// nothing once the engine has stopped.
func TestEngineViewHandlers(t *testing.T) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &trafficv1alpha1.TrafficMigrationPolicy{}, 0, cache.Indexers{})
	if err := informer.GetIndexer().Add(policyAt("1", "")); err != nil {
		t.Fatal(err)
	}
	v := newEngineView(informer)
	var updates int
	if _, err := v.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { updates++ }}); err != nil {
		t.Fatal(err)
	}
	v.replay()
	if updates != 1 {
		t.Errorf("a replay of one policy made %d updates", updates)
	}
	v.stop()
	v.replay()
	if updates != 1 {
		t.Errorf("after stop, a replay made %d more updates", updates-1)
	}
}
