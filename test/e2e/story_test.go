// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
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
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// seedStory is the migration the product exists for, on the real stack: a real
// Placement moves the Gateway from cluster1 to cluster2. Readiness and labels come from
// the real agents. cluster1 carries little traffic already, but cluster2's Gateway is
// not programmed yet: cluster1 stays in the proxy after its checks pass, as no other
// cluster would have the Gateway ready. Once cluster2's Gateway is programmed, cluster1
// leaves. The leading manager's pod is killed once during the drain.
func (a *addonTest) seedStory(t *testing.T) {
	ctx := context.Background()
	const (
		interval             = time.Second
		consecutiveSuccesses = 3
		minDrainDuration     = 8 * time.Second
	)

	// The hub: the Placement's namespace, bound to a cluster set of both clusters,
	// which carry their regions.
	if _, err := hub.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewaySystem}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	regions := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: regionLabel, Operator: metav1.LabelSelectorOpExists},
	}}
	if err := testbed.CreateClusterSet(ctx, hub.cluster, clusterSetName, regions); err != nil {
		t.Fatal(err)
	}
	if err := testbed.BindClusterSet(ctx, hub.cluster, gatewaySystem, clusterSetName); err != nil {
		t.Fatal(err)
	}
	for c, region := range map[string]string{cluster1: "east", cluster2: "west"} {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := hub.cluster.ClusterV1().ManagedClusters().Patch(ctx, c, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The spokes: the Gateway on both, programmed on cluster1 only.
	for _, c := range []string{cluster1, cluster2} {
		if _, err := spokes[c].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewaySystem}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createGateway(t, a.gateways[c], gatewaySystem, gatewayName)
	}
	programGateway(t, a.gateways[cluster1], gatewaySystem, gatewayName, "192.0.2.1")
	gatewayCondition := trafficv1alpha1.GatewayConditionType(gatewaySystem, gatewayName)
	waitAddonCondition(t, cluster1, gatewayCondition, isTrue(trafficv1alpha1.AgentReasonProgrammed))
	waitAddonCondition(t, cluster2, gatewayCondition, hasStatus(metav1.ConditionFalse, trafficv1alpha1.AgentReasonPending))

	// The traffic, by the clusters' metrics labels: little of it still reaches cluster1.
	traffic := newTrafficSource(t, "cluster")
	traffic.set(map[string]float64{"cluster1-east": 1, "cluster2-west": 99})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: gatewaySystem}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := hub.kube.CoreV1().Secrets(gatewaySystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName, Namespace: gatewaySystem},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: regionPredicates("east")},
	}
	if _, err := hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster1)

	policy := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: gatewaySystem},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:       trafficv1alpha1.PlacementReference{Name: placementName},
			ProxyPlacementName: proxyName,
			TargetRef:          trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewaySystem},
			PrometheusSecret:   trafficv1alpha1.SecretReference{Name: secret.Name},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:            trafficMetric,
				Selector:          fmt.Sprintf("job=%q", traffic.job),
				ClusterLabel:      "cluster",
				ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`,
				Window:            "4s",
				MaxPercent:        5,
			},
			Interval:             &metav1.Duration{Duration: interval},
			ConsecutiveSuccesses: consecutiveSuccesses,
			MinDrainDuration:     &metav1.Duration{Duration: minDrainDuration},
		},
	}
	policies := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(gatewaySystem)
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, proxyName, cluster1)
	a.waitPolicy(t, "Ready with cluster1 active", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if !meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionReady) {
			return errors.New("not Ready")
		}
		if p.Status.ActiveClusters != 1 || p.Status.DrainingClusters != 0 {
			return errors.New("not one active cluster")
		}
		return nil
	})

	// The admin moves the Gateway to cluster2, whose Gateway is not programmed yet.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Get(ctx, placementName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Predicates = regionPredicates("west")
		_, err = hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster2)
	waitDecisions(t, proxyName, cluster1, cluster2)

	// cluster1 drains. The leading manager's pod dies; another replica takes over the
	// drain where the first left it, from the policy's status.
	a.killLeader(t)

	// cluster1's checks pass and its minimum drain duration passes; it stays, as
	// cluster2 has no Gateway ready.
	wantQuery := fmt.Sprintf(`%s{cluster="cluster1-east"`, trafficMetric)
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
		case !strings.HasPrefix(r.Message, "no other cluster has the Gateway ready"):
			return fmt.Errorf("cluster1 waits for: %s", r.Message)
		}
		return nil
	})
	heldRow := clusterRow(held, cluster1)
	heldAt := heldRow.LastEvaluationTime.Time
	t.Logf("cluster1 held after %d passing checks (share %s%%), draining for %s: %s; query %s", heldRow.ConsecutiveSuccesses,
		heldRow.LastValue, heldAt.Sub(heldRow.DrainStartTime.Time), heldRow.Message, heldRow.ResolvedQuery)
	// Two more checks later, it is still in the proxy: the manager writes the
	// decisions before the status, so every status seen here was decided with
	// cluster1 kept.
	var removedEarly []string
	a.waitPolicy(t, "cluster1 kept for two more checks", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		got, err := decisionClusters(ctx, proxyName)
		if err != nil {
			return err
		}
		if !slices.Contains(got, cluster1) {
			removedEarly = got
			return nil // fails below
		}
		r := clusterRow(p, cluster1)
		if r == nil || r.LastEvaluationTime == nil || r.LastEvaluationTime.Sub(heldAt) < 2*interval {
			return errors.New("no two more checks yet")
		}
		if r.Phase != trafficv1alpha1.ClusterDraining || !strings.HasPrefix(r.Message, "no other cluster has the Gateway ready") {
			return fmt.Errorf("cluster1 is %s: %s", r.Phase, r.Message)
		}
		return nil
	})
	if removedEarly != nil {
		t.Fatalf("cluster1 left the proxy while no other cluster had the Gateway ready: the proxy lists %v", removedEarly)
	}

	// The Gateway controller programs cluster2's Gateway: cluster1 leaves.
	programmed := time.Now()
	programGateway(t, a.gateways[cluster2], gatewaySystem, gatewayName, "192.0.2.2")
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
	t.Logf("cluster1 drained %s, removed %s after cluster2's Gateway was programmed", r.RemovalTime.Sub(r.DrainStartTime.Time), r.RemovalTime.Sub(programmed).Round(time.Second))
}

// createGateway creates a Gateway as a consumer of the Placement puts it on a spoke;
// no Gateway controller has seen it yet.
func createGateway(t *testing.T, client gatewayclient.Interface, ns, name string) {
	t.Helper()
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "e2e",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if _, err := client.GatewayV1().Gateways(ns).Create(context.Background(), gw, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Gateway %s/%s: %v", ns, name, err)
	}
}

// programGateway does what a Gateway controller does once it has programmed a
// Gateway: Accepted and Programmed True for the Gateway's generation, and its address.
func programGateway(t *testing.T, client gatewayclient.Interface, ns, name, address string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw, err := client.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		gw.Status.Conditions = []metav1.Condition{
			{Type: string(gatewayv1.GatewayConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonAccepted),
				Message: "accepted by the e2e test", ObservedGeneration: gw.Generation, LastTransitionTime: now},
			{Type: string(gatewayv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonProgrammed),
				Message: "programmed by the e2e test", ObservedGeneration: gw.Generation, LastTransitionTime: now},
		}
		ipAddress := gatewayv1.IPAddressType
		gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ipAddress, Value: address}}
		_, err = client.GatewayV1().Gateways(ns).UpdateStatus(context.Background(), gw, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("program Gateway %s/%s: %v", ns, name, err)
	}
}

func regionPredicates(region string) []clusterv1beta1.ClusterPredicate {
	return testbed.SelectorPredicates(map[string]string{regionLabel: region})
}

// decisionClusters lists, sorted, the clusters of a Placement's decisions in
// gatewaySystem, as a consumer reads them.
func decisionClusters(ctx context.Context, placement string) ([]string, error) {
	list, err := hub.cluster.ClusterV1beta1().PlacementDecisions(gatewaySystem).List(ctx, metav1.ListOptions{
		LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement,
	})
	if err != nil {
		return nil, err
	}
	var clusters []string
	for _, d := range list.Items {
		for _, cd := range d.Status.Decisions {
			clusters = append(clusters, cd.ClusterName)
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}

// waitDecisions waits until a Placement's decisions list exactly the clusters given.
func waitDecisions(t *testing.T, placement string, want ...string) {
	t.Helper()
	slices.Sort(want)
	eventually(t, fmt.Sprintf("Placement %s deciding %v", placement, want), func(ctx context.Context) error {
		got, err := decisionClusters(ctx, placement)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("decisions list %v", got)
		}
		return nil
	})
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
	return testbed.PolicyRow(p, cluster)
}

func statusString(p *trafficv1alpha1.TrafficMigrationPolicy) string { return testbed.PolicyStatus(p) }
