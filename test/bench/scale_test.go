// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/benchreport"
)

// fleetSizes are the knobs of the steady-state, fleet-scale and growth benchmarks.
type fleetSizes struct {
	// Clusters are the fleet sizes of the growth curve, in order; the last one is the
	// fleet-scale point.
	Clusters []int `json:"clusters"`
	// Policies, each with its own Placement selecting PerPlacement clusters.
	Policies     int `json:"policies"`
	PerPlacement int `json:"clustersPerPlacement"`
	// DrainingPolicies drain DrainingPerPolicy clusters each, all at once.
	DrainingPolicies  int     `json:"drainingPolicies"`
	DrainingPerPolicy int     `json:"drainingClustersPerPolicy"`
	IntervalSeconds   float64 `json:"intervalSeconds"`
	// SteadySeconds is how long the steady state (nothing draining) is watched;
	// WindowSeconds how long each fleet size is measured while draining.
	SteadySeconds float64 `json:"steadySeconds"`
	WindowSeconds float64 `json:"windowSeconds"`
}

// scale is one fleet of ManagedClusters, policies and their Placements in one namespace.
// Placements select only from the first Clusters[0] clusters, PerPlacement each, so
// the work (policies, clusters per policy, draining clusters) stays the same while the
// fleet grows around it: a cost that grows along the curve grows with fleet size.
type scale struct {
	f        *fleet
	sz       fleetSizes
	policies *policyWatch
	traffic  *trafficSource
	clusters int // created so far
	groups   int
}

func (s *scale) clusterName(k int) string { return fmt.Sprintf("%s-%d", s.f.ns, k) }
func (s *scale) pair(i int) string        { return fmt.Sprintf("%s-p%d", s.f.ns, i) }

// grow creates ManagedClusters (each with a reporting agent) up to n.
func (s *scale) grow(t *testing.T, n int) time.Duration {
	start := time.Now()
	from := s.clusters
	parallel(t, n-from, func(i int) error {
		k := from + i
		return s.f.createCluster(t.Context(), s.clusterName(k), map[string]string{
			"fleet": s.f.ns, "group": strconv.Itoa(k / s.sz.PerPlacement), "slot": strconv.Itoa(k % s.sz.PerPlacement),
		})
	})
	s.clusters = n
	return time.Since(start)
}

// drainingSlots are the slots a draining policy's Placement stops selecting.
func (s *scale) drainingSlots() []string {
	var slots []string
	for j := 0; j < s.sz.DrainingPerPolicy; j++ {
		slots = append(slots, strconv.Itoa(j))
	}
	return slots
}

func (s *scale) selector(i int, draining bool) []clusterv1beta1.ClusterPredicate {
	sel := metav1.LabelSelector{MatchLabels: map[string]string{"fleet": s.f.ns, "group": strconv.Itoa(i % s.groups)}}
	if draining {
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "slot", Operator: metav1.LabelSelectorOpNotIn, Values: s.drainingSlots()}}
	}
	return []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: sel}}}
}

// benchFleet runs benchmarks 3 (steady state), 4 (fleet scale) and 5 (growth) on one
// fleet and returns the manager that runs at the end (it is restarted at each size).
// With addonManager, the add-on manager's process runs beside it from the start, as
// in the chart, and is measured at each size.
func benchFleet(t *testing.T, r *benchreport.Report, fs fleetSizes, addonManager bool, mgr *manager, traffic *trafficSource) *manager {
	ctx := t.Context()
	var addons *manager
	if addonManager {
		addons = startAddonManager(t)
	}
	s := &scale{f: newFleet(t, "fleet"), sz: fs, traffic: traffic, groups: fs.Clusters[0] / fs.PerPlacement}
	s.policies = s.f.watchPolicies(t)
	interval := time.Duration(fs.IntervalSeconds * float64(time.Second))

	// The draining clusters keep a share of their policy's traffic over the threshold
	// (1 in DrainingPerPolicy+1 > 5%), so every check fails and they keep draining.
	rates := map[[2]string]float64{}
	for i := 0; i < fs.DrainingPolicies; i++ {
		g := i % s.groups
		for j := 0; j <= fs.DrainingPerPolicy; j++ {
			rates[[2]string{s.clusterName(g*fs.PerPlacement + j), s.pair(i)}] = 10
		}
	}
	traffic.set(rates)

	// Notifications configured as an admin does, every policy subscribed: the engine
	// runs beside the policy controller for the whole benchmark.
	notified := configureNotifications(t, s.f)

	grew := s.grow(t, fs.Clusters[0])
	t.Logf("%d ManagedClusters in %s", fs.Clusters[0], grew.Round(time.Millisecond))
	size, err := s.f.objectBytes(ctx, s.clusterName(0))
	if err != nil {
		t.Fatalf("read a ManagedCluster: %v", err)
	}
	t.Logf("each ManagedCluster is %d bytes as JSON", size)
	r.Add("Fleet", "every ManagedCluster of the fleet benchmarks: spec with client config and CA bundle; status with 4 conditions, capacity, allocatable, version, 12 claims",
		"size of one ManagedCluster as JSON", float64(size), "bytes", "")
	created := time.Now()
	parallel(t, fs.Policies, func(i int) error {
		name := fmt.Sprintf("p-%d", i)
		p := &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.f.ns},
			Spec:       clusterv1beta1.PlacementSpec{Predicates: s.selector(i, false)},
		}
		if _, err := s.f.Cluster.ClusterV1beta1().Placements(s.f.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
		policy := s.f.policy(name, name, traffic.job, s.pair(i), interval, 3)
		policy.Annotations = subscriptions
		return s.f.createPolicy(policy)
	})
	per := int32(fs.PerPlacement)
	settled := s.policies.waitAll(t, fs.Policies, 10*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		return p.Status.ObservedGeneration == p.Generation && p.Status.ActiveClusters == per && p.Status.DrainingClusters == 0 &&
			p.Status.ProxyPlacement != nil && p.Status.ProxyPlacement.NumberOfClusters == per
	})
	ready := time.Since(created)
	t.Logf("%d policies ready in %s", fs.Policies, ready.Round(time.Millisecond))
	_ = settled

	// 3. Steady state: nothing drains; the manager should do nothing at all.
	trailing, quietAfter := mgr.waitQuiet(t, 10*time.Second, 3*time.Minute)
	m0, u0 := mgr.sample(t)
	s.policies.recording(true)
	period := time.Duration(fs.SteadySeconds * float64(time.Second))
	time.Sleep(period) // the measured period, not a wait for a condition
	m1, u1 := mgr.sample(t)
	if changes := s.policies.recording(false); len(changes) > 0 {
		t.Logf("%d policy status changes in the steady period, the first ones:\n%s", len(changes), strings.Join(changes[:min(len(changes), 20)], "\n"))
	}
	const b3 = "3. Steady state"
	p3 := fmt.Sprintf("%d policies × %d clusters, %d ManagedClusters, nothing draining, %s", fs.Policies, fs.PerPlacement, fs.Clusters[0], period)
	r.Add(b3, p3, "time from creating the policies to every status ready", ready.Seconds(), "s", "")
	r.Add(b3, p3, "writes after every status was ready (events, mostly), until 10 s without any", trailing, "", "")
	r.Add(b3, p3, "time from every status ready to the last of those writes", quietAfter.Seconds(), "s", "")
	r.Add(b3, p3, "API writes in the period (api_writes_total)", delta(m0, m1, "traffic_migration_api_writes_total"), "", "0")
	r.Add(b3, p3, "Prometheus queries in the period (query_duration_seconds count)", delta(m0, m1, "traffic_migration_query_duration_seconds_count"), "", "0")
	r.Add(b3, p3, "policy syncs in the period (workqueue adds)", delta(m0, m1, queueAdds), "", "")
	for _, k := range changedKeys(m0, m1, "traffic_migration_api_writes_total{resource=") {
		r.Add(b3, p3, "API writes in the period to "+strings.TrimSuffix(strings.TrimPrefix(k, "traffic_migration_api_writes_total{resource="), "}"), delta(m0, m1, k), "", "")
	}
	r.Add(b3, p3, "manager RSS at the end", u1.rssBytes/(1<<20), "MiB", "")
	r.Add(b3, p3, "manager CPU", (u1.cpuSeconds-u0.cpuSeconds)/period.Minutes(), "CPU s/min", "")

	// Every draining policy's Placement drops DrainingPerPolicy of its clusters at once.
	parallel(t, fs.DrainingPolicies, func(i int) error {
		return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := s.f.Cluster.ClusterV1beta1().Placements(s.f.ns).Get(ctx, fmt.Sprintf("p-%d", i), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			p.Spec.Predicates = s.selector(i, true)
			_, err = s.f.Cluster.ClusterV1beta1().Placements(s.f.ns).Update(ctx, p, metav1.UpdateOptions{})
			return err == nil, nil
		})
	})
	wantDraining := wantDrainingOf(fs)
	s.policies.waitAll(t, fs.Policies, 5*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		var i int
		fmt.Sscanf(p.Name, "p-%d", &i)
		if i >= fs.DrainingPolicies {
			return p.Status.DrainingClusters == 0
		}
		checked := 0
		for _, c := range p.Status.Clusters {
			if c.Phase == trafficv1alpha1.ClusterDraining && c.LastResult == trafficv1alpha1.EvaluationFail {
				checked++
			}
		}
		return checked == fs.DrainingPerPolicy
	})

	// 4 and 5: the same draining work measured at each fleet size, with a restart.
	sizesTable := benchreport.Table{
		Title: "The fleet by size, beside OCM's placement controller",
		Intro: fmt.Sprintf("The same work at every size (%d policies × %d clusters, %d draining), with ManagedClusters of %d bytes each. "+
			"The placement controller caches the same ManagedClusters and runs from the start; the manager is restarted at every size.",
			fs.Policies, fs.PerPlacement, wantDrainingOf(fs), size),
		Header: []string{"ManagedClusters", "manager RSS (MiB)", "placement controller RSS (MiB)", "ratio", "manager CPU (s/min)", "placement controller CPU (s/min)",
			"restart, nothing changed: resync (s)", "restart, every spec changed: statuses (s)"},
	}
	defer func() { r.Tables = append(r.Tables, sizesTable) }()
	maxPercent := int32(5)
	for step, n := range fs.Clusters {
		grew := s.grow(t, n)
		settle := mgr.waitIdleQueue(t, 3*time.Minute)
		window := time.Duration(fs.WindowSeconds * float64(time.Second))
		m0, u0 := mgr.sample(t)
		p0 := placementUsage(t)
		a0 := addons.usageOrZero()
		time.Sleep(window) // the measured period
		m1, u1 := mgr.sample(t)
		p1 := placementUsage(t)
		a1 := addons.usageOrZero()
		draining := s.policies.sum(func(p *trafficv1alpha1.TrafficMigrationPolicy) int { return int(p.Status.DrainingClusters) })
		queries := delta(m0, m1, "traffic_migration_query_duration_seconds_count") / (window.Seconds() / fs.IntervalSeconds)

		// A restart that changes nothing: every policy is synced again from the caches.
		mgr.proc.Stop()
		start := time.Now()
		var err error
		if mgr, err = startManager(ctx); err != nil {
			t.Fatalf("restart the manager: %v", err)
		}
		readyAfter := time.Since(start)
		resync := mgr.waitResynced(t, start, fs.Policies, 5*time.Minute)
		uIdle := mgr.usageOrZero()
		mr, _ := mgr.sample(t)

		// A restart after every policy's spec changed while the manager was down: every
		// status must be written again.
		mgr.proc.Stop()
		if maxPercent == 5 {
			maxPercent = 6
		} else {
			maxPercent = 5
		}
		patch := []byte(fmt.Sprintf(`{"spec":{"trafficShare":{"maxPercent":%d}}}`, maxPercent))
		parallel(t, fs.Policies, func(i int) error {
			_, err := s.f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(s.f.ns).Patch(ctx, fmt.Sprintf("p-%d", i), "application/merge-patch+json", patch, metav1.PatchOptions{})
			return err
		})
		start = time.Now()
		if mgr, err = startManager(ctx); err != nil {
			t.Fatalf("restart the manager: %v", err)
		}
		s.policies.waitAll(t, fs.Policies, 5*time.Minute, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			return p.Status.ObservedGeneration == p.Generation
		})
		changed := time.Since(start)
		mc, _ := mgr.sample(t)
		uc := mgr.usageOrZero()

		params := fmt.Sprintf("%d ManagedClusters; %d policies × %d clusters; %d policies draining %d clusters each; interval %gs",
			n, fs.Policies, fs.PerPlacement, fs.DrainingPolicies, fs.DrainingPerPolicy, fs.IntervalSeconds)
		b := "5. Growth"
		if step == len(fs.Clusters)-1 {
			b = "4. Fleet scale"
		}
		r.Add(b, params, "clusters added before this size (time)", grew.Seconds(), "s", "")
		r.Add(b, params, "manager idle again after the additions (work queue empty)", settle.Seconds(), "s", "")
		r.Add(b, params, "draining clusters", float64(draining), "", "")
		r.Add(b, params, "Prometheus queries per interval", queries, "", fmt.Sprintf("= %d (draining clusters)", wantDraining))
		r.Add(b, params, "Prometheus queries per check (query count / evaluations)",
			delta(m0, m1, "traffic_migration_query_duration_seconds_count")/delta(m0, m1, "traffic_migration_evaluations_total"), "", "1")
		ratioGoal := ""
		if step == len(fs.Clusters)-1 {
			ratioGoal = "<= 1.5"
		}
		r.Add(b, params, "manager RSS", u1.rssBytes/(1<<20), "MiB", "< 256 MiB")
		r.Add(b, params, "manager working set (its memory cgroup, as the kubelet counts it)", float64(u1.cgroup.WorkingSet)/(1<<20), "MiB", "< 256 MiB")
		r.Add(b, params, "manager peak RSS (VmHWM)", u1.hwmBytes/(1<<20), "MiB", "< 256 MiB")
		r.Add(b, params, "manager OOM kills at the 256Mi limit", float64(u1.cgroup.OOMKills), "", "≤ 0")
		r.Add(b, params, "manager's Go memory limit (GOMEMLIMIT, set from its cgroup's limit)", m1["go_gc_gomemlimit_bytes"]/(1<<20), "MiB", "")
		r.Add(b, params, "notifications sent so far", float64(notified.Load()), "", "")
		if addons != nil {
			r.Add(b, params, "add-on manager working set (--controllers=addon-manager, its own process, running since the start)", float64(a1.cgroup.WorkingSet)/(1<<20), "MiB", "< 256 MiB")
			r.Add(b, params, "add-on manager peak RSS (VmHWM)", a1.hwmBytes/(1<<20), "MiB", "< 256 MiB")
			r.Add(b, params, "add-on manager OOM kills at the 256Mi limit", float64(a1.cgroup.OOMKills), "", "≤ 0")
			r.Add(b, params, "add-on manager CPU while draining", (a1.cpuSeconds-a0.cpuSeconds)/window.Minutes(), "CPU s/min", "")
		}
		r.Add(b, params, "OCM placement controller RSS (same ManagedClusters, running since the start)", p1.rssBytes/(1<<20), "MiB", "")
		r.Add(b, params, "manager RSS / placement controller RSS", u1.rssBytes/p1.rssBytes, "", ratioGoal)
		r.Add(b, params, "manager CPU while draining", (u1.cpuSeconds-u0.cpuSeconds)/window.Minutes(), "CPU s/min", "")
		r.Add(b, params, "OCM placement controller CPU in the same window", (p1.cpuSeconds-p0.cpuSeconds)/window.Minutes(), "CPU s/min", "")
		r.Add(b, params, "API writes per minute while draining", delta(m0, m1, "traffic_migration_api_writes_total")/window.Minutes(), "", "")
		r.Add(b, params, "restart, nothing changed: start to ready (readyz)", readyAfter.Seconds(), "s", "")
		r.Add(b, params, "restart, nothing changed: start to every policy synced (full resync)", resync.Seconds(), "s", "< 10 s")
		r.Add(b, params, "restart, nothing changed: RSS after the resync", uIdle.rssBytes/(1<<20), "MiB", "")
		r.Add(b, params, "restart, nothing changed: writes to proxies (Placements, PlacementDecisions) until resynced", proxyWrites(mr), "", "0")
		r.Add(b, params, "restart, nothing changed: other writes until resynced (the draining policies' own checks)", mr["traffic_migration_api_writes_total"]-proxyWrites(mr), "", "")
		r.Add(b, params, "restart, every spec changed: start to every status observing its generation", changed.Seconds(), "s", "")
		r.Add(b, params, "restart, every spec changed: API writes", mc["traffic_migration_api_writes_total"], "", "")
		r.Add(b, params, "restart, every spec changed: manager peak RSS (VmHWM) once every status is written", uc.hwmBytes/(1<<20), "MiB", "< 256 MiB")
		r.Add(b, params, "restart, every spec changed: manager working set", float64(uc.cgroup.WorkingSet)/(1<<20), "MiB", "< 256 MiB")
		r.Add(b, params, "restart, every spec changed: writes to proxies (the change moves no cluster)", proxyWrites(mc), "", "0")
		if step == len(fs.Clusters)-1 {
			// Where the memory goes at the largest fleet, in the report's directory.
			if top, err := mgr.heapProfile(ctx, filepath.Join(r.Dir, "manager-heap.pb.gz")); err != nil {
				t.Errorf("the manager's heap profile: %v", err)
			} else {
				r.HeapTop = fmt.Sprintf("The manager's heap at %d ManagedClusters (manager-heap.pb.gz beside this report), by memory in use:\n\n```\n%s```\n", n, top)
			}
		}
		sizesTable.Rows = append(sizesTable.Rows, []string{strconv.Itoa(n), benchreport.Format(u1.rssBytes / (1 << 20)), benchreport.Format(p1.rssBytes / (1 << 20)),
			benchreport.Format(u1.rssBytes / p1.rssBytes), benchreport.Format((u1.cpuSeconds - u0.cpuSeconds) / window.Minutes()), benchreport.Format((p1.cpuSeconds - p0.cpuSeconds) / window.Minutes()),
			benchreport.Format(resync.Seconds()), benchreport.Format(changed.Seconds())})
		t.Logf("%d clusters: %d draining, %.1f queries per interval, RSS %.0f MiB, resync %s / %s",
			n, draining, queries, u1.rssBytes/(1<<20), resync.Round(time.Millisecond), changed.Round(time.Millisecond))
	}
	return mgr
}

// wantDrainingOf is how many clusters drain in the fleet benchmark.
func wantDrainingOf(fs fleetSizes) int { return fs.DrainingPolicies * fs.DrainingPerPolicy }

// proxyWrites are the manager's writes to Placements and PlacementDecisions, with their
// status subresources, in its metrics.
func proxyWrites(m map[string]float64) float64 {
	var n float64
	for _, r := range []string{"placements", "placements/status", "placementdecisions", "placementdecisions/status"} {
		n += m["traffic_migration_api_writes_total{resource="+r+"}"]
	}
	return n
}

// placementUsage is what OCM's placement controller uses at this moment.
func placementUsage(t testing.TB) usage {
	t.Helper()
	u, err := usageOf(placementController.PID())
	if err != nil {
		t.Fatalf("read the placement controller's usage: %v", err)
	}
	return u
}

// changedKeys are the metrics whose name starts with prefix and whose value changed
// from m0 to m1, sorted.
func changedKeys(m0, m1 map[string]float64, prefix string) []string {
	var keys []string
	for k, v := range m1 {
		if strings.HasPrefix(k, prefix) && v != m0[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// queueAdds is the policy controller's work queue adds: one per policy sync.
var queueAdds = "workqueue_adds_total{name=" + policy.ControllerName + "}"

// policyWatch is an informer on the fleet namespace's policies, so that waiting on a
// thousand statuses does not list them all again and again.
type policyWatch struct {
	lister trafficlisters.TrafficMigrationPolicyNamespaceLister

	mu      sync.Mutex
	changes []string // status changes, while recording
	record  bool
}

func (f *fleet) watchPolicies(t testing.TB) *policyWatch {
	t.Helper()
	w := &policyWatch{}
	w.lister = f.policyInformer(t, w.changed)
	return w
}

// policyInformer starts an informer on the fleet namespace's policies that calls
// updated with each update, waits until it has synced, stops it when the test ends,
// and returns its lister.
func (f *fleet) policyInformer(t testing.TB, updated func(oldObj, newObj any)) trafficlisters.TrafficMigrationPolicyNamespaceLister {
	t.Helper()
	factory := trafficinformers.NewSharedInformerFactoryWithOptions(f.Traffic, 0, trafficinformers.WithNamespace(f.ns))
	inf := factory.Traffic().V1alpha1().TrafficMigrationPolicies()
	lister := inf.Lister().TrafficMigrationPolicies(f.ns)
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: updated})
	stop := make(chan struct{})
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.Informer().HasSynced) {
		t.Fatal("the policy informer never synced")
	}
	t.Cleanup(func() { close(stop) })
	return lister
}

// changed records, while recording, what changed in a policy's status.
func (w *policyWatch) changed(oldObj, newObj any) {
	old, ok1 := oldObj.(*trafficv1alpha1.TrafficMigrationPolicy)
	updated, ok2 := newObj.(*trafficv1alpha1.TrafficMigrationPolicy)
	if !ok1 || !ok2 || equality.Semantic.DeepEqual(old.Status, updated.Status) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.record {
		return
	}
	var what []string
	for _, c := range updated.Status.Conditions {
		if o := meta.FindStatusCondition(old.Status.Conditions, c.Type); o == nil || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message {
			what = append(what, fmt.Sprintf("%s=%s/%s %q", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	rows := map[string]trafficv1alpha1.ClusterStatus{}
	for _, r := range old.Status.Clusters {
		rows[r.Name] = r
	}
	for _, r := range updated.Status.Clusters {
		if o, ok := rows[r.Name]; !ok || !equality.Semantic.DeepEqual(o, r) {
			what = append(what, fmt.Sprintf("row %s: %s %q", r.Name, r.Phase, r.Message))
		}
	}
	w.changes = append(w.changes, fmt.Sprintf("%s %s: %s", time.Now().Format("15:04:05.000"), updated.Name, strings.Join(what, "; ")))
}

// recording starts or stops recording status changes and returns those recorded.
func (w *policyWatch) recording(on bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record = on
	out := w.changes
	w.changes = nil
	return out
}

// all returns the policies as the watch sees them now.
func (w *policyWatch) all() []*trafficv1alpha1.TrafficMigrationPolicy {
	list, _ := w.lister.List(labels.Everything())
	return list
}

// waitAll waits until ok holds for want policies and returns how long that took.
func (w *policyWatch) waitAll(t testing.TB, want int, timeout time.Duration, ok func(p *trafficv1alpha1.TrafficMigrationPolicy) bool) time.Duration {
	t.Helper()
	start := time.Now()
	var good int
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		list, err := w.lister.List(labels.Everything())
		if err != nil {
			return false, nil
		}
		good = 0
		for _, p := range list {
			if ok(p) {
				good++
			}
		}
		return good == want, nil
	})
	if err != nil {
		t.Fatalf("%d of %d policies reached the expected state in %s", good, want, timeout)
	}
	return time.Since(start)
}

func (w *policyWatch) sum(fn func(p *trafficv1alpha1.TrafficMigrationPolicy) int) int {
	list, _ := w.lister.List(labels.Everything())
	total := 0
	for _, p := range list {
		total += fn(p)
	}
	return total
}

// sample reads the manager's metrics and its resource usage at one moment.
func (m *manager) sample(t testing.TB) (map[string]float64, usage) {
	t.Helper()
	metrics, err := m.metrics()
	if err != nil {
		t.Fatalf("read the manager's metrics: %v", err)
	}
	u, err := m.usage()
	if err != nil {
		t.Fatalf("read the manager's usage: %v", err)
	}
	return metrics, u
}

// waitQuiet waits until the manager has made no API write for quiet, at most max, and
// returns the writes it made meanwhile and when the last one was.
func (m *manager) waitQuiet(t testing.TB, quiet, max time.Duration) (float64, time.Duration) {
	t.Helper()
	start := time.Now()
	first, _ := m.sample(t)
	last, lastAt := first, start
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, max, true, func(context.Context) (bool, error) {
		now, _ := m.sample(t)
		if now["traffic_migration_api_writes_total"] != last["traffic_migration_api_writes_total"] {
			last, lastAt = now, time.Now()
		}
		return time.Since(lastAt) >= quiet, nil
	})
	if err != nil {
		t.Logf("the manager still wrote after %s", max)
	}
	return delta(first, last, "traffic_migration_api_writes_total"), lastAt.Sub(start)
}

// waitIdleQueue waits until the policy controller's work queue is empty and nothing
// is in progress, three polls in a row, and returns how long that took.
func (m *manager) waitIdleQueue(t testing.TB, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	idle := 0
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		mm, err := m.metrics()
		if err != nil {
			return false, nil
		}
		if mm["workqueue_depth{name="+policy.ControllerName+"}"] == 0 && mm["workqueue_unfinished_work_seconds{name="+policy.ControllerName+"}"] == 0 {
			idle++
		} else {
			idle = 0
		}
		return idle >= 3, nil
	})
	if err != nil {
		t.Logf("the policy controller's queue was still busy after %s", timeout)
	}
	return time.Since(start)
}

// waitResynced waits until a freshly started manager has taken every one of n
// policies from its queue and finished them, and returns the time since start.
func (m *manager) waitResynced(t testing.TB, start time.Time, n int, timeout time.Duration) time.Duration {
	t.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		mm, err := m.metrics()
		if err != nil {
			return false, nil
		}
		done := mm[queueAdds] >= float64(n) && mm["workqueue_depth{name="+policy.ControllerName+"}"] == 0 &&
			mm["workqueue_unfinished_work_seconds{name="+policy.ControllerName+"}"] == 0
		at = time.Now()
		return done, nil
	})
	if err != nil {
		t.Fatalf("the restarted manager did not sync its %d policies in %s", n, timeout)
	}
	return at.Sub(start)
}

// usageOrZero is usage, or zeros when it cannot be read or there is no manager.
func (m *manager) usageOrZero() usage {
	if m == nil {
		return usage{}
	}
	u, _ := m.usage()
	return u
}
