// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// seedStory is the migration the product exists for, on the real stack: a real
// Placement moves the Gateway from cluster1 to cluster2, and a ManifestWorkReplicaSet
// that follows the proxy Placement puts the Gateway and its HTTPRoute on the clusters,
// where Traefik programs them. Readiness and labels come from the real agents.
// The policy has spec.dns: the manager publishes the real Placement's Programmed
// Gateways in a DNSEndpoint, which external-dns's engine writes into the zone of a real
// CoreDNS (the test bed's DNS). cluster1 carries little traffic already, but cluster2's
// Traefik cannot program the Gateway (its listener's port is no entry point's): CoreDNS
// keeps answering cluster1's address (make-before-break), so cluster1's drain clock
// does not start, and cluster1 stays in the proxy after its checks pass, as no other
// cluster would have the Gateway ready. Once cluster2's Traefik has the entry point and
// programs the Gateway, CoreDNS answers cluster2's address only, DNS lets go of
// cluster1 then, and cluster1 leaves no sooner than its minimum drain after that; the
// Gateway leaves cluster1. The leading manager's pod is killed once during the drain.
func (a *addonTest) seedStory(t *testing.T) {
	ctx := t.Context()
	const (
		interval             = time.Second
		consecutiveSuccesses = 3
		minDrainDuration     = 8 * time.Second
	)

	// The hub: the Placement's namespace, bound to a cluster set of both clusters,
	// which carry their regions.
	if _, err := hub.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewaySystem}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	regions := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: regionLabel, Operator: metav1.LabelSelectorOpExists},
	}}
	if err := fixture.CreateClusterSet(ctx, hub.Cluster, clusterSetName, regions); err != nil {
		t.Fatal(err)
	}
	if err := fixture.BindClusterSet(ctx, hub.Cluster, gatewaySystem, clusterSetName); err != nil {
		t.Fatal(err)
	}
	for c, region := range map[string]string{cluster1: "east", cluster2: "west"} {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := hub.Cluster.ClusterV1().ManagedClusters().Patch(ctx, c, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The spokes have the Gateway's namespace, its backend and the metrics pipeline
	// (reports). cluster2's Traefik is misconfigured: its web entry point is not on the
	// port of the Gateway's listener, so it cannot program the Gateway that the proxy
	// will put there.
	if err := a.traefik[cluster2].SetWebPort(ctx, testbed.TraefikWebPort+1); err != nil {
		t.Fatal(err)
	}
	gatewayCondition := trafficv1alpha1.GatewayConditionType(gatewaySystem, gatewayName)

	// The clients: little of the traffic still reaches cluster1. cluster2's Traefik
	// counts what reaches its web entry point, though it routes none of it yet.
	traffic := startTraffic(t, a.traefik)
	traffic.set(map[string]float64{cluster1: 1, cluster2: 30})
	for _, c := range []string{cluster1, cluster2} {
		waitRemoteWritten(t, clusterLabelValues[c])
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: gatewaySystem}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := hub.Kube.CoreV1().Secrets(gatewaySystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName, Namespace: gatewaySystem},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: regionPredicates("east")},
	}
	if _, err := hub.Cluster.ClusterV1beta1().Placements(gatewaySystem).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster1)

	// The hub's DNS: external-dns's DNSEndpoint CRD and the test bed's CoreDNS, written
	// by external-dns's engine.
	dns := startStoryDNS(t)

	policy := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: gatewaySystem},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:       trafficv1alpha1.PlacementReference{Name: placementName},
			ProxyPlacementName: proxyName,
			TargetRef:          trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewaySystem},
			PrometheusSecret:   trafficv1alpha1.SecretReference{Name: secret.Name},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:            trafficMetric,
				Selector:          trafficSelector,
				ClusterLabel:      trafficClusterKey,
				ClusterLabelValue: fmt.Sprintf(`{{ index .Cluster.Labels %q }}`, trafficClusterKey),
				Window:            "10s",
				MaxPercent:        5,
			},
			Interval:             &metav1.Duration{Duration: interval},
			ConsecutiveSuccesses: consecutiveSuccesses,
			MinDrainDuration:     &metav1.Duration{Duration: minDrainDuration},
			DNS: &trafficv1alpha1.DNSPublishing{
				Hostnames: []trafficv1alpha1.Hostname{storyHostname},
				TTL:       &metav1.Duration{Duration: storyDNSTTL},
				// The manager's pod asks the bed's CoreDNS, the zone's authoritative
				// server, whether it let go of cluster1.
				Verify: &trafficv1alpha1.DNSVerification{Nameservers: []trafficv1alpha1.Nameserver{trafficv1alpha1.Nameserver(dns.Addr())}},
			},
		},
	}
	policies := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(gatewaySystem)
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, proxyName, cluster1)

	// The Gateway and its route follow the proxy Placement: on cluster1 only, where
	// Traefik programs the Gateway and routes its requests to cluster1's backend.
	if _, err := hub.Work.WorkV1alpha1().ManifestWorkReplicaSets(gatewaySystem).Create(ctx, gatewayReplicaSet(t), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAddonCondition(t, cluster1, gatewayCondition, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "Addresses: "+a.traefik[cluster1].Address))
	waitServedBy(t, a.traefik[cluster1], http.StatusOK, cluster1)
	if _, err := a.gateways[cluster2].GatewayV1().Gateways(gatewaySystem).Get(ctx, gatewayName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Gateway is on cluster2 before the proxy selects it: %v", err)
	}
	a.waitPolicy(t, "Ready with cluster1 active", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if !meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionReady) {
			return errors.New("not Ready")
		}
		if p.Status.ActiveClusters != 1 || p.Status.DrainingClusters != 0 {
			return errors.New("not one active cluster")
		}
		return dnsPublishes(p, cluster1)
	})
	// Traefik writes its node's address in the Gateway's status; the agent reports it,
	// and the manager publishes it: CoreDNS answers it.
	waitAnswer(t, dns, a.traefik[cluster1].Address)

	// The admin moves the Gateway to cluster2, whose Gateway is not programmed yet.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := hub.Cluster.ClusterV1beta1().Placements(gatewaySystem).Get(ctx, placementName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Predicates = regionPredicates("west")
		_, err = hub.Cluster.ClusterV1beta1().Placements(gatewaySystem).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster2)
	waitDecisions(t, proxyName, cluster1, cluster2)
	// The proxy put the Gateway on cluster2, where Traefik does not accept it.
	waitAddonCondition(t, cluster2, gatewayCondition, hasMessage(metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed, notAccepted(a.traefik[cluster2].Address)))

	// cluster1 drains. The leading manager's pod dies; another replica takes over the
	// drain where the first left it, from the policy's status.
	a.killLeader(t)

	// cluster1's checks pass and its minimum drain duration passes; it stays, as
	// cluster2 has no Gateway ready.
	wantQuery := fmt.Sprintf(`%s{%s=%q`, trafficMetric, trafficClusterKey, clusterLabelValues[cluster1])
	held := a.waitPolicy(t, "cluster1's gate passed but for the Gateway readiness", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		r := clusterRow(p, cluster1)
		switch {
		case r == nil:
			return errors.New("no row of cluster1")
		case r.Phase != trafficv1alpha1.ClusterDraining:
			return fmt.Errorf("cluster1 is %s", r.Phase)
		case !strings.Contains(r.ResolvedQuery, wantQuery):
			return fmt.Errorf("cluster1's query %q does not select %s", r.ResolvedQuery, wantQuery)
		case r.ConsecutiveSuccesses < consecutiveSuccesses || r.LastResult != trafficv1alpha1.EvaluationPass:
			return fmt.Errorf("cluster1 has %d passing checks, last %s", r.ConsecutiveSuccesses, r.LastResult)
		case r.DrainStartTime == nil || r.LastEvaluationTime == nil || r.LastEvaluationTime.Sub(r.DrainStartTime.Time) < minDrainDuration:
			return errors.New("cluster1 has not drained for minDrainDuration at its last check")
		case !strings.Contains(r.Message, msgStillInDNS) || !strings.Contains(r.Message, msgNoOtherReady):
			return fmt.Errorf("cluster1 waits for: %s", r.Message)
		}
		return nil
	})
	heldRow := clusterRow(held, cluster1)
	heldAt := heldRow.LastEvaluationTime.Time
	// Make-before-break: DNS has not let go of cluster1, as no other cluster of the real
	// Placement has the Gateway Programmed; CoreDNS still answers cluster1's address.
	if heldRow.DNSWithdrawalTime != nil {
		t.Errorf("cluster1 left DNS at %s while cluster2 could not program the Gateway", heldRow.DNSWithdrawalTime)
	}
	if err := dnsPublishes(held, cluster1); err != nil {
		t.Errorf("while cluster2 cannot program the Gateway: %v", err)
	}
	if err := answersOnly(ctx, dns, a.traefik[cluster1].Address); err != nil {
		t.Errorf("while cluster2 cannot program the Gateway: %v", err)
	}
	t.Logf("cluster1 held after %d passing checks (share %s%%), draining for %s: %s; query %s", heldRow.ConsecutiveSuccesses,
		heldRow.LastValue, heldAt.Sub(heldRow.DrainStartTime.Time), heldRow.Message, heldRow.ResolvedQuery)
	// Two more checks later, it is still in the proxy: the manager writes the
	// decisions before the status, so every status seen here was decided with
	// cluster1 kept.
	// All the while, CoreDNS answers cluster1's address only.
	var removedEarly []string
	var dnsMovedEarly error
	a.waitPolicy(t, "cluster1 kept for two more checks", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		got, err := fixture.DecisionClusters(ctx, hub.Cluster, gatewaySystem, proxyName)
		if err != nil {
			return err
		}
		if !slices.Contains(got, cluster1) {
			removedEarly = got
			return nil // fails below
		}
		if err := answersOnly(ctx, dns, a.traefik[cluster1].Address); err != nil {
			dnsMovedEarly = err
			return nil // fails below
		}
		r := clusterRow(p, cluster1)
		if r == nil || r.LastEvaluationTime == nil || r.LastEvaluationTime.Sub(heldAt) < 2*interval {
			return errors.New("no two more checks yet")
		}
		if r.Phase != trafficv1alpha1.ClusterDraining || r.DNSWithdrawalTime != nil ||
			!strings.Contains(r.Message, msgStillInDNS) || !strings.Contains(r.Message, msgNoOtherReady) {
			return fmt.Errorf("cluster1 is %s, out of DNS since %v: %s", r.Phase, r.DNSWithdrawalTime, r.Message)
		}
		return nil
	})
	if removedEarly != nil {
		t.Fatalf("cluster1 left the proxy while no other cluster had the Gateway ready: the proxy lists %v", removedEarly)
	}
	if dnsMovedEarly != nil {
		t.Fatalf("DNS let go of cluster1 while no other cluster had the Gateway Programmed: %v", dnsMovedEarly)
	}

	// cluster2's platform team puts Traefik's web entry point on the listener's port:
	// Traefik programs cluster2's Gateway, and cluster1 leaves.
	programmed := time.Now()
	if err := a.traefik[cluster2].SetWebPort(ctx, testbed.TraefikWebPort); err != nil {
		t.Fatal(err)
	}
	// When Traefik programmed cluster2's Gateway, as it wrote it in the Gateway's status
	// (first seen here, so that a later rewrite of the status cannot move it).
	var programmedAt metav1.Time
	eventually(t, "Traefik programming cluster2's Gateway", func(ctx context.Context) error {
		gw, err := a.gateways[cluster2].GatewayV1().Gateways(gatewaySystem).Get(ctx, gatewayName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
			return fmt.Errorf("Programmed %+v", c)
		}
		programmedAt = c.LastTransitionTime
		return nil
	})
	waitAddonCondition(t, cluster2, gatewayCondition, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "Addresses: "+a.traefik[cluster2].Address))
	// CoreDNS answers cluster2's address only, and DNS let go of cluster1 then: not
	// before Traefik programmed cluster2's Gateway.
	waitAnswer(t, dns, a.traefik[cluster2].Address)
	withdrawn := a.waitPolicy(t, "DNS let go of cluster1", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if r := clusterRow(p, cluster1); r == nil || r.DNSWithdrawalTime == nil {
			return errors.New("cluster1 has no dnsWithdrawalTime")
		}
		return nil
	})
	leftDNS := clusterRow(withdrawn, cluster1).DNSWithdrawalTime.Time
	if leftDNS.Before(programmedAt.Time) || leftDNS.Before(programmed.Truncate(time.Second)) {
		t.Errorf("DNS let go of cluster1 at %s, before cluster2's Gateway was Programmed at %s (its entry point fixed at %s)",
			leftDNS, programmedAt, programmed.Format(time.RFC3339Nano))
	}
	waitServedBy(t, a.traefik[cluster2], http.StatusOK, cluster2)
	waitDecisions(t, proxyName, cluster2)
	removed := a.waitPolicy(t, "cluster1 removed", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if r := clusterRow(p, cluster1); r == nil || r.Phase != trafficv1alpha1.ClusterRemoved || r.RemovalTime == nil {
			return errors.New("cluster1 not Removed")
		}
		return nil
	})
	r := clusterRow(removed, cluster1)
	if d := r.RemovalTime.Sub(r.DrainStartTime.Time); d < minDrainDuration {
		t.Errorf("cluster1 removed %s after its drain started, before minDrainDuration %s", d, minDrainDuration)
	}
	if r.RemovalTime.Time.Before(programmed.Truncate(time.Second)) {
		t.Errorf("cluster1 removed at %s, before cluster2's Gateway was programmed at %s", r.RemovalTime, programmed)
	}
	// Its minimum drain counted from DNS letting go of it (and is no shorter than the TTL).
	if r.DNSWithdrawalTime == nil || !r.DNSWithdrawalTime.Time.Equal(leftDNS) {
		t.Errorf("cluster1's removed row has dnsWithdrawalTime %v, want %s", r.DNSWithdrawalTime, leftDNS)
	} else if d := r.RemovalTime.Sub(leftDNS); d < minDrainDuration || d < storyDNSTTL {
		t.Errorf("cluster1 removed %s after DNS let go of it, before minDrainDuration %s (TTL %s)", d, minDrainDuration, storyDNSTTL)
	}
	if err := dnsPublishes(removed, cluster2); err != nil {
		t.Errorf("after the move: %v", err)
	}
	t.Logf("cluster1 drained %s, left DNS %s after its drain started, removed %s after cluster2's Gateway was programmed and %s after DNS let go of it",
		r.RemovalTime.Sub(r.DrainStartTime.Time), leftDNS.Sub(r.DrainStartTime.Time), r.RemovalTime.Sub(programmed).Round(time.Second), r.RemovalTime.Sub(leftDNS))

	// The Gateway and its route really leave cluster1: its Traefik routes nothing any
	// more, and the agent drops the Gateway's condition.
	eventually(t, "the Gateway gone from cluster1", func(ctx context.Context) error {
		_, err := a.gateways[cluster1].GatewayV1().Gateways(gatewaySystem).Get(ctx, gatewayName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	waitAddonCondition(t, cluster1, gatewayCondition, nil)
	waitServedBy(t, a.traefik[cluster1], http.StatusNotFound, "")
}

func regionPredicates(region string) []clusterv1beta1.ClusterPredicate {
	return fixture.SelectorPredicates(map[string]string{regionLabel: region})
}

// waitDecisions waits until a Placement's decisions list exactly the clusters given.
func waitDecisions(t *testing.T, placement string, want ...string) {
	t.Helper()
	fixture.WaitDecisions(t, pollTimeout, hub.Cluster, gatewaySystem, placement, want...)
}

// waitPolicy waits until the story's policy passes check, and returns it.
func (a *addonTest) waitPolicy(t *testing.T, what string, check func(*trafficv1alpha1.TrafficMigrationPolicy) error) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	var last *trafficv1alpha1.TrafficMigrationPolicy
	eventually(t, "policy: "+what, func(ctx context.Context) error {
		p, err := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(gatewaySystem).Get(ctx, policyName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := check(p); err != nil {
			return fmt.Errorf("%w; status:\n%s", err, statusString(p))
		}
		last = p
		return nil
	})
	return last
}

func clusterRow(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) *trafficv1alpha1.ClusterStatus {
	return fixture.PolicyRow(p, cluster)
}

func statusString(p *trafficv1alpha1.TrafficMigrationPolicy) string { return fixture.PolicyStatus(p) }
