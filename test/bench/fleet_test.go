// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
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
	kube    kubernetes.Interface
	cluster clusterclient.Interface
	addon   addonclient.Interface
	traffic trafficclient.Interface
	ns      string
}

func newFleet(t testing.TB, prefix string) *fleet {
	t.Helper()
	cfg := bed.Hub.Config
	cfg.QPS, cfg.Burst = 200, 400
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
	f.ns = bed.Hub.Namespace(t, prefix)
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterSetName, Namespace: f.ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterSetName},
	}
	if _, err := f.cluster.ClusterV1beta2().ManagedClusterSetBindings(f.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind ManagedClusterSet: %v", err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: f.ns}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := f.kube.CoreV1().Secrets(f.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
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
		_ = f.cluster.ClusterV1().ManagedClusters().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = f.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return f.createCluster(context.Background(), name, clusterLabels)
}

// createCluster creates a ManagedCluster, its namespace and its ManagedClusterAddOn
// whose status says what a running agent would: available, the Gateway programmed,
// and the cluster's labels.
func (f *fleet) createCluster(ctx context.Context, name string, clusterLabels map[string]string) error {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: clusterLabels},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
	if _, err := f.cluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ManagedCluster %s: %w", name, err)
	}
	if _, err := f.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	addon, err := f.addon.AddonV1alpha1().ManagedClusterAddOns(name).Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: name},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ManagedClusterAddOn of %s: %w", name, err)
	}
	all := map[string]string{trafficv1alpha1.ClusterNameLabel: name, "cluster": name}
	for _, c := range []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated", Message: "lease updated"},
		{Type: trafficv1alpha1.GatewayConditionType(gatewayNamespace, gatewayName), Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonProgrammed, Message: "Addresses: 10.0.0.1"},
		{Type: trafficv1alpha1.ConditionClusterLabels, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonReported, Message: trafficv1alpha1.FormatClusterLabels(all)},
	} {
		meta.SetStatusCondition(&addon.Status.Conditions, c)
	}
	if _, err := f.addon.AddonV1alpha1().ManagedClusterAddOns(name).UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("report agent of %s: %w", name, err)
	}
	return nil
}

// labelCluster sets one label of a ManagedCluster.
func (f *fleet) labelCluster(ctx context.Context, name, key, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	_, err := f.cluster.ClusterV1().ManagedClusters().Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return err
}

func (f *fleet) placement(name string, match map[string]string) error {
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: selectorPredicates(match)},
	}
	_, err := f.cluster.ClusterV1beta1().Placements(f.ns).Create(context.Background(), p, metav1.CreateOptions{})
	return err
}

func (f *fleet) selectClusters(ctx context.Context, name string, match map[string]string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := f.cluster.ClusterV1beta1().Placements(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		p.Spec.Predicates = selectorPredicates(match)
		_, err = f.cluster.ClusterV1beta1().Placements(f.ns).Update(ctx, p, metav1.UpdateOptions{})
		return err == nil, nil
	})
}

func selectorPredicates(match map[string]string) []clusterv1beta1.ClusterPredicate {
	return []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: match},
	}}}
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
	_, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).Create(context.Background(), p, metav1.CreateOptions{})
	return err
}

// waitPolicies polls the namespace's policies until ok holds for every one of them.
func (f *fleet) waitPolicies(t testing.TB, want int, timeout time.Duration, ok func(p *trafficv1alpha1.TrafficMigrationPolicy) bool) {
	t.Helper()
	var good int
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).List(ctx, metav1.ListOptions{})
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
	for i := range p.Status.Clusters {
		if p.Status.Clusters[i].Name == cluster {
			return &p.Status.Clusters[i]
		}
	}
	return nil
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
	factory := clusterinformers.NewSharedInformerFactoryWithOptions(f.cluster, 0, clusterinformers.WithNamespace(f.ns))
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
	job      string
	requests *prometheus.CounterVec
	mu       sync.Mutex
	rates    map[[2]string]float64
}

func newTrafficSource(t testing.TB) *trafficSource {
	t.Helper()
	s := &trafficSource{job: fmt.Sprintf("bench-%d", time.Now().UnixNano()), rates: map[[2]string]float64{}}
	reg := prometheus.NewRegistry()
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricName, Help: "Requests served by the gateway."}, []string{"cluster", "pair"})
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
				for k, rate := range s.rates {
					s.requests.WithLabelValues(k[0], k[1]).Add(rate * 0.05)
				}
				s.mu.Unlock()
			}
		}
	}()
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	if err := bed.Prometheus.SetScrapeConfigs(sctx, testbed.PrometheusOptions{ScrapeConfigs: []testbed.ScrapeConfig{{JobName: s.job, Targets: []string{l.Addr().String()}}}}); err != nil {
		t.Fatalf("scrape the traffic source: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		_ = srv.Close()
	})
	return s
}

// set changes request rates, in requests per second, by (cluster, pair).
func (s *trafficSource) set(rates map[[2]string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, rate := range rates {
		s.rates[k] = rate
		s.requests.WithLabelValues(k[0], k[1]).Add(0)
	}
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
