// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

const (
	gatewayNamespace = "gateway-system"
	gatewayName      = "gw"
)

// migration is one test's small fleet: two clusters, a real Placement that selects
// the first, a traffic source and a policy.
type migration struct {
	f                  *fleet
	ns                 string
	c1, c2             string
	traffic            *trafficSource
	placement, proxy   string
	siteLabel          string
	site1, site2       string
	policyName, secret string
}

// newMigration sets up a fleet of two ready clusters whose real Placement selects c1,
// with c1 carrying all the traffic.
func newMigration(t *testing.T, prefix string) *migration {
	t.Helper()
	return newMigrationIn(t, newFleet(t), prefix)
}

// newMigrationIn is newMigration in the fleet f, which may be on a hub of the test's own.
func newMigrationIn(t *testing.T, f *fleet, prefix string) *migration {
	t.Helper()
	m := &migration{f: f, ns: f.namespace(t, prefix), placement: "gateway", proxy: "gateway-proxy", policyName: "migrate", secret: "prometheus"}
	m.c1, m.c2 = m.ns+"-c1", m.ns+"-c2"
	m.siteLabel, m.site1, m.site2 = "site-"+m.ns, "one", "two"
	f.managedCluster(t, m.c1, map[string]string{m.siteLabel: m.site1})
	f.managedCluster(t, m.c2, map[string]string{m.siteLabel: m.site2})
	f.reportAgent(t, m.c1, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c1})
	f.reportAgent(t, m.c2, gatewayNamespace, gatewayName, true, map[string]string{"cluster": m.c2})
	m.traffic = newTrafficSource(t)
	m.traffic.SetByValue(map[string]float64{m.c1: 100, m.c2: 0})
	f.prometheusSecret(t, m.ns, m.secret, map[string]string{"url": bed.Prometheus.URL})
	f.placement(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site1})
	f.waitForClusters(t, m.ns, m.placement, []string{m.c1}, 30*time.Second)
	return m
}

// policy is a trafficShare policy with short timings.
func (m *migration) policy() *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: m.policyName, Namespace: m.ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: m.placement},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewayNamespace},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: m.secret},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:            "test_gateway_requests_total",
				Selector:          fmt.Sprintf("job=%q", m.traffic.job),
				ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`,
				Window:            "4s",
				MaxPercent:        5,
			},
			Interval:             &metav1.Duration{Duration: time.Second},
			ConsecutiveSuccesses: 3,
			MinDrainDuration:     &metav1.Duration{Duration: 8 * time.Second},
		},
	}
}

// start creates the policy, changed by edit when not nil, and waits until the proxy
// lists c1, as the real Placement does.
func (m *migration) start(t *testing.T, edit func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	p := m.policy()
	if edit != nil {
		edit(p)
	}
	m.f.createPolicy(t, p)
	m.f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	return p
}

// startShortDrain is start with short drain timings (two passing checks, a
// minDrainDuration of 2s), changed by edit when not nil, and cluster1 carrying c1Share
// percent of the traffic: it waits, too, until Prometheus has cluster1's share on the
// same side of the policy's 5% as c1Share, so that its checks pass (c1Share <= 5) or
// fail, not find no data.
func (m *migration) startShortDrain(t *testing.T, c1Share float64, edit func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	m.traffic.SetByValue(map[string]float64{m.c1: c1Share, m.c2: 100 - c1Share})
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.ConsecutiveSuccesses = 2
		p.Spec.MinDrainDuration = &metav1.Duration{Duration: 2 * time.Second}
		if edit != nil {
			edit(p)
		}
	})
	passing := c1Share <= 5
	waitForPromValue(t, c1ShareQuery(m, p), func(v float64) bool { return (v <= 5) == passing })
	return p
}

// waitFailing waits until c1 drains and its last check failed.
func (m *migration) waitFailing(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy) {
	t.Helper()
	m.f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationFail
	})
}

// waitHeld waits until c1 has drained well past its minDrainDuration and the checks
// that would have removed it, with ok true of the policy and c1's row, and checks that
// the proxy still lists c1 beside the clusters in also. It returns the policy.
func (m *migration) waitHeld(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, also []string,
	ok func(*trafficv1alpha1.TrafficMigrationPolicy, *trafficv1alpha1.ClusterStatus) bool) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	held := p.Spec.MinDrainDuration.Duration + 4*p.Spec.Interval.Duration*time.Duration(p.Spec.ConsecutiveSuccesses)
	got := m.f.waitForPolicy(t, m.ns, p.Name, 90*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.DrainStartTime != nil &&
			time.Since(r.DrainStartTime.Time) > held && ok(p, r)
	})
	m.f.waitForClusters(t, m.ns, m.proxy, append([]string{m.c1}, also...), time.Second)
	return got
}

// moveToC2 edits the real Placement to select c2 instead of c1.
func (m *migration) moveToC2(t *testing.T) {
	t.Helper()
	m.f.selectClusters(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site2})
	m.f.waitForClusters(t, m.ns, m.placement, []string{m.c2}, 30*time.Second)
}

// TestSeedStory is the migration the product exists for: the admin moves the Gateway's
// Placement from cluster1 to cluster2; the proxy lists both at once; cluster1 leaves the
// proxy only once its share of the traffic stayed under 5% for consecutiveSuccesses
// checks and minDrainDuration has passed. OCM's placement controller runs throughout,
// and a consumer reads the proxy with sdk-go's tracker.
// Rules: 1, 2, 3, 10.
func TestSeedStory(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "seed")
	f := m.f
	p := m.policy()
	f.createPolicy(t, p)

	// The proxy mirrors the real Placement, and is a Placement OCM leaves alone.
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	proxy, err := f.Cluster.ClusterV1beta1().Placements(m.ns).Get(t.Context(), m.proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if proxy.Annotations[clusterv1beta1.PlacementDisableAnnotation] != "true" || proxy.Labels[trafficv1alpha1.PolicyLabel] != p.Name {
		t.Errorf("proxy Placement not marked as traffic-migration's: annotations %v, labels %v", proxy.Annotations, proxy.Labels)
	}
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && p.Status.ActiveClusters == 1 && p.Status.DrainingClusters == 0
	})

	// Half the traffic still reaches cluster1 after the move: it drains, and stays.
	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	m.moveToC2(t)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, 5*time.Second)
	drainStart := time.Now()
	m.waitFailing(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, time.Second)

	// The traffic moves; cluster1 leaves once the gate passes, and not before.
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
	shifted := time.Now()
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 90*time.Second)
	removedSeen := time.Now()

	// The status is written after the decisions: wait for it to tell the removal.
	got := f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
	})
	r := fixture.PolicyRow(got, m.c1)
	if r == nil || r.Phase != trafficv1alpha1.ClusterRemoved || r.RemovalTime == nil || r.DrainStartTime == nil {
		t.Fatalf("cluster1 should have a Removed row with its times:\n%s", fixture.PolicyStatus(got))
	}
	if d := r.RemovalTime.Sub(r.DrainStartTime.Time); d < p.Spec.MinDrainDuration.Duration {
		t.Errorf("cluster1 removed %s after its drain started, before minDrainDuration %s", d, p.Spec.MinDrainDuration.Duration)
	}
	// Three passing checks a second apart need at least two seconds after the share,
	// as Prometheus computes it over its window, first fell under the threshold.
	if d := removedSeen.Sub(shifted); d < 2*time.Second {
		t.Errorf("cluster1 removed %s after its traffic fell: too early for 3 checks 1s apart", d)
	}
	if drainStart.After(removedSeen) || r.ResolvedQuery == "" || r.LastResult != trafficv1alpha1.EvaluationPass {
		t.Errorf("unexpected row after removal: %+v", r)
	}
	t.Logf("cluster1 drained %s; removed %s after its traffic fell under 5%%", r.RemovalTime.Sub(r.DrainStartTime.Time), removedSeen.Sub(shifted).Round(time.Millisecond))

	// Only traffic-migration wrote the proxy's decisions: OCM's placement controller
	// neither deleted nor rewrote them.
	decisions, err := f.Cluster.ClusterV1beta1().PlacementDecisions(m.ns).List(t.Context(), metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + m.proxy})
	if err != nil {
		t.Fatal(err)
	}
	if len(decisions.Items) != 1 {
		t.Errorf("want one proxy decision, got %d", len(decisions.Items))
	}
	for _, d := range decisions.Items {
		for _, mf := range d.ManagedFields {
			if mf.Manager != policy.ControllerName {
				t.Errorf("proxy decision %s was written by %q", d.Name, mf.Manager)
			}
		}
	}
	proxy, err = f.Cluster.ClusterV1beta1().Placements(m.ns).Get(t.Context(), m.proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if proxy.Status.NumberOfSelectedClusters != 1 || len(proxy.Status.DecisionGroups) != 1 || proxy.Status.DecisionGroups[0].Decisions[0] != m.proxy+"-decision-1" {
		t.Errorf("proxy Placement status does not match its decisions: %+v", proxy.Status)
	}
}
