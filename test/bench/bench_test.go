// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// fullEnv selects the full sizes and the report under bench/results.
const fullEnv = "TRAFFIC_MIGRATION_BENCH"

// sizes are the knobs of one run.
type sizes struct {
	Mode            string  `json:"mode"`
	Draining        int     `json:"drainingClusters"`
	Additions       int     `json:"additions"`
	SteadyPolicies  int     `json:"steadyPolicies"`
	SteadySeconds   float64 `json:"steadySeconds"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	Successes       int32   `json:"consecutiveSuccesses"`
}

var (
	short = sizes{Mode: "short", Draining: 3, Additions: 2, SteadyPolicies: 10, SteadySeconds: 10, IntervalSeconds: 1, Successes: 3}
	full  = sizes{Mode: "full", Draining: 20, Additions: 10, SteadyPolicies: 200, SteadySeconds: 120, IntervalSeconds: 1, Successes: 3}
)

// TestBench runs every benchmark in order: the small case by default, the full sizes
// with TRAFFIC_MIGRATION_BENCH=full. It fails only when the harness cannot measure.
func TestBench(t *testing.T) {
	sz, outDir := short, t.TempDir()
	if os.Getenv(fullEnv) == "full" {
		sz, outDir = full, filepath.Join("..", "..", "bench", "results")
	}
	ctx := context.Background()
	mgr, err := startManager(ctx)
	if err != nil {
		t.Fatalf("start the manager: %v", err)
	}
	r := &report{Sizes: sz, Started: time.Now().UTC(), raw: map[string][]float64{}}
	traffic := newTrafficSource(t)
	t.Run("Reaction", func(t *testing.T) { benchReaction(t, r, sz, mgr, traffic) })
	t.Run("Addition", func(t *testing.T) { benchAddition(t, r, sz) })
	t.Run("SteadyState", func(t *testing.T) { mgr = benchSteady(t, r, sz, mgr) })
	if err := r.write(outDir); err != nil {
		t.Fatalf("write the report: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(outDir, "report.md"))
	t.Logf("report in %s:\n%s", outDir, md)
}

// benchReaction: N policies, each with one draining cluster whose share of its
// traffic drops under maxPercent at one moment; per cluster, the delay from the first
// moment Prometheus's answer to the policy's query passes to the proxy dropping it.
func benchReaction(t *testing.T, r *report, sz sizes, mgr *manager, traffic *trafficSource) {
	ctx := context.Background()
	f := newFleet(t, "reaction")
	interval := time.Duration(sz.IntervalSeconds * float64(time.Second))
	dst := f.ns + "-dst"
	src := func(i int) string { return fmt.Sprintf("%s-src-%d", f.ns, i) }
	pair := func(i int) string { return fmt.Sprintf("%s-%d", f.ns, i) }
	if err := f.managedCluster(t, dst, map[string]string{"dst": f.ns}); err != nil {
		t.Fatal(err)
	}
	rates := map[[2]string]float64{}
	for i := 0; i < sz.Draining; i++ {
		rates[[2]string{src(i), pair(i)}] = 50
		rates[[2]string{dst, pair(i)}] = 50
	}
	traffic.set(rates)
	w := f.watchDecisions(t)
	parallel(t, sz.Draining, func(i int) error {
		if err := f.managedCluster(t, src(i), map[string]string{"src": pair(i)}); err != nil {
			return err
		}
		if err := f.placement(fmt.Sprintf("p-%d", i), map[string]string{"src": pair(i)}); err != nil {
			return err
		}
		return f.createPolicy(f.policy(fmt.Sprintf("p-%d", i), fmt.Sprintf("p-%d", i), traffic.job, pair(i), interval, sz.Successes))
	})
	for i := 0; i < sz.Draining; i++ {
		if _, ok := w.waitFor(fmt.Sprintf("p-%d-proxy", i), time.Time{}, 60*time.Second, has(src(i))); !ok {
			t.Fatalf("proxy p-%d-proxy never listed %s", i, src(i))
		}
	}
	// Every placement moves to dst; each source cluster drains, failing its check.
	parallel(t, sz.Draining, func(i int) error {
		return f.selectClusters(ctx, fmt.Sprintf("p-%d", i), map[string]string{"dst": f.ns})
	})
	queries := map[string]string{}
	f.waitPolicies(t, sz.Draining, 90*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		var i int
		fmt.Sscanf(p.Name, "p-%d", &i)
		row := row(p, src(i))
		if row != nil && row.Phase == trafficv1alpha1.ClusterDraining && row.LastResult == trafficv1alpha1.EvaluationFail && row.ResolvedQuery != "" {
			queries[p.Name] = row.ResolvedQuery
			return true
		}
		return false
	})
	m0, _ := mgr.metrics()

	// The traffic leaves every source cluster at once.
	for k := range rates {
		if k[0] == dst {
			rates[k] = 100
		} else {
			rates[k] = 0
		}
	}
	dropped := time.Now()
	traffic.set(rates)
	removed := make([]time.Time, sz.Draining)
	for i := 0; i < sz.Draining; i++ {
		at, ok := w.waitFor(fmt.Sprintf("p-%d-proxy", i), dropped, 120*time.Second, lacks(src(i)))
		if !ok {
			t.Fatalf("proxy p-%d-proxy kept %s for 120s after the traffic left", i, src(i))
		}
		removed[i] = at
	}
	m1, _ := mgr.metrics()
	var delays, sinceDrop []float64
	for i := 0; i < sz.Draining; i++ {
		q := queries[fmt.Sprintf("p-%d", i)]
		points, err := queryRange(ctx, q, dropped.Add(-time.Second), removed[i].Add(time.Second), 100*time.Millisecond)
		if err != nil {
			t.Fatalf("query Prometheus: %v", err)
		}
		var below time.Time
		for _, p := range points {
			if !p.at.Before(dropped) && p.value <= 5 {
				below = p.at
				break
			}
		}
		if below.IsZero() {
			t.Fatalf("Prometheus never saw %s's share at or under 5%% before its removal (query %s)", src(i), q)
		}
		delays = append(delays, removed[i].Sub(below).Seconds())
		sinceDrop = append(sinceDrop, removed[i].Sub(dropped).Seconds())
	}
	floor := float64(sz.Successes) * sz.IntervalSeconds
	const b = "1. Reaction time"
	params := fmt.Sprintf("%d draining clusters, 1 per policy; interval %gs, consecutiveSuccesses %d, window 4s", sz.Draining, sz.IntervalSeconds, sz.Successes)
	r.add(b, params, "floor (consecutiveSuccesses × interval)", floor, "s", "")
	r.add(b, params, "delay from share ≤ threshold to proxy removal, p50", percentile(delays, 50), "s", "")
	r.add(b, params, "delay p99", percentile(delays, 99), "s", fmt.Sprintf("≤ %g s (floor + 1 s)", floor+1))
	r.add(b, params, "delay max", percentile(delays, 100), "s", "")
	r.add(b, params, "delay min", percentile(delays, 0), "s", "")
	r.add(b, params, "traffic drop to proxy removal, p50", percentile(sinceDrop, 50), "s", "")
	r.add(b, params, "traffic drop to proxy removal, max", percentile(sinceDrop, 100), "s", "")
	r.add(b, params, "Prometheus queries per draining cluster per interval", delta(m0, m1, "traffic_migration_query_duration_seconds_count")/float64(sz.Draining)/(percentile(sinceDrop, 100)/sz.IntervalSeconds), "", "")
	r.raw[b+": delays"] = delays
}

// benchAddition: a cluster joins a real Placement (its label changes); when OCM's
// placement controller writes the real decision and when the proxy lists it too.
func benchAddition(t *testing.T, r *report, sz sizes) {
	ctx := context.Background()
	f := newFleet(t, "addition")
	base := f.ns + "-base"
	if err := f.managedCluster(t, base, map[string]string{"add": f.ns}); err != nil {
		t.Fatal(err)
	}
	newCluster := func(k int) string { return fmt.Sprintf("%s-new-%d", f.ns, k) }
	parallel(t, sz.Additions, func(k int) error { return f.managedCluster(t, newCluster(k), nil) })
	w := f.watchDecisions(t)
	if err := f.placement("add", map[string]string{"add": f.ns}); err != nil {
		t.Fatal(err)
	}
	if err := f.createPolicy(f.policy("add", "add", "none", "none", time.Second, 3)); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.waitFor("add-proxy", time.Time{}, 60*time.Second, has(base)); !ok {
		t.Fatal("the proxy never listed the first cluster")
	}
	var real, proxy, lag []float64
	for k := 0; k < sz.Additions; k++ {
		time.Sleep(500 * time.Millisecond)
		c := newCluster(k)
		start := time.Now()
		if err := f.labelCluster(ctx, c, "add", f.ns); err != nil {
			t.Fatal(err)
		}
		realAt, ok := w.waitFor("add", start, 60*time.Second, has(c))
		if !ok {
			t.Fatalf("OCM never decided %s", c)
		}
		proxyAt, ok := w.waitFor("add-proxy", start, 60*time.Second, has(c))
		if !ok {
			t.Fatalf("the proxy never listed %s", c)
		}
		real = append(real, realAt.Sub(start).Seconds())
		proxy = append(proxy, proxyAt.Sub(start).Seconds())
		lag = append(lag, proxyAt.Sub(realAt).Seconds())
	}
	const b = "2. Addition latency"
	params := fmt.Sprintf("%d additions, one at a time, by labelling a ManagedCluster", sz.Additions)
	r.add(b, params, "label to real decision (OCM), p50", percentile(real, 50), "s", "")
	r.add(b, params, "label to real decision (OCM), max", percentile(real, 100), "s", "")
	r.add(b, params, "label to proxy decision, p50", percentile(proxy, 50), "s", "")
	r.add(b, params, "label to proxy decision, max", percentile(proxy, 100), "s", "")
	r.add(b, params, "real decision to proxy decision, p50", percentile(lag, 50), "s", "")
	r.add(b, params, "real decision to proxy decision, p99", percentile(lag, 99), "s", "≤ 1 s")
	r.add(b, params, "real decision to proxy decision, max", percentile(lag, 100), "s", "")
	r.raw[b+": real decision to proxy decision"] = lag
}

// benchSteady: many policies, nothing draining, for a fixed period: what the manager
// writes and evaluates, and its memory and CPU. Then a restart, during which every
// policy's spec changes: how long until every policy's status observes it.
func benchSteady(t *testing.T, r *report, sz sizes, mgr *manager) *manager {
	ctx := context.Background()
	f := newFleet(t, "steady")
	c := f.ns + "-c"
	if err := f.managedCluster(t, c, map[string]string{"steady": f.ns}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	parallel(t, sz.SteadyPolicies, func(i int) error {
		name := fmt.Sprintf("s-%d", i)
		if err := f.placement(name, map[string]string{"steady": f.ns}); err != nil {
			return err
		}
		return f.createPolicy(f.policy(name, name, "none", name, time.Second, 3))
	})
	ready := func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Status.ObservedGeneration == p.Generation && p.Status.ActiveClusters == 1 &&
			p.Status.ProxyPlacement != nil && p.Status.ProxyPlacement.NumberOfClusters == 1
	}
	f.waitPolicies(t, sz.SteadyPolicies, 5*time.Minute, ready)
	settle := time.Since(created)
	// The setup's last writes (events among them) may trail the statuses: wait until
	// the manager has written nothing for 10s, at most 3 minutes, and say how long.
	mReady, err := mgr.metrics()
	if err != nil {
		t.Fatal(err)
	}
	m0, quietSince := mReady, time.Now()
	for time.Since(quietSince) < 10*time.Second && time.Since(created) < settle+3*time.Minute {
		time.Sleep(time.Second)
		m, err := mgr.metrics()
		if err != nil {
			t.Fatal(err)
		}
		if m["traffic_migration_api_writes_total"] != m0["traffic_migration_api_writes_total"] {
			m0, quietSince = m, time.Now()
		}
	}
	u0, err := mgr.usage()
	if err != nil {
		t.Fatal(err)
	}
	period := time.Duration(sz.SteadySeconds * float64(time.Second))
	time.Sleep(period)
	m1, _ := mgr.metrics()
	u1, _ := mgr.usage()
	const b = "3. Steady state"
	params := fmt.Sprintf("%d policies, 1 cluster each, nothing draining, %gs", sz.SteadyPolicies, sz.SteadySeconds)
	r.add(b, params, "time from creating the policies to every status ready", settle.Seconds(), "s", "")
	r.add(b, params, "writes after every status was ready, before 10s without any", delta(mReady, m0, "traffic_migration_api_writes_total"), "", "")
	r.add(b, params, "time from every status ready to the last of those writes", quietSince.Sub(created.Add(settle)).Seconds(), "s", "")
	r.add(b, params, "API writes (api_writes_total delta)", delta(m0, m1, "traffic_migration_api_writes_total"), "", "0")
	r.add(b, params, "evaluations (evaluations_total delta)", delta(m0, m1, "traffic_migration_evaluations_total"), "", "0")
	r.add(b, params, "Prometheus queries (query_duration_seconds count delta)", delta(m0, m1, "traffic_migration_query_duration_seconds_count"), "", "")
	r.add(b, params, "manager RSS at the end", u1.rssBytes/(1<<20), "MiB", "")
	r.add(b, params, "manager CPU per minute", (u1.cpuSeconds-u0.cpuSeconds)/period.Minutes(), "CPU s/min", "")
	for k, v := range m1 {
		if d := v - m0[k]; d != 0 && (len(k) > len("traffic_migration_api_writes_total{") && k[:len("traffic_migration_api_writes_total{")] == "traffic_migration_api_writes_total{") {
			r.add(b, params, "writes by "+k[len("traffic_migration_api_writes_total"):], d, "", "")
		}
	}

	// Restart: every policy's spec changes while the manager is down.
	mgr.proc.Stop()
	parallel(t, sz.SteadyPolicies, func(i int) error {
		patch := []byte(`{"spec":{"trafficShare":{"maxPercent":6}}}`)
		_, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).Patch(ctx, fmt.Sprintf("s-%d", i), "application/merge-patch+json", patch, metav1.PatchOptions{})
		return err
	})
	start := time.Now()
	next, err := startManager(ctx)
	if err != nil {
		t.Fatalf("restart the manager: %v", err)
	}
	started := time.Since(start)
	f.waitPolicies(t, sz.SteadyPolicies, 5*time.Minute, ready)
	resync := time.Since(start)
	var writes float64
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Second, true, func(context.Context) (bool, error) {
		m, err := next.metrics()
		writes = m["traffic_migration_api_writes_total"]
		return err == nil, nil
	})
	u2, _ := next.usage()
	const b4 = "4. Restart (partial fleet scale)"
	params4 := fmt.Sprintf("%d policies whose spec changed while the manager was down", sz.SteadyPolicies)
	r.add(b4, params4, "start to ready (readyz)", started.Seconds(), "s", "")
	r.add(b4, params4, "start to every policy's status observing its generation", resync.Seconds(), "s", "")
	r.add(b4, params4, "API writes during the resync", writes, "", "")
	r.add(b4, params4, "manager RSS after the resync", u2.rssBytes/(1<<20), "MiB", "")
	return next
}

func delta(m0, m1 map[string]float64, name string) float64 { return m1[name] - m0[name] }
