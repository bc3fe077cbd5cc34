// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clustersdkv1beta1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// clusterSetName is the ManagedClusterSet that holds every ManagedCluster of the tests.
const clusterSetName = "traffic-migration-tests"

// fleet is the hub's API as the tests use it.
type fleet struct {
	*fixture.Fleet
}

func newFleet(t testing.TB) *fleet {
	t.Helper()
	return newFleetOn(t, bed.Hub)
}

// newFleetOn is newFleet on another hub, such as one of a test bed of the test's own.
func newFleetOn(t testing.TB, hub *testbed.Cluster) *fleet {
	t.Helper()
	api, err := fixture.NewFleet(hub)
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{Fleet: api}
}

// hubKube is a client of the package's hub, as its admin.
func hubKube(t testing.TB) kubernetes.Interface {
	t.Helper()
	kube, err := kubernetes.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// newOwnHub starts a hub of the test's own (etcd, a kube-apiserver and OCM's
// placement controller, without Prometheus), stopped when the test ends, and the fleet
// on it: for the tests that run a manager with flags of their own, apart from the
// package's shared one.
func newOwnHub(t *testing.T) (*testbed.Bed, *fleet) {
	t.Helper()
	own, err := testbed.New(t.Context(), testbed.Options{})
	if err != nil {
		t.Fatalf("start a hub of the test's own: %v", err)
	}
	t.Cleanup(own.Stop)
	if _, err := own.StartPlacementController(t.Context()); err != nil {
		t.Fatalf("start OCM's placement controller on the test's own hub: %v", err)
	}
	return own, newFleetOn(t, own.Hub)
}

// namespace makes a namespace for one test, bound to the tests' ManagedClusterSet so
// that its Placements can select the tests' clusters.
func (f *fleet) namespace(t testing.TB, prefix string) string {
	t.Helper()
	return f.ClusterSetNamespace(t, clusterSetName, prefix)
}

// managedCluster creates a ManagedCluster and its namespace; the ManagedCluster and its
// ManagedClusterAddOn go when the test ends.
func (f *fleet) managedCluster(t testing.TB, name string, clusterLabels map[string]string) {
	t.Helper()
	if err := f.CreateManagedCluster(t.Context(), name, clusterLabels); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.deleteManagedCluster(t, name) })
}

// deleteManagedCluster runs in cleanups too, where the test's context is done.
func (f *fleet) deleteManagedCluster(t testing.TB, name string) {
	ctx := context.Background()
	err := f.Cluster.ClusterV1().ManagedClusters().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ManagedCluster %s: %v", name, err)
	}
	err = f.Addon.AddonV1alpha1().ManagedClusterAddOns(name).Delete(ctx, trafficv1alpha1.AddonName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ManagedClusterAddOn of %s: %v", name, err)
	}
}

// reportAgent writes what a spoke agent writes on its ManagedClusterAddOn: the target
// Gateway's readiness and the cluster's labels, and the framework's Available.
func (f *fleet) reportAgent(t testing.TB, cluster, gatewayNamespace, gatewayName string, ready bool, clusterLabels map[string]string) {
	t.Helper()
	if err := f.ReportAgent(t.Context(), cluster, gatewayNamespace, gatewayName, ready, clusterLabels); err != nil {
		t.Fatal(err)
	}
}

// placement creates a real Placement that selects the clusters with the given labels.
func (f *fleet) placement(t testing.TB, ns, name string, match map[string]string) {
	t.Helper()
	if err := f.CreatePlacement(t.Context(), ns, name, match); err != nil {
		t.Fatal(err)
	}
}

// selectClusters changes which clusters a real Placement selects, as an admin edits it.
func (f *fleet) selectClusters(t testing.TB, ns, name string, match map[string]string) {
	t.Helper()
	if err := f.SelectClusters(t.Context(), ns, name, match, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// decisionGetter lets sdk-go's tracker read PlacementDecisions through the API.
type decisionGetter struct{ client clusterclient.Interface }

func (g decisionGetter) List(selector labels.Selector, namespace string) ([]*clusterv1beta1.PlacementDecision, error) {
	list, err := g.client.ClusterV1beta1().PlacementDecisions(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	out := make([]*clusterv1beta1.PlacementDecision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// clusters reads a Placement's clusters as a consumer does: with sdk-go's
// PlacementDecisionClustersTracker, by the Placement's name.
func (f *fleet) clusters(ns, placement string) ([]string, error) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: placement, Namespace: ns}}
	tracker := clustersdkv1beta1.NewPlacementDecisionClustersTracker(p, decisionGetter{f.Cluster}, nil)
	if err := tracker.Refresh(); err != nil {
		return nil, err
	}
	return sets.List(tracker.ExistingClusterGroupsBesides().GetClusters()), nil
}

// waitForClusters waits until a Placement's decisions list exactly want.
func (f *fleet) waitForClusters(t testing.TB, ns, placement string, want []string, timeout time.Duration) {
	t.Helper()
	slices.Sort(want)
	var last []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		got, err := f.clusters(ns, placement)
		if err != nil {
			return false, nil
		}
		last = got
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("Placement %s/%s: want clusters %v, last saw %v", ns, placement, want, last)
	}
}

// prometheusSecret writes the Secret that points policies at the test bed's Prometheus.
func (f *fleet) prometheusSecret(t testing.TB, ns, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
	if _, err := f.Kube.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s: %v", name, err)
	}
}

// createPolicy creates a policy; it is deleted when the test ends, so that a test
// leaves nothing that keeps the manager busy.
func (f *fleet) createPolicy(t testing.TB, p *trafficv1alpha1.TrafficMigrationPolicy) {
	t.Helper()
	client := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(p.Namespace)
	if _, err := client.Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create policy %s: %v", p.Name, err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
}

func (f *fleet) getPolicy(t testing.TB, ns, name string) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	p, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get policy %s: %v", name, err)
	}
	return p
}

// waitForPolicy polls the policy until ok says so, and fails with the last status.
func (f *fleet) waitForPolicy(t testing.TB, ns, name string, timeout time.Duration, ok func(p *trafficv1alpha1.TrafficMigrationPolicy) bool) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	var last *trafficv1alpha1.TrafficMigrationPolicy
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("policy %s/%s did not reach the expected state in %s; last status: %s", ns, name, timeout, fixture.PolicyStatus(last))
	}
	return last
}

func condition(p *trafficv1alpha1.TrafficMigrationPolicy, t string) *metav1.Condition {
	return meta.FindStatusCondition(p.Status.Conditions, t)
}

// trafficSource serves a request counter per cluster, test_gateway_requests_total,
// the way a gateway's metrics do, and the test bed's Prometheus scrapes it. The test
// sets each cluster's request rate.
type trafficSource struct {
	*testbed.TrafficSource
	job string
}

func newTrafficSource(t testing.TB) *trafficSource {
	t.Helper()
	s := bed.Prometheus.NewTrafficSource(t, testbed.TrafficOptions{
		Metric: "test_gateway_requests_total",
		Labels: []string{"cluster"},
		Job:    fmt.Sprintf("gateway-%d", time.Now().UnixNano()),
	})
	return &trafficSource{TrafficSource: s, job: s.Job}
}

// addScrapeJob makes the test bed's Prometheus scrape job too.
func addScrapeJob(t testing.TB, job testbed.ScrapeConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := bed.Prometheus.AddScrapeJob(ctx, job); err != nil {
		t.Fatalf("add scrape job: %v", err)
	}
}

// removeScrapeJob makes the test bed's Prometheus stop scraping the job name.
// removeScrapeJob runs in cleanups, where the test's context is done.
func removeScrapeJob(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bed.Prometheus.RemoveScrapeJob(ctx, name); err != nil {
		t.Logf("remove scrape job: %v", err)
	}
}

func statusOf(c *metav1.Condition) metav1.ConditionStatus {
	if c == nil {
		return ""
	}
	return c.Status
}
