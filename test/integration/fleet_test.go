// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	clustersdkv1beta1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// clusterSetName is the ManagedClusterSet that holds every ManagedCluster of the tests.
const clusterSetName = "traffic-migration-tests"

// fleet is the hub's API as the tests use it.
type fleet struct {
	kube    kubernetes.Interface
	cluster clusterclient.Interface
	addon   addonclient.Interface
	traffic trafficclient.Interface
}

func newFleet(t testing.TB) *fleet {
	t.Helper()
	cfg := bed.Hub.Config
	f := &fleet{}
	var err error
	if f.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if f.cluster, err = clusterclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if f.addon, err = addonclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if f.traffic, err = trafficclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return f
}

// namespace makes a namespace for one test, bound to the tests' ManagedClusterSet so
// that its Placements can select the tests' clusters.
func (f *fleet) namespace(t testing.TB, prefix string) string {
	t.Helper()
	ctx := context.Background()
	set := &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: clusterSetName},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{},
		}},
	}
	if _, err := f.cluster.ClusterV1beta2().ManagedClusterSets().Create(ctx, set, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ManagedClusterSet: %v", err)
	}
	ns := bed.Hub.Namespace(t, prefix)
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterSetName, Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterSetName},
	}
	if _, err := f.cluster.ClusterV1beta2().ManagedClusterSetBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind ManagedClusterSet: %v", err)
	}
	return ns
}

// managedCluster creates a ManagedCluster and its namespace; both go when the test ends.
func (f *fleet) managedCluster(t testing.TB, name string, clusterLabels map[string]string) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: clusterLabels},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
	if _, err := f.cluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ManagedCluster %s: %v", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() { f.deleteManagedCluster(t, name) })
}

func (f *fleet) deleteManagedCluster(t testing.TB, name string) {
	ctx := context.Background()
	err := f.cluster.ClusterV1().ManagedClusters().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ManagedCluster %s: %v", name, err)
	}
	err = f.addon.AddonV1alpha1().ManagedClusterAddOns(name).Delete(ctx, trafficv1alpha1.AddonName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ManagedClusterAddOn of %s: %v", name, err)
	}
}

// reportAgent writes what a spoke agent writes on its ManagedClusterAddOn: the target
// Gateway's readiness and the cluster's labels, and the framework's Available.
func (f *fleet) reportAgent(t testing.TB, cluster, gatewayNamespace, gatewayName string, ready bool, clusterLabels map[string]string) {
	t.Helper()
	ctx := context.Background()
	client := f.addon.AddonV1alpha1().ManagedClusterAddOns(cluster)
	addon, err := client.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		addon, err = client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: cluster},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("ManagedClusterAddOn of %s: %v", cluster, err)
	}
	gateway := metav1.Condition{Type: trafficv1alpha1.GatewayConditionType(gatewayNamespace, gatewayName),
		Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonProgrammed, Message: "Addresses: 10.0.0.1"}
	if !ready {
		gateway.Status, gateway.Reason = metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed
	}
	all := map[string]string{trafficv1alpha1.ClusterNameLabel: cluster}
	for k, v := range clusterLabels {
		all[k] = v
	}
	for _, c := range []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated", Message: "lease updated"},
		gateway,
		{Type: trafficv1alpha1.ConditionClusterLabels, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonReported, Message: trafficv1alpha1.FormatClusterLabels(all)},
	} {
		meta.SetStatusCondition(&addon.Status.Conditions, c)
	}
	if _, err := client.UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("report agent conditions of %s: %v", cluster, err)
	}
}

// placement creates a real Placement that selects the clusters with the given labels.
func (f *fleet) placement(t testing.TB, ns, name string, match map[string]string) {
	t.Helper()
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: selectorPredicates(match)},
	}
	if _, err := f.cluster.ClusterV1beta1().Placements(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Placement %s: %v", name, err)
	}
}

// select changes which clusters a real Placement selects, as an admin edits it.
func (f *fleet) selectClusters(t testing.TB, ns, name string, match map[string]string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := f.cluster.ClusterV1beta1().Placements(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p.Spec.Predicates = selectorPredicates(match)
		_, err = f.cluster.ClusterV1beta1().Placements(ns).Update(ctx, p, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("edit Placement %s: %v", name, err)
	}
}

func selectorPredicates(match map[string]string) []clusterv1beta1.ClusterPredicate {
	return []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: match},
	}}}
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
	tracker := clustersdkv1beta1.NewPlacementDecisionClustersTracker(p, decisionGetter{f.cluster}, nil)
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
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
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
	if _, err := f.kube.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s: %v", name, err)
	}
}

// createPolicy creates a policy; it is deleted when the test ends, so that a test
// leaves nothing that keeps the manager busy.
func (f *fleet) createPolicy(t testing.TB, p *trafficv1alpha1.TrafficMigrationPolicy) {
	t.Helper()
	client := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(p.Namespace)
	if _, err := client.Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create policy %s: %v", p.Name, err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
}

func (f *fleet) getPolicy(t testing.TB, ns, name string) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	p, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get policy %s: %v", name, err)
	}
	return p
}

// waitForPolicy polls the policy until ok says so, and fails with the last status.
func (f *fleet) waitForPolicy(t testing.TB, ns, name string, timeout time.Duration, ok func(p *trafficv1alpha1.TrafficMigrationPolicy) bool) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	var last *trafficv1alpha1.TrafficMigrationPolicy
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("policy %s/%s did not reach the expected state in %s; last status: %s", ns, name, timeout, statusString(last))
	}
	return last
}

func statusString(p *trafficv1alpha1.TrafficMigrationPolicy) string {
	if p == nil {
		return "<none>"
	}
	s := fmt.Sprintf("active=%d draining=%d", p.Status.ActiveClusters, p.Status.DrainingClusters)
	for _, c := range p.Status.Conditions {
		s += fmt.Sprintf("\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range p.Status.Clusters {
		s += fmt.Sprintf("\n  %s %s successes=%d result=%s value=%s: %s | %s", c.Name, c.Phase, c.ConsecutiveSuccesses, c.LastResult, c.LastValue, c.Message, c.ResolvedQuery)
	}
	return s
}

func row(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) *trafficv1alpha1.ClusterStatus {
	for i := range p.Status.Clusters {
		if p.Status.Clusters[i].Name == cluster {
			return &p.Status.Clusters[i]
		}
	}
	return nil
}

func condition(p *trafficv1alpha1.TrafficMigrationPolicy, t string) *metav1.Condition {
	return meta.FindStatusCondition(p.Status.Conditions, t)
}

// trafficSource serves a request counter per cluster, the way a gateway's metrics do,
// and Prometheus scrapes it. The test sets each cluster's request rate.
type trafficSource struct {
	job      string
	requests *prometheus.CounterVec
	mu       sync.Mutex
	rates    map[string]float64
}

func newTrafficSource(t testing.TB) *trafficSource {
	t.Helper()
	s := &trafficSource{job: fmt.Sprintf("gateway-%d", time.Now().UnixNano()), rates: map[string]float64{}}
	reg := prometheus.NewRegistry()
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_gateway_requests_total", Help: "Requests served by the gateway."}, []string{"cluster"})
	reg.MustRegister(s.requests)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go func() { _ = srv.Serve(l) }()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				s.mu.Lock()
				for cluster, rate := range s.rates {
					s.requests.WithLabelValues(cluster).Add(rate * 0.05)
				}
				s.mu.Unlock()
			}
		}
	}()
	addScrapeJob(t, testbed.ScrapeConfig{JobName: s.job, Targets: []string{l.Addr().String()}})
	t.Cleanup(func() {
		cancel()
		<-done
		_ = srv.Close()
		removeScrapeJob(t, s.job)
	})
	return s
}

// set changes a cluster's request rate, in requests per second.
func (s *trafficSource) set(rates map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cluster, rate := range rates {
		s.rates[cluster] = rate
		s.requests.WithLabelValues(cluster).Add(0)
	}
}

// The Prometheus of the package scrapes every live traffic source.
var (
	scrapeMu   sync.Mutex
	scrapeJobs = map[string]testbed.ScrapeConfig{}
)

func addScrapeJob(t testing.TB, job testbed.ScrapeConfig) {
	t.Helper()
	scrapeMu.Lock()
	defer scrapeMu.Unlock()
	scrapeJobs[job.JobName] = job
	if err := reloadScrapeJobs(); err != nil {
		t.Fatalf("add scrape job: %v", err)
	}
}

func removeScrapeJob(t testing.TB, name string) {
	scrapeMu.Lock()
	defer scrapeMu.Unlock()
	delete(scrapeJobs, name)
	if err := reloadScrapeJobs(); err != nil {
		t.Logf("remove scrape job: %v", err)
	}
}

func reloadScrapeJobs() error {
	var jobs []testbed.ScrapeConfig
	for _, j := range scrapeJobs {
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b testbed.ScrapeConfig) int {
		if a.JobName < b.JobName {
			return -1
		}
		return 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return bed.Prometheus.SetScrapeConfigs(ctx, testbed.PrometheusOptions{ScrapeConfigs: jobs})
}
