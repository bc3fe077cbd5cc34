// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
)

// TestExistingClusters: the decision learns which of the policy's own clusters exist,
// and nothing of the rest of the fleet; unknown while the ManagedClusters are not synced.
// The cache holds whole ManagedClusters (with the add-on framework) or their metadata
// alone (the policy controllers' own process): either counts.
func TestExistingClusters(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, name := range []string{"real-1", "elsewhere-1"} {
		if err := indexer.Add(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"proxy-1", "row-1", "elsewhere-2"} {
		if err := indexer.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	synced := false
	c := &Controller{clusters: indexer, clusterSynced: func() bool { return synced }}
	r := caches{c}
	in := &decision.Input{
		Real:     []decision.Group{{Clusters: []string{"real-1", "real-gone"}}},
		Proxy:    []decision.Group{{Clusters: []string{"proxy-1", "real-1"}}, {Index: 1, Clusters: []string{"proxy-gone"}}},
		Previous: []trafficv1alpha1.ClusterStatus{{Name: "row-1"}, {Name: "row-gone"}},
	}
	if got := gather.ExistingClusters(context.Background(), r, in); got != nil {
		t.Fatalf("before the ManagedClusters are synced: got %v, want nil (not known)", sets.List(got))
	}
	synced = true
	got := gather.ExistingClusters(context.Background(), r, in)
	want := sets.New("real-1", "proxy-1", "row-1")
	if !got.Equal(want) {
		t.Fatalf("existing clusters: got %v, want %v", sets.List(got), sets.List(want))
	}
	if ok, err := r.ClusterExists(context.Background(), "real-gone"); ok || err != nil {
		t.Errorf("a cluster that is gone: exists %v, error %v; want false, none", ok, err)
	}
}
