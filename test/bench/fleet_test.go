// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

const (
	clusterSetName   = "traffic-migration-bench"
	gatewayNamespace = "gateway-system"
	gatewayName      = "gw"
	secretName       = "prometheus"
	metricName       = "bench_gateway_requests_total"
)

// fleet is the hub's API as the benchmarks use it, in one namespace.
type fleet struct {
	*fixture.Fleet
	ns string
}

func newFleet(t testing.TB, prefix string) *fleet {
	t.Helper()
	api, err := fixture.NewFleet(bed.Hub)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{Fleet: api}
	f.ns = api.ClusterSetNamespace(t, clusterSetName, prefix)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: f.ns}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := f.Kube.CoreV1().Secrets(f.ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret: %v", err)
	}
	return f
}

// parallel runs fn(i) for i in [0, n) on a few workers and fails on the first error.
func parallel(t testing.TB, n int, fn func(i int) error) {
	t.Helper()
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

// managedCluster creates a ManagedCluster with a ready agent; it goes when the test ends.
func (f *fleet) managedCluster(t testing.TB, name string, clusterLabels map[string]string) error {
	t.Cleanup(func() {
		_ = f.Cluster.ClusterV1().ManagedClusters().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = f.Kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return f.createCluster(t.Context(), name, clusterLabels)
}

// createCluster creates a ManagedCluster as big as a real one, its namespace and its
// ManagedClusterAddOn whose status says what a running agent would: available, the
// Gateway programmed, and the cluster's labels.
func (f *fleet) createCluster(ctx context.Context, name string, clusterLabels map[string]string) error {
	if err := f.createHeavyCluster(ctx, name, clusterLabels); err != nil {
		return err
	}
	return f.ReportAgent(ctx, name, gatewayNamespace, gatewayName, true, map[string]string{"cluster": name})
}

// labelCluster sets one label of a ManagedCluster.
func (f *fleet) labelCluster(ctx context.Context, name, key, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	_, err := f.Cluster.ClusterV1().ManagedClusters().Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return err
}

func (f *fleet) placement(name string, match map[string]string) error {
	return f.CreatePlacement(context.Background(), f.ns, name, match)
}

func (f *fleet) selectClusters(ctx context.Context, name string, match map[string]string) error {
	return f.SelectClusters(ctx, f.ns, name, match, 30*time.Second)
}

// policy is a trafficShare policy on placement, whose traffic is the series of the
// traffic source with the given pair label.
func (f *fleet) policy(name, placement, job, pair string, interval time.Duration, successes int32) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: placement},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewayNamespace},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: secretName},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:            metricName,
				Selector:          fmt.Sprintf("job=%q,pair=%q", job, pair),
				ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`,
				Window:            "4s",
				MaxPercent:        5,
			},
			Interval:             &metav1.Duration{Duration: interval},
			ConsecutiveSuccesses: successes,
			MinDrainDuration:     &metav1.Duration{Duration: time.Second},
		},
	}
}

func (f *fleet) createPolicy(p *trafficv1alpha1.TrafficMigrationPolicy) error {
	_, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).Create(context.Background(), p, metav1.CreateOptions{})
	return err
}

// deletePolicies deletes the namespace's policies. A benchmark defers it, so that its
// policies are gone before the test's cleanup deletes their clusters: otherwise they
// would go on reacting to that teardown while the next benchmark measures.
func (f *fleet) deletePolicies(t testing.TB) {
	err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil {
		t.Errorf("delete the policies of %s: %v", f.ns, err)
	}
}

// waitPolicies polls the namespace's policies until ok holds for every one of them.
func (f *fleet) waitPolicies(t testing.TB, want int, timeout time.Duration, ok func(p *trafficv1alpha1.TrafficMigrationPolicy) bool) {
	t.Helper()
	var good int
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		good = 0
		for i := range list.Items {
			if ok(&list.Items[i]) {
				good++
			}
		}
		return good == want, nil
	})
	if err != nil {
		t.Fatalf("%d of %d policies reached the expected state in %s", good, want, timeout)
	}
}

func row(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) *trafficv1alpha1.ClusterStatus {
	return fixture.PolicyRow(p, cluster)
}

// sighting is a placement's clusters as seen at one moment.
type sighting struct {
	at       time.Time
	clusters []string
}

// decisionWatch records every change of every Placement's decided clusters in a
// namespace, through an informer on PlacementDecisions, stamped when it arrives.
type decisionWatch struct {
	mu        sync.Mutex
	decisions map[string]*clusterv1beta1.PlacementDecision // by name
	seen      map[string][]sighting                        // by placement
	stop      chan struct{}
}

func (f *fleet) watchDecisions(t testing.TB) *decisionWatch {
	t.Helper()
	w := &decisionWatch{decisions: map[string]*clusterv1beta1.PlacementDecision{}, seen: map[string][]sighting{}, stop: make(chan struct{})}
	factory := clusterinformers.NewSharedInformerFactoryWithOptions(f.Cluster, 0, clusterinformers.WithNamespace(f.ns))
	inf := factory.Cluster().V1beta1().PlacementDecisions().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { w.update(obj, false) },
		UpdateFunc: func(_, obj interface{}) { w.update(obj, false) },
		DeleteFunc: func(obj interface{}) { w.update(obj, true) },
	})
	factory.Start(w.stop)
	factory.WaitForCacheSync(w.stop)
	t.Cleanup(func() { close(w.stop) })
	return w
}

func (w *decisionWatch) update(obj interface{}, deleted bool) {
	now := time.Now()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	d, ok := obj.(*clusterv1beta1.PlacementDecision)
	if !ok {
		return
	}
	placement := d.Labels[clusterv1beta1.PlacementLabel]
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted {
		delete(w.decisions, d.Name)
	} else {
		w.decisions[d.Name] = d
	}
	var clusters []string
	for _, other := range w.decisions {
		if other.Labels[clusterv1beta1.PlacementLabel] == placement {
			for _, c := range other.Status.Decisions {
				clusters = append(clusters, c.ClusterName)
			}
		}
	}
	slices.Sort(clusters)
	if s := w.seen[placement]; len(s) == 0 || !slices.Equal(s[len(s)-1].clusters, clusters) {
		w.seen[placement] = append(w.seen[placement], sighting{at: now, clusters: clusters})
	}
}

// first returns when placement's clusters first satisfied ok at or after since.
func (w *decisionWatch) first(placement string, since time.Time, ok func(clusters []string) bool) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.seen[placement]
	for i, x := range s {
		if !ok(x.clusters) {
			continue
		}
		if !x.at.Before(since) {
			return x.at, true
		}
		if i == len(s)-1 || !s[i+1].at.Before(since) {
			return since, true // already true at since
		}
	}
	return time.Time{}, false
}

// waitFor polls first until it answers or the timeout passes.
func (w *decisionWatch) waitFor(placement string, since time.Time, timeout time.Duration, ok func(clusters []string) bool) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for {
		if at, found := w.first(placement, since, ok); found {
			return at, true
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func has(c string) func([]string) bool {
	return func(cs []string) bool { return slices.Contains(cs, c) }
}

func lacks(c string) func([]string) bool {
	return func(cs []string) bool { return !slices.Contains(cs, c) }
}

// trafficSource serves a request counter per (cluster, pair), as a gateway's metrics
// do, and the test bed's Prometheus scrapes it.
type trafficSource struct {
	*testbed.TrafficSource
	job string
}

func newTrafficSource(t testing.TB) *trafficSource {
	t.Helper()
	s := bed.Prometheus.NewTrafficSource(t, testbed.TrafficOptions{
		Metric: metricName,
		Labels: []string{"cluster", "pair"},
		Job:    fmt.Sprintf("bench-%d", time.Now().UnixNano()),
	})
	return &trafficSource{TrafficSource: s, job: s.Job}
}

// set changes request rates, in requests per second, by (cluster, pair), all at once.
func (s *trafficSource) set(rates map[[2]string]float64) {
	all := make([]testbed.Rate, 0, len(rates))
	for k, rate := range rates {
		all = append(all, testbed.Rate{Values: []string{k[0], k[1]}, PerSecond: rate})
	}
	s.Set(all...)
}

// queryRange evaluates query at every step from start to end and returns the
// points as (time, value).
func queryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]sample, error) {
	v := url.Values{}
	v.Set("query", query)
	v.Set("start", strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64))
	v.Set("end", strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64))
	v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', 3, 64))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, bed.Prometheus.URL+"/api/v1/query_range?"+v.Encode(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Values [][2]interface{} `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query_range: %s", body.Error)
	}
	var out []sample
	for _, r := range body.Data.Result {
		for _, p := range r.Values {
			ts, _ := p[0].(float64)
			s, _ := p[1].(string)
			val, _ := strconv.ParseFloat(s, 64)
			out = append(out, sample{at: time.UnixMilli(int64(ts * 1000)), value: val})
		}
	}
	slices.SortFunc(out, func(a, b sample) int { return a.at.Compare(b.at) })
	return out, nil
}

type sample struct {
	at    time.Time
	value float64
}
