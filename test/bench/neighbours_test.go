// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/benchreport"
)

// neighbourSizes are the knobs of the noisy-neighbour benchmark.
type neighbourSizes struct {
	// Policies are the well-behaved policies, each draining one cluster whose checks
	// fail, so that it is checked every IntervalSeconds for the whole benchmark. They
	// share 2 × Groups clusters.
	Policies        int     `json:"policies"`
	Groups          int     `json:"groups"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	// HostileDraining are the draining clusters of the hostile policy, checked every
	// second against a Prometheus that never answers (each query held to the
	// manager's query timeout).
	HostileDraining int `json:"hostileDrainingClusters"`
	// WindowSeconds is how long each phase, without and with the hostile policy, is
	// measured.
	WindowSeconds float64 `json:"windowSeconds"`
}

// checkWatch records, for each policy of a namespace, when the manager wrote a new
// check of one of its draining clusters: the cadence of its checks as the API server
// sees it, to the millisecond.
type checkWatch struct {
	mu     sync.Mutex
	record bool
	times  map[string][]time.Time
}

func (f *fleet) watchChecks(t testing.TB) *checkWatch {
	t.Helper()
	w := &checkWatch{times: map[string][]time.Time{}}
	f.policyInformer(t, w.changed)
	return w
}

func (w *checkWatch) changed(oldObj, newObj any) {
	old, ok1 := oldObj.(*trafficv1alpha1.TrafficMigrationPolicy)
	updated, ok2 := newObj.(*trafficv1alpha1.TrafficMigrationPolicy)
	if !ok1 || !ok2 {
		return
	}
	now := time.Now()
	checked := map[string]*metav1.Time{}
	for _, r := range old.Status.Clusters {
		checked[r.Name] = r.LastEvaluationTime
	}
	for _, r := range updated.Status.Clusters {
		if r.Phase != trafficv1alpha1.ClusterDraining && r.Phase != trafficv1alpha1.ClusterHeld || r.LastEvaluationTime == nil {
			continue
		}
		if prev := checked[r.Name]; prev == nil || !prev.Equal(r.LastEvaluationTime) {
			w.mu.Lock()
			if w.record {
				w.times[updated.Name] = append(w.times[updated.Name], now)
			}
			w.mu.Unlock()
			return
		}
	}
}

// recording starts or stops recording and returns what was recorded since the last
// call, by policy.
func (w *checkWatch) recording(on bool) map[string][]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record = on
	out := w.times
	w.times = map[string][]time.Time{}
	return out
}

// gaps are the times between consecutive checks of each of the named policies.
func gaps(times map[string][]time.Time, policies map[string]bool) []float64 {
	var out []float64
	for name, ts := range times {
		if !policies[name] {
			continue
		}
		for i := 1; i < len(ts); i++ {
			out = append(out, ts[i].Sub(ts[i-1]).Seconds())
		}
	}
	return out
}

// hangingPrometheus is a Prometheus that never answers: it holds every request until
// the client gives up. It is the hostile case that costs the manager the most: each
// query holds a query slot for the whole query timeout.
func hangingPrometheus(t testing.TB) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices that the client gave up only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL
}

// benchNeighbours runs benchmark 7: the well-behaved policies' check cadence, and the
// manager's memory and CPU, without and then with a hostile policy beside them.
func benchNeighbours(t *testing.T, r *benchreport.Report, ns neighbourSizes, mgr *manager, traffic *trafficSource) {
	ctx := t.Context()
	f := newFleet(t, "neighbours")
	interval := time.Duration(ns.IntervalSeconds * float64(time.Second))
	window := time.Duration(ns.WindowSeconds * float64(time.Second))
	pair := func(i int) string { return fmt.Sprintf("%s-p%d", f.ns, i) }
	cluster := func(g int, side string) string { return fmt.Sprintf("%s-%d%s", f.ns, g, side) }
	hostileCluster := func(k int) string { return fmt.Sprintf("%s-h%d", f.ns, k) }

	// Each well-behaved policy keeps half of its traffic on the cluster that leaves,
	// so its checks fail and it drains for the whole benchmark.
	rates := map[[2]string]float64{}
	for i := 0; i < ns.Policies; i++ {
		g := i % ns.Groups
		rates[[2]string{cluster(g, "a"), pair(i)}] = 10
		rates[[2]string{cluster(g, "b"), pair(i)}] = 10
	}
	traffic.set(rates)
	parallel(t, 2*ns.Groups, func(k int) error {
		side := map[bool]string{true: "a", false: "b"}[k%2 == 0]
		return f.createCluster(ctx, cluster(k/2, side), map[string]string{"fleet": f.ns, "ngroup": strconv.Itoa(k / 2), "side": side})
	})
	parallel(t, ns.HostileDraining+1, func(k int) error {
		return f.createCluster(ctx, hostileCluster(k), map[string]string{"fleet": f.ns, "hostile": "true", "hslot": strconv.Itoa(k)})
	})

	checks := f.watchChecks(t)
	policies := f.watchPolicies(t)
	wellBehaved := map[string]bool{}
	parallel(t, ns.Policies, func(i int) error {
		name := fmt.Sprintf("n-%d", i)
		if err := f.placement(name, map[string]string{"fleet": f.ns, "ngroup": strconv.Itoa(i % ns.Groups)}); err != nil {
			return err
		}
		return f.createPolicy(f.policy(name, name, traffic.job, pair(i), interval, 3))
	})
	for i := 0; i < ns.Policies; i++ {
		wellBehaved[fmt.Sprintf("n-%d", i)] = true
	}
	policies.waitAll(t, ns.Policies, 10*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Status.ActiveClusters == 2
	})
	parallel(t, ns.Policies, func(i int) error {
		name := fmt.Sprintf("n-%d", i)
		return f.selectClusters(ctx, name, map[string]string{"fleet": f.ns, "ngroup": strconv.Itoa(i % ns.Groups), "side": "b"})
	})
	policies.waitAll(t, ns.Policies, 10*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		if p.Status.DrainingClusters != 1 {
			return false
		}
		for _, row := range p.Status.Clusters {
			if row.Phase == trafficv1alpha1.ClusterDraining && len(row.History) >= 2 {
				return true
			}
		}
		return false
	})

	// measure watches one phase and returns the well-behaved policies' check gaps and
	// the manager's RSS at the end and CPU in the window.
	measure := func(phase string) (gapSeconds []float64, rss, cpuPerMinute float64) {
		checks.recording(true)
		u0, err := mgr.usage()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(window):
		}
		u1, err := mgr.usage()
		if err != nil {
			t.Fatal(err)
		}
		recorded := checks.recording(false)
		g := gaps(recorded, wellBehaved)
		if len(g) == 0 {
			t.Fatalf("%s: no well-behaved policy was checked twice in %s", phase, window)
		}
		t.Logf("%s: %d gaps between checks of %d policies in %s; p50 %.3f s, p99 %.3f s; RSS %.1f MiB", phase, len(g),
			len(recorded), window, benchreport.Percentile(g, 50), benchreport.Percentile(g, 99), u1.rssBytes/(1<<20))
		return g, u1.rssBytes, (u1.cpuSeconds - u0.cpuSeconds) / time.Since(start).Minutes()
	}

	quietGaps, quietRSS, quietCPU := measure("without the hostile policy")

	url := hangingPrometheus(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hostile-prometheus", Namespace: f.ns}, StringData: map[string]string{"url": url}}
	if _, err := f.kube.CoreV1().Secrets(f.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the hostile Secret: %v", err)
	}
	if err := f.placement("hostile", map[string]string{"fleet": f.ns, "hostile": "true"}); err != nil {
		t.Fatal(err)
	}
	hostile := f.policy("hostile", "hostile", traffic.job, "hostile", time.Second, 3)
	hostile.Spec.PrometheusSecret.Name = secret.Name
	if err := f.createPolicy(hostile); err != nil {
		t.Fatal(err)
	}
	policies.waitAll(t, ns.Policies+1, 5*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Name != "hostile" || p.Status.ActiveClusters == int32(ns.HostileDraining+1)
	})
	if err := f.selectClusters(ctx, "hostile", map[string]string{"fleet": f.ns, "hostile": "true", "hslot": "0"}); err != nil {
		t.Fatal(err)
	}
	policies.waitAll(t, ns.Policies+1, 5*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Name != "hostile" || p.Status.DrainingClusters == int32(ns.HostileDraining)
	})
	noisyGaps, noisyRSS, noisyCPU := measure("with the hostile policy")

	b := "7. Noisy neighbours"
	params := fmt.Sprintf("%d policies, each draining 1 cluster whose checks fail, interval %gs; then beside them 1 hostile policy draining %d clusters every 1s against a Prometheus that never answers (each query held to the %s query timeout)",
		ns.Policies, ns.IntervalSeconds, ns.HostileDraining, "10 s")
	late := func(g []float64, p float64) float64 { return benchreport.Percentile(g, p) - ns.IntervalSeconds }
	r.Add(b, params, "delay of a check past its interval, p50, without the hostile policy", late(quietGaps, 50), "s", "")
	r.Add(b, params, "delay of a check past its interval, p99, without the hostile policy", late(quietGaps, 99), "s", "")
	r.Add(b, params, "delay of a check past its interval, p50, with the hostile policy", late(noisyGaps, 50), "s", "")
	r.Add(b, params, "delay of a check past its interval, p99, with the hostile policy", late(noisyGaps, 99), "s", "")
	r.Add(b, params, "time between two checks, p99, with / without the hostile policy", benchreport.Percentile(noisyGaps, 99)/benchreport.Percentile(quietGaps, 99), "", "≤ 1.2")
	r.Add(b, params, "manager RSS without the hostile policy", quietRSS/(1<<20), "MiB", "")
	r.Add(b, params, "manager RSS with the hostile policy", noisyRSS/(1<<20), "MiB", "")
	r.Add(b, params, "manager RSS, with / without", noisyRSS/quietRSS, "", "≤ 1.2")
	r.Add(b, params, "manager CPU without the hostile policy", quietCPU, "CPU s/min", "")
	r.Add(b, params, "manager CPU with the hostile policy", noisyCPU, "CPU s/min", "")
	r.Add(b, params, "manager CPU, with / without", noisyCPU/quietCPU, "", "≤ 1.2")
	r.Tables = append(r.Tables, neighboursTable(params,
		[2][]float64{quietGaps, noisyGaps}, [2]float64{quietRSS, noisyRSS}, [2]float64{quietCPU, noisyCPU}, ns.IntervalSeconds))
	f.deletePolicies(t)
}

// neighboursTable puts the well-behaved policies' cadence and the manager's costs
// without and with the hostile policy side by side, with their ratio and its goal.
func neighboursTable(params string, gaps [2][]float64, rss, cpu [2]float64, interval float64) benchreport.Table {
	row := func(what string, without, with float64, unit string) []string {
		return []string{what, fmt.Sprintf("%.3f %s", without, unit), fmt.Sprintf("%.3f %s", with, unit), fmt.Sprintf("%.2f", with/without)}
	}
	p := func(i int, q float64) float64 { return benchreport.Percentile(gaps[i], q) }
	return benchreport.Table{
		Title:  "Noisy neighbours: what one hostile policy costs the others",
		Intro:  params + ". The goal: each ratio at most 1.2.",
		Header: []string{"measure", "without the hostile policy", "with it", "with / without"},
		Rows: [][]string{
			row("time between two checks of a policy, p50", p(0, 50), p(1, 50), "s"),
			row("time between two checks of a policy, p99", p(0, 99), p(1, 99), "s"),
			{"delay of a check past its interval, p99", fmt.Sprintf("%.3f s", p(0, 99)-interval), fmt.Sprintf("%.3f s", p(1, 99)-interval), ""},
			row("manager RSS", rss[0]/(1<<20), rss[1]/(1<<20), "MiB"),
			row("manager CPU", cpu[0], cpu[1], "CPU s/min"),
		},
	}
}
