// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub"
	"open-cluster-management.io/traffic-migration/test/benchreport"
)

// fullEnv selects the full sizes and the report under bench/results/<date>-<commit>.
const fullEnv = "TRAFFIC_MIGRATION_BENCH"

// clustersEnv, with the full sizes, replaces the fleet benchmark's sizes, for example
// "500,10000" to measure only the largest fleet again. The first size also chooses the
// clusters that the policies select, so it should stay 500 to compare with a full run.
const clustersEnv = "TRAFFIC_MIGRATION_BENCH_CLUSTERS"

// cadenceBaselineEnv=off, with the full sizes, leaves out the cadence benchmark's
// baseline (the manager writing every check), which doubles its time.
const cadenceBaselineEnv = "TRAFFIC_MIGRATION_BENCH_CADENCE_BASELINE"

// managerArgsEnv, with the full sizes, adds flags to every manager the benchmarks
// start, to measure a setting other than the default (for example
// "--gomemlimit-ratio=0.8"); the report records them. Without a --controllers flag
// among them, the managers run as the chart runs them (chartControllers).
const managerArgsEnv = "TRAFFIC_MIGRATION_BENCH_MANAGER_ARGS"

// chartControllers is what the chart's manager pod runs: the policy controllers alone.
// The add-on framework runs in a pod of its own, which the fleet benchmark runs beside
// it (sizes.AddonManager).
const chartControllers = "--controllers=" + hub.ControllersPolicy

// sizes are the knobs of one run.
type sizes struct {
	Mode string `json:"mode"`
	// ManagerArgs are the flags added to every manager (managerArgsEnv, and
	// chartControllers unless it chooses --controllers).
	ManagerArgs []string `json:"managerArgs,omitempty"`
	// AddonManager: the fleet benchmark also runs the add-on manager's process
	// (--controllers=addon-manager) and measures it, as the chart runs two pods.
	AddonManager    bool       `json:"addonManager"`
	Draining        int        `json:"drainingClusters"`
	Additions       int        `json:"additions"`
	IntervalSeconds float64    `json:"intervalSeconds"`
	Successes       int32      `json:"consecutiveSuccesses"`
	Fleet           fleetSizes `json:"fleet"`
	// Gateways on the agent's spoke, watched for AgentSteadySeconds.
	Gateways           int     `json:"gateways"`
	AgentSteadySeconds float64 `json:"agentSteadySeconds"`
	// Neighbours are the noisy-neighbour benchmark's policies.
	Neighbours neighbourSizes `json:"neighbours"`
	// Cadence are the check cadence benchmark's policies.
	Cadence cadenceSizes `json:"cadence"`
}

var (
	short = sizes{Mode: "short", Draining: 3, Additions: 2, IntervalSeconds: 1, Successes: 3, Fleet: fleetSizes{
		Clusters: []int{20, 40}, Policies: 10, PerPlacement: 5, DrainingPolicies: 2, DrainingPerPolicy: 2,
		IntervalSeconds: 2, SteadySeconds: 5, WindowSeconds: 6,
	}, Gateways: 4, AgentSteadySeconds: 5, Neighbours: neighbourSizes{Policies: 10, Groups: 2, IntervalSeconds: 2, AnswerDelayMillis: [2]int{100, 500}, Hostile: []int{1, 8}, HostileDraining: 10, WindowSeconds: 5},
		Cadence: cadenceSizes{Policies: 10, Groups: 2, IntervalSeconds: 1}}
	full = sizes{Mode: "full", Draining: 20, Additions: 10, IntervalSeconds: 1, Successes: 3, Fleet: fleetSizes{
		Clusters: []int{500, 2000, 5000, 10000}, Policies: 1000, PerPlacement: 50, DrainingPolicies: 100, DrainingPerPolicy: 10,
		IntervalSeconds: 10, SteadySeconds: 600, WindowSeconds: 60,
	}, Gateways: 64, AgentSteadySeconds: 20, Neighbours: neighbourSizes{Policies: 100, Groups: 10, IntervalSeconds: 10, AnswerDelayMillis: [2]int{100, 500}, Hostile: []int{1, 4, 8}, HostileDraining: 100, WindowSeconds: 60},
		Cadence: cadenceSizes{Policies: 1000, Groups: 10, IntervalSeconds: 10, WriteEveryCheck: true}}
)

// TestBench runs every benchmark in order: the small case by default, the full sizes
// with TRAFFIC_MIGRATION_BENCH=full. It fails only when the harness cannot measure.
func TestBench(t *testing.T) {
	sz, outDir := short, t.TempDir()
	if os.Getenv(fullEnv) == "full" {
		sz, outDir = full, benchreport.RunDir(filepath.Join("..", "..", "bench", "results"), time.Now())
		if v := os.Getenv(clustersEnv); v != "" {
			clusters, err := parseClusters(v, sz.Fleet.PerPlacement)
			if err != nil {
				t.Fatalf("%s=%q: %v", clustersEnv, v, err)
			}
			sz.Fleet.Clusters = clusters
		}
		if os.Getenv(cadenceBaselineEnv) == "off" {
			sz.Cadence.WriteEveryCheck = false
		}
		sz.ManagerArgs = strings.Fields(os.Getenv(managerArgsEnv))
	}
	if !slices.ContainsFunc(sz.ManagerArgs, func(arg string) bool { return strings.HasPrefix(arg, "--controllers") }) {
		sz.ManagerArgs, sz.AddonManager = append([]string{chartControllers}, sz.ManagerArgs...), true
	}
	extraManagerArgs = sz.ManagerArgs
	ctx := t.Context()
	mgr, err := startManager(ctx)
	if err != nil {
		t.Fatalf("start the manager: %v", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := benchreport.New("traffic-migration benchmarks, "+sz.Mode+" mode",
		"Test bed: real etcd, kube-apiserver, Prometheus (1s scrapes), OCM placement controller and the manager binary on one machine.", sz, outDir)
	traffic := newTrafficSource(t)
	t.Run("Reaction", func(t *testing.T) { benchReaction(t, r, sz, mgr, traffic) })
	t.Run("Addition", func(t *testing.T) { benchAddition(t, r, sz) })
	t.Run("Agent", func(t *testing.T) {
		benchAgent(t, r, sz.Gateways, time.Duration(sz.AgentSteadySeconds*float64(time.Second)))
	})
	t.Run("Neighbours", func(t *testing.T) { benchNeighbours(t, r, sz.Neighbours, mgr, traffic) })
	t.Run("Cadence", func(t *testing.T) { mgr = benchCadence(t, r, sz.Cadence, mgr, traffic) })
	t.Run("Fleet", func(t *testing.T) { mgr = benchFleet(t, r, sz.Fleet, sz.AddonManager, mgr, traffic) })
	if err := r.Write("results.json", "report.md"); err != nil {
		t.Fatalf("write the report: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(outDir, "report.md"))
	t.Logf("report in %s:\n%s", outDir, md)
}

// parseClusters reads a list of fleet sizes, "500,10000": growing, and the first one a
// multiple of the clusters per placement, as the policies' placements select from it.
func parseClusters(s string, perPlacement int) ([]int, error) {
	var clusters []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a number of clusters", f)
		}
		if len(clusters) > 0 && n <= clusters[len(clusters)-1] {
			return nil, fmt.Errorf("the sizes must grow, and %d follows %d", n, clusters[len(clusters)-1])
		}
		clusters = append(clusters, n)
	}
	if clusters[0]%perPlacement != 0 {
		return nil, fmt.Errorf("the first size, %d, must be a multiple of %d, the clusters per placement", clusters[0], perPlacement)
	}
	return clusters, nil
}

// benchReaction: N policies, each with one draining cluster whose share of its
// traffic drops under maxPercent at one moment; per cluster, the delay from the first
// moment Prometheus's answer to the policy's query passes to the proxy dropping it.
func benchReaction(t *testing.T, r *benchreport.Report, sz sizes, mgr *manager, traffic *trafficSource) {
	ctx := t.Context()
	f := newFleet(t, "reaction")
	defer f.deletePolicies(t)
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
	r.Add(b, params, "floor (consecutiveSuccesses × interval)", floor, "s", "")
	r.Add(b, params, "delay from share ≤ threshold to proxy removal, p50", benchreport.Percentile(delays, 50), "s", "")
	r.Add(b, params, "delay p99", benchreport.Percentile(delays, 99), "s", fmt.Sprintf("≤ %g s (floor + 1 s)", floor+1))
	r.Add(b, params, "delay max", benchreport.Percentile(delays, 100), "s", "")
	r.Add(b, params, "delay min", benchreport.Percentile(delays, 0), "s", "")
	r.Add(b, params, "traffic drop to proxy removal, p50", benchreport.Percentile(sinceDrop, 50), "s", "")
	r.Add(b, params, "traffic drop to proxy removal, max", benchreport.Percentile(sinceDrop, 100), "s", "")
	r.Add(b, params, "Prometheus queries per draining cluster per interval", delta(m0, m1, "traffic_migration_query_duration_seconds_count")/float64(sz.Draining)/(benchreport.Percentile(sinceDrop, 100)/sz.IntervalSeconds), "", "")
	r.Raw[b+": delays"] = delays
}

// benchAddition: a cluster joins a real Placement (its label changes); when OCM's
// placement controller writes the real decision and when the proxy lists it too.
func benchAddition(t *testing.T, r *benchreport.Report, sz sizes) {
	ctx := t.Context()
	f := newFleet(t, "addition")
	defer f.deletePolicies(t)
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
	r.Add(b, params, "label to real decision (OCM), p50", benchreport.Percentile(real, 50), "s", "")
	r.Add(b, params, "label to real decision (OCM), max", benchreport.Percentile(real, 100), "s", "")
	r.Add(b, params, "label to proxy decision, p50", benchreport.Percentile(proxy, 50), "s", "")
	r.Add(b, params, "label to proxy decision, max", benchreport.Percentile(proxy, 100), "s", "")
	r.Add(b, params, "real decision to proxy decision, p50", benchreport.Percentile(lag, 50), "s", "")
	r.Add(b, params, "real decision to proxy decision, p99", benchreport.Percentile(lag, 99), "s", "≤ 1 s")
	r.Add(b, params, "real decision to proxy decision, max", benchreport.Percentile(lag, 100), "s", "")
	r.Raw[b+": real decision to proxy decision"] = lag
}

func delta(m0, m1 map[string]float64, name string) float64 { return m1[name] - m0[name] }

// meanBetween is a histogram's mean over the observations made between the samples m0
// and m1 (manager.metrics), for the series of label ("" for all).
func meanBetween(m0, m1 map[string]float64, name, label string) float64 {
	return (m1[name+"_sum"+label] - m0[name+"_sum"+label]) / (m1[name+"_count"+label] - m0[name+"_count"+label])
}
