// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestProxyComesBack deletes the proxy Placement and every one of its decisions in the
// middle of a drain, as a careless admin or a hostile tenant could: the manager writes
// them again within seconds with the draining cluster listed, from the drain state its
// status keeps, and the cluster leaves only once its gate passes.
// Rules: 2, 12.
func TestProxyComesBack(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "restore")
	f := m.f
	p := m.policy()
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	// All the traffic stays on c1: its checks fail, and it drains.
	m.moveToC2(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 30*time.Second)
	before := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastEvaluationTime != nil && r.LastEvaluationTime.Sub(r.DrainStartTime.Time) >= 2*time.Second
	})
	drainStart := fixture.PolicyRow(before, m.c1).DrainStartTime

	ctx := t.Context()
	deleted := time.Now()
	if err := f.Cluster.ClusterV1beta1().Placements(m.ns).Delete(ctx, m.proxy, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the proxy Placement: %v", err)
	}
	decisions := f.Cluster.ClusterV1beta1().PlacementDecisions(m.ns)
	list, err := decisions.List(ctx, metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + m.proxy})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("list the proxy's decisions: %v (%d found)", err, len(list.Items))
	}
	for _, d := range list.Items {
		if err := decisions.Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete decision %s: %v", d.Name, err)
		}
	}

	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 10*time.Second)
	restoredIn := time.Since(deleted)
	if e := f.waitForWarning(t, m.ns, p.Name, policy.ReasonProxyRestored, 10*time.Second); !strings.Contains(e.Note, m.c1) {
		t.Errorf("event %s does not name %s: %q", policy.ReasonProxyRestored, m.c1, e.Note)
	}
	after := f.getPolicy(t, m.ns, p.Name)
	if r := fixture.PolicyRow(after, m.c1); r == nil || r.Phase != trafficv1alpha1.ClusterDraining || !r.DrainStartTime.Equal(drainStart) {
		t.Errorf("the drain of %s did not go on from %v:\n%s", m.c1, drainStart, fixture.PolicyStatus(after))
	}

	// Once its traffic is gone, the gate removes it, and only then.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
	got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	if r := fixture.PolicyRow(got, m.c1); !strings.Contains(r.Message, "removal gate passed") || r.ConsecutiveSuccesses < p.Spec.ConsecutiveSuccesses {
		t.Errorf("%s left the proxy without its gate:\n%s", m.c1, fixture.PolicyStatus(got))
	}
	t.Logf("proxy and decisions deleted %s after the drain started; both back, %s listed, %s later",
		deleted.Sub(drainStart.Time).Round(time.Second), m.c1, restoredIn.Round(time.Millisecond))
}

// guardCeiling is the hub's ceiling on drains in TestSharedHub: longer than the
// ordinary drain there, which lasts its minDrainDuration (8s) and a few checks.
const guardCeiling = 25 * time.Second

// TestSharedHub runs, on a hub of its own, a manager that serves tenants who cannot be
// trusted, with an ordinary policy among them, and measures what they cost it:
//
//   - a tenant whose template would spin a CPU and render gigabytes (its CRD is one of
//     an older release, without the rules that refuse such templates at admission), for
//     16 draining clusters at once;
//   - a tenant whose Prometheus holds every query until the manager's timeout, for the
//     same 16 clusters;
//   - a tenant whose Prometheus answers without end;
//   - a tenant whose Secret names a Prometheus outside the hub admin's allowlist;
//   - a tenant whose cluster never drains, under the hub's ceiling (Hold, then the
//     admin changes it to Remove).
//
// The ordinary drain finishes in its normal time with its checks at their interval,
// the manager stays ready with its memory bounded, and each hostile policy says why
// its checks fail.
func TestSharedHub(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	own, f := newOwnHub(t)
	dropQueryRules(t, own)
	startGuarded := func(action trafficv1alpha1.DeadlineAction) *testbed.Manager {
		mgr, err := own.StartManager(ctx, testbed.ManagerOptions{Args: []string{"-v=2", "--max-drain-duration=" + guardCeiling.String(),
			"--on-max-drain-duration=" + string(action), "--prometheus-allowlist=127.0.0.0/8"}})
		if err != nil {
			t.Fatalf("start the manager: %v", err)
		}
		return mgr
	}
	mgr := startGuarded(trafficv1alpha1.DeadlineHold)
	ready := watchReady(t, mgr)

	// The hostile policies share 16 clusters that all leave their real Placements.
	hostile := f.namespace(t, "hostile")
	victims := make([]string, 16)
	for i := range victims {
		victims[i] = fmt.Sprintf("%s-v%02d", hostile, i)
	}
	for i, c := range append(slices.Clone(victims), hostile+"-new") {
		site := "old"
		if i == len(victims) {
			site = "new"
		}
		f.managedCluster(t, c, map[string]string{"site-" + hostile: site})
		f.reportAgent(t, c, gatewayNamespace, gatewayName, true, map[string]string{"cluster": c})
	}
	slow := newPromFront(t, false, holdFor(promcheck.DefaultQueryTimeout+5*time.Second))
	f.prometheusSecret(t, hostile, "slow", map[string]string{promcheck.KeyURL: slow.URL})
	hostilePolicy := func(name, secret, query string) {
		f.placement(t, hostile, name, map[string]string{"site-" + hostile: "old"})
		f.waitForClusters(t, hostile, name, victims, 30*time.Second)
		f.createPolicy(t, &trafficv1alpha1.TrafficMigrationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hostile},
			Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
				PlacementRef:          trafficv1alpha1.PlacementReference{Name: name},
				TargetRef:             trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewayNamespace},
				PrometheusSecret:      trafficv1alpha1.SecretReference{Name: secret},
				MetricsQuery:          query,
				ExpectedMetricsResult: "<= 5",
				Interval:              &metav1.Duration{Duration: time.Second},
			},
		})
	}
	hostilePolicy("spin", "slow", `x{c="{{ range 1000000000 }}{{ printf "%099999999d" 1 }}{{ end }}"}`)
	hostilePolicy("hold", "slow", `sum(rate(x{cluster={{ .Cluster.Name | quote }}}[1m]))`)

	// An endless answer, a Prometheus outside the allowlist, and a drain that never ends.
	endless := newEndlessProm(t)
	flood := newMigrationIn(t, f, "flood")
	floodPolicy := flood.policy()
	flood.useSecret(t, floodPolicy, map[string]string{promcheck.KeyURL: endless.URL})
	denied := newMigrationIn(t, f, "denied")
	deniedPolicy := denied.policy()
	denied.useSecret(t, deniedPolicy, map[string]string{promcheck.KeyURL: "http://[::1]:9090"})
	stuck := newMigrationIn(t, f, "stuck")
	stuckPolicy := stuck.policy()
	ordinary := newMigrationIn(t, f, "ordinary")
	ordinaryPolicy := ordinary.policy()
	for _, m := range []struct {
		m *migration
		p *trafficv1alpha1.TrafficMigrationPolicy
	}{{flood, floodPolicy}, {denied, deniedPolicy}, {stuck, stuckPolicy}, {ordinary, ordinaryPolicy}} {
		f.createPolicy(t, m.p)
		f.waitForClusters(t, m.m.ns, m.m.proxy, []string{m.m.c1}, 30*time.Second)
	}

	// Everything moves at once; the ordinary traffic follows its Placement.
	for _, name := range []string{"spin", "hold"} {
		f.selectClusters(t, hostile, name, map[string]string{"site-" + hostile: "new"})
	}
	ordinary.traffic.SetByValue(map[string]float64{ordinary.c1: 0, ordinary.c2: 100})
	for _, m := range []*migration{flood, denied, stuck, ordinary} {
		m.moveToC2(t)
	}
	moved := time.Now()

	// The ordinary drain: minDrainDuration (8s) and three passing checks a second
	// apart once its share fell, as on a hub of its own.
	f.waitForClusters(t, ordinary.ns, ordinary.proxy, []string{ordinary.c2}, 40*time.Second)
	ordinaryDrain := time.Since(moved)
	done := f.waitForPolicy(t, ordinary.ns, ordinaryPolicy.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, ordinary.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	row := fixture.PolicyRow(done, ordinary.c1)
	var worstGap time.Duration
	for i := 1; i < len(row.History); i++ {
		worstGap = max(worstGap, row.History[i].Time.Sub(row.History[i-1].Time.Time))
	}
	// Checks are due a second apart and stamped in whole seconds: a check that waited
	// for a slot held by the slow tenant (10s) would show as a gap of 10s or more.
	if worstGap > 3*time.Second {
		t.Errorf("the ordinary policy's checks were up to %s apart, interval 1s: %+v", worstGap, row.History)
	}
	if ordinaryDrain > 30*time.Second {
		t.Errorf("the ordinary drain took %s with the hostile tenants beside it", ordinaryDrain)
	}

	// Each hostile policy says why.
	expectCheck := func(ns, name, cluster, reason string, says ...string) {
		t.Helper()
		got := f.waitForPolicy(t, ns, name, 40*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
			r := fixture.PolicyRow(p, cluster)
			return c != nil && c.Reason == reason && r != nil && r.Phase != trafficv1alpha1.ClusterRemoved && r.LastEvaluationTime != nil
		})
		r := fixture.PolicyRow(got, cluster)
		for _, s := range says {
			if !strings.Contains(r.Message, s) {
				t.Errorf("policy %s/%s: row of %s does not say %q: %s", ns, name, cluster, s, r.Message)
			}
		}
	}
	expectCheck(hostile, "spin", victims[0], trafficv1alpha1.ReasonTemplateFailed, "range", "not allowed")
	expectCheck(hostile, "hold", victims[0], trafficv1alpha1.ReasonTimeout, "did not answer within")
	expectCheck(flood.ns, floodPolicy.Name, flood.c1, trafficv1alpha1.ReasonAnswerTooLarge)
	expectCheck(denied.ns, deniedPolicy.Name, denied.c1, trafficv1alpha1.ReasonURLNotAllowed, "allowlist")
	if sent, most := endless.most.Load(), int64(promcheck.DefaultMaxAnswerBytes+16<<20); sent > most {
		t.Errorf("the manager let the endless server send %d bytes of one answer, more than %d", sent, most)
	}

	// The ceiling holds the cluster whose traffic never leaves, and says so.
	held := f.waitForPolicy(t, stuck.ns, stuckPolicy.Name, guardCeiling+20*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, stuck.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterHeld
	})
	r := fixture.PolicyRow(held, stuck.c1)
	heldAfter := time.Since(r.DrainStartTime.Time)
	if !strings.Contains(r.Message, "the hub's maximum drain duration exceeded") || heldAfter < guardCeiling {
		t.Errorf("the ceiling held %s after %s (ceiling %s): %s", stuck.c1, heldAfter, guardCeiling, r.Message)
	}
	if c := condition(held, trafficv1alpha1.ConditionHeld); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "the hub admin bounds every drain at 25s, then Hold") {
		t.Errorf("the Held condition does not show the hub's ceiling: %+v", c)
	}
	f.waitForClusters(t, stuck.ns, stuck.proxy, []string{stuck.c1, stuck.c2}, time.Second)

	// The manager stayed ready throughout, with its memory bounded.
	if n := ready.failures.Load(); n > 0 {
		t.Errorf("the manager was not ready %d times out of %d probes", n, ready.probes.Load())
	}
	peak := peakRSS(t, mgr.Process.PID())
	if peak > 200<<20 {
		t.Errorf("the manager's peak RSS is %d MiB with the hostile tenants, want under 200 MiB", peak>>20)
	}
	t.Logf("ordinary drain %s (checks at most %s apart); %d probes of /readyz, none failed; manager peak RSS %d MiB; the endless server sent at most %d MiB of one answer",
		ordinaryDrain.Round(time.Millisecond), worstGap, ready.probes.Load(), peak>>20, endless.most.Load()>>20)
	ready.stop()

	// The admin changes the ceiling's action to Remove: the held cluster goes at once,
	// although its checks still fail.
	mgr.Process.Stop()
	restarted := time.Now()
	startGuarded(trafficv1alpha1.DeadlineRemove)
	f.waitForClusters(t, stuck.ns, stuck.proxy, []string{stuck.c2}, 20*time.Second)
	gone := f.waitForPolicy(t, stuck.ns, stuckPolicy.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, stuck.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	if r := fixture.PolicyRow(gone, stuck.c1); r.Message != "removed: the hub's maximum drain duration exceeded" {
		t.Errorf("row of %s: %q", stuck.c1, r.Message)
	}
	f.waitForEventNote(t, stuck.ns, string(decision.RemovalHubMaxDrainDuration), stuck.c1, 10*time.Second)
	t.Logf("with the action Remove, %s left %s after the manager restarted", stuck.c1, time.Since(restarted).Round(time.Millisecond))
}

// dropQueryRules takes the rules that refuse unsafe templates out of the hub's CRD, as
// a CRD of an older release lacks them: the manager must refuse them itself.
func dropQueryRules(t *testing.T, b *testbed.Bed) {
	t.Helper()
	ctx := t.Context()
	client, err := apiextensionsclient.NewForConfig(b.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx, "trafficmigrationpolicies.traffic.open-cluster-management.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dropped := 0
	for i := range crd.Spec.Versions {
		spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
		query := spec.Properties["metricsQuery"]
		dropped += len(query.XValidations)
		query.XValidations = nil
		spec.Properties["metricsQuery"] = query
		crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	}
	if dropped == 0 {
		t.Fatal("the CRD has no rules on metricsQuery to drop")
	}
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server applies a CRD's new schema a moment later: wait until a template
	// the rules refuse is admitted.
	f := newFleetOn(t, b.Hub)
	ns := b.Hub.Namespace(t, "crd")
	probe := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:          trafficv1alpha1.PlacementReference{Name: "none"},
			TargetRef:             trafficv1alpha1.GatewayReference{Name: gatewayName},
			PrometheusSecret:      trafficv1alpha1.SecretReference{Name: "none"},
			MetricsQuery:          `{{ range 1 }}x{{ end }}`,
			ExpectedMetricsResult: "<= 5",
		},
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, nil
	})
	if err != nil {
		t.Fatal("the API server kept refusing a range template after its rule was dropped")
	}
}

// readyProbe asks a manager's /readyz every 100ms until stopped, counting failures.
type readyProbe struct {
	probes, failures atomic.Int64
	stop             func()
}

func watchReady(t *testing.T, m *testbed.Manager) *readyProbe {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &readyProbe{}
	done := make(chan struct{})
	r.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 2 * time.Second}
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.HealthURL, nil)
			resp, err := client.Do(req)
			if ctx.Err() != nil {
				return true, nil
			}
			r.probes.Add(1)
			if err != nil || resp.StatusCode != http.StatusOK {
				r.failures.Add(1)
			}
			if resp != nil {
				resp.Body.Close()
			}
			return false, nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// peakRSS is the most memory the process ever had resident (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	proc, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	status, err := proc.NewStatus()
	if err != nil {
		t.Fatal(err)
	}
	return int64(status.VmHWM)
}
