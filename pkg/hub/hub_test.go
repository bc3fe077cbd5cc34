// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hub

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns1/events":                                                                          "events",
		"/apis/events.k8s.io/v1/namespaces/ns1/events":                                                           "events",
		"/apis/cluster.open-cluster-management.io/v1beta1/namespaces/ns1/placementdecisions":                     "placementdecisions",
		"/apis/cluster.open-cluster-management.io/v1beta1/namespaces/ns1/placementdecisions/p-decision-1/status": "placementdecisions/status",
		"/apis/traffic.open-cluster-management.io/v1alpha1/namespaces/ns1/trafficmigrationpolicies/p1":           "trafficmigrationpolicies",
		"/apis/cluster.open-cluster-management.io/v1/managedclusters/c1":                                         "managedclusters",
		"/api/v1/namespaces/ns1":                               "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/ns1/leases/l": "leases",
		"/healthz": "other",
		"/api/v1":  "other",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestTrimForCache: the cache keeps of a ManagedCluster what the manager and the
// add-on framework read, and drops the rest, and managedFields of everything.
func TestTrimForCache(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	available := metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", LastTransitionTime: at}
	managed := []metav1.ManagedFieldsEntry{{Manager: "registration", Operation: metav1.ManagedFieldsOperationUpdate}}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"site": "one"}, Annotations: map[string]string{"a": "b"}, ManagedFields: managed},
		Spec: clusterv1.ManagedClusterSpec{
			HubAcceptsClient:            true,
			Taints:                      []clusterv1.Taint{{Key: "k", Effect: clusterv1.TaintEffectNoSelect}},
			ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://c1:6443", CABundle: []byte("ca")}},
		},
		Status: clusterv1.ManagedClusterStatus{
			Conditions:    []metav1.Condition{available},
			Capacity:      clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("8")},
			Allocatable:   clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("7")},
			Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"},
			ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "x"}},
		},
	}
	want := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"site": "one"}, Annotations: map[string]string{"a": "b"}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, Taints: []clusterv1.Taint{{Key: "k", Effect: clusterv1.TaintEffectNoSelect}}},
		Status: clusterv1.ManagedClusterStatus{
			Conditions: []metav1.Condition{available},
			Version:    clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"},
		},
	}
	got, err := trimForCache(mc)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed ManagedCluster:\n%+v\nwant\n%+v", got, want)
	}

	d := &clusterv1beta1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{Name: "p-decision-1", ManagedFields: managed},
		Status:     clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}}},
	}
	got, err = trimForCache(d)
	if err != nil {
		t.Fatal(err)
	}
	if gd := got.(*clusterv1beta1.PlacementDecision); gd.ManagedFields != nil || len(gd.Status.Decisions) != 1 {
		t.Errorf("a PlacementDecision must lose only its managedFields: %+v", gd)
	}
}

// TestOptionsValidate: each bad flag of the hub's limits is refused by name, and the
// defaults set no limit but gate's.
func TestOptionsValidate(t *testing.T) {
	if err := NewOptions().Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
	l, err := NewOptions().limits()
	if err != nil || l.Ceiling != nil || l.MaxAnswerBytes != 1<<20 || l.MaxSeries != 100 {
		t.Fatalf("default limits %+v, %v", l, err)
	}
	for name, tc := range map[string]struct {
		edit func(*Options)
		want string
	}{
		"allowlist":   {func(o *Options) { o.PrometheusAllowlist = []string{"10.0.0.0/33"} }, "--prometheus-allowlist: "},
		"answer":      {func(o *Options) { o.MaxAnswerBytes = 0 }, "--prometheus-max-answer-bytes must be at least 1, not 0"},
		"series":      {func(o *Options) { o.MaxSeries = -1 }, "--prometheus-max-series must be at least 1, not -1"},
		"ceiling":     {func(o *Options) { o.MaxDrainDuration = -time.Second }, "--max-drain-duration must not be negative"},
		"action":      {func(o *Options) { o.OnMaxDrainDuration = "Later" }, `--on-max-drain-duration must be Hold or Remove, not "Later"`},
		"controllers": {func(o *Options) { o.Controllers = "addon" }, `--controllers must be all, addon-manager or policy, not "addon"`},
		"lease":       {func(o *Options) { o.HandoverLease.Name = "Lease!" }, `--handover-lease name "Lease!" is not a Lease name`},
		"namespaces":  {func(o *Options) { o.WatchNamespaces = []string{"team-a", "Team_B"} }, `--watch-namespaces: "Team_B" is not a namespace name`},
		"nameservers": {func(o *Options) { o.DNSNameserverAllowlist = []string{"192.0.2.53:53"} }, `--dns-nameserver-allowlist: entry "192.0.2.53:53"`},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			tc.edit(o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, tc.want)
			}
		})
	}
	for _, c := range []string{ControllersAll, ControllersAddon, ControllersPolicy} {
		o := NewOptions()
		o.Controllers = c
		if err := o.Validate(); err != nil {
			t.Errorf("--controllers=%s does not validate: %v", c, err)
		}
	}
	if NewOptions().Controllers != ControllersAll {
		t.Errorf("--controllers defaults to %q, want %q: one process runs both, as before", NewOptions().Controllers, ControllersAll)
	}
	o := NewOptions()
	o.MaxDrainDuration, o.OnMaxDrainDuration = time.Hour, "Remove"
	o.PrometheusAllowlist = []string{"https://prom.example.com/", "10.0.0.0/8"}
	l, err = o.limits()
	if err != nil || l.Ceiling == nil || l.Ceiling.MaxDrainDuration != time.Hour || l.Ceiling.Action != "Remove" || l.Allowlist == nil {
		t.Errorf("limits %+v, %v", l, err)
	}
}

// TestManagedClusterInformer: beside the add-on framework the policy controllers read
// the cluster factory's typed ManagedClusters; without it, their metadata alone, and
// the cluster factory starts no typed informer of them.
func TestManagedClusterInformer(t *testing.T) {
	cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	for name, policyOnly := range map[string]bool{"with the add-on framework": false, "the policy controllers alone": true} {
		t.Run(name, func(t *testing.T) {
			clusters := clusterinformers.NewSharedInformerFactory(clusterfake.NewSimpleClientset(cluster), 0)
			var metadataInformers metadatainformer.SharedInformerFactory
			if policyOnly {
				scheme := metadatafake.NewTestScheme()
				if err := metav1.AddMetaToScheme(scheme); err != nil {
					t.Fatal(err)
				}
				meta := &metav1.PartialObjectMetadata{
					TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.SchemeGroupVersion.String(), Kind: "ManagedCluster"},
					ObjectMeta: cluster.ObjectMeta,
				}
				metadataInformers = metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(scheme, meta), 0)
			}
			informer := managedClusterInformer(clusters, metadataInformers)
			ctx := t.Context()
			clusters.Start(ctx.Done())
			if metadataInformers != nil {
				metadataInformers.Start(ctx.Done())
			}
			if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
				t.Fatal("the ManagedClusters did not sync")
			}
			obj, exists, err := informer.GetIndexer().GetByKey("c1")
			if err != nil || !exists {
				t.Fatalf("c1 in the cache: %v, %v; want it there", exists, err)
			}
			if _, typed := obj.(*clusterv1.ManagedCluster); typed == policyOnly {
				t.Errorf("c1 is cached as %T", obj)
			}
			_, typedStarted := clusters.WaitForCacheSync(ctx.Done())[reflect.TypeOf(&clusterv1.ManagedCluster{})]
			if typedStarted == policyOnly {
				t.Errorf("the cluster factory started a typed ManagedCluster informer: %t, want %t", typedStarted, !policyOnly)
			}
		})
	}
}
