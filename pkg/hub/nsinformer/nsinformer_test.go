package nsinformer

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

func configMap(ns, name, color string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"color": color}}}
}

// TestMerge: the merged informer lists, gets, indexes and hands on the events of the
// namespaces it merges, and of no other.
func TestMerge(t *testing.T) {
	client := fake.NewClientset(configMap("a", "one", "red"), configMap("b", "two", "red"), configMap("c", "three", "red"))
	informers := map[string]cache.SharedIndexInformer{}
	var factories []kubeinformers.SharedInformerFactory
	for _, ns := range []string{"a", "b"} {
		f := kubeinformers.NewSharedInformerFactoryWithOptions(client, 0, kubeinformers.WithNamespace(ns))
		informers[ns] = f.Core().V1().ConfigMaps().Informer()
		factories = append(factories, f)
	}
	m := Merge(informers)
	if err := m.AddIndexers(cache.Indexers{"color": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Labels["color"]}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	reg, err := m.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, obj.(*corev1.ConfigMap).Namespace+"/"+obj.(*corev1.ConfigMap).Name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range factories {
		f.Start(t.Context().Done())
	}
	if !cache.WaitForCacheSync(t.Context().Done(), m.HasSynced, reg.HasSynced) {
		t.Fatal("the merged informer did not sync")
	}

	if got := m.GetIndexer().ListKeys(); !slices.Equal(sorted(got), []string{"a/one", "b/two"}) {
		t.Errorf("keys %v, want a/one and b/two only", got)
	}
	if _, ok, err := m.GetIndexer().GetByKey("b/two"); !ok || err != nil {
		t.Errorf("b/two: %t, %v", ok, err)
	}
	if _, ok, _ := m.GetIndexer().GetByKey("c/three"); ok {
		t.Error("c/three, of a namespace not merged, was found")
	}
	red, err := m.GetIndexer().ByIndex("color", "red")
	if err != nil || len(red) != 2 {
		t.Errorf("by color: %d objects, %v; want 2", len(red), err)
	}
	inB, err := m.GetIndexer().ByIndex(cache.NamespaceIndex, "b")
	if err != nil || len(inB) != 1 {
		t.Errorf("namespace b: %d objects, %v; want 1", len(inB), err)
	}
	if got := m.GetIndexer().ListIndexFuncValues("color"); !slices.Equal(got, []string{"red"}) {
		t.Errorf("colors %v, want [red] once", got)
	}
	if err := m.GetStore().Add(configMap("a", "x", "blue")); err == nil {
		t.Error("the merged store took a write")
	}

	// A later object reaches the handler and the indexes; one in c does not.
	if _, err := client.CoreV1().ConfigMaps("c").Create(t.Context(), configMap("c", "four", "blue"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps("a").Create(t.Context(), configMap("a", "five", "blue"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, "a/five"), nil
	})
	if err != nil {
		t.Fatalf("a/five never reached the handler: %v", err)
	}
	mu.Lock()
	got := sorted(slices.Clone(seen))
	mu.Unlock()
	if !slices.Equal(got, []string{"a/five", "a/one", "b/two"}) {
		t.Errorf("the handler saw %v, want a/five, a/one and b/two: c is not merged", got)
	}
	if blue, _ := m.GetIndexer().ByIndex("color", "blue"); len(blue) != 1 {
		t.Errorf("by color blue: %d objects, want a/five alone", len(blue))
	}
	if err := m.RemoveEventHandler(reg); err != nil {
		t.Errorf("remove the handler: %v", err)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// TestForNamespaces: no namespaces is one informer of every namespace, as given;
// some are one informer of each, merged.
func TestForNamespaces(t *testing.T) {
	client := fake.NewClientset()
	var asked []string
	newInformer := func(ns string) cache.SharedIndexInformer {
		asked = append(asked, ns)
		return kubeinformers.NewSharedInformerFactoryWithOptions(client, 0, kubeinformers.WithNamespace(ns)).Core().V1().ConfigMaps().Informer()
	}
	if _, isMerged := ForNamespaces(nil, newInformer).(*merged); isMerged || !slices.Equal(asked, []string{metav1.NamespaceAll}) {
		t.Errorf("no namespaces: merged %t, asked for %q; want the informer of every namespace", isMerged, asked)
	}
	asked = nil
	if _, isMerged := ForNamespaces([]string{"a", "b"}, newInformer).(*merged); !isMerged || !slices.Equal(sorted(asked), []string{"a", "b"}) {
		t.Errorf("namespaces a and b: merged %t, asked for %q", isMerged, asked)
	}
}
