// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// The demo's fleet: two spokes in two regions, and the names of what it creates.
const (
	cluster1 = "cluster1"
	cluster2 = "cluster2"

	// namespace holds, on the hub, the real Placement, the policy, its Prometheus
	// Secret and the ManifestWorkReplicaSet; on the spokes, the Gateway.
	namespace      = "gateway-system"
	placementName  = "gateway-placement"
	proxyName      = placementName + "-proxy" // the policy's default proxy name
	policyName     = "gateway-migration"
	secretName     = "prometheus"
	gatewayName    = "demo-gateway"
	mwrsName       = "demo-gateway"
	clusterSetName = "demo"
	regionLabel    = "region"
)

// regions are the clusters' regions, the label the real Placement selects on.
var regions = map[string]string{cluster1: "us-east", cluster2: "us-west"}

// The Gateway's traffic as Traefik counts it: every request that reaches the web
// entry point of a spoke's Traefik, with the cluster label that the spoke's metrics
// agent puts on everything it writes to the hub's Prometheus.
const (
	requestsMetric = "traefik_entrypoint_requests_total"
	requestsFilter = `entrypoint="web"`
	clusterLabel   = "cluster"
	backendName    = "demo-backend"
	routeName      = "demo-route"
)

// prepareHub creates what the fleet administrator has before the migration: the
// clusters' region labels, a ManagedClusterSet of the two clusters bound to the
// namespace, the real Placement selecting cluster1's region, the Prometheus Secret,
// the TrafficMigrationPolicy, and the ManifestWorkReplicaSet that puts the Gateway on
// the clusters of the PROXY Placement.
func prepareHub(ctx context.Context, h *fixture.HubClients, policy *trafficv1alpha1.TrafficMigrationPolicy, prometheusURL string) error {
	for cluster, region := range regions {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := h.Cluster.ClusterV1().ManagedClusters().Patch(ctx, cluster, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("label ManagedCluster %s: %w", cluster, err)
		}
	}
	withRegion := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: regionLabel, Operator: metav1.LabelSelectorOpExists},
	}}
	if err := fixture.CreateClusterSet(ctx, h.Cluster, clusterSetName, withRegion); err != nil {
		return err
	}
	if _, err := h.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	if err := fixture.BindClusterSet(ctx, h.Cluster, namespace, clusterSetName); err != nil {
		return err
	}
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName, Namespace: namespace},
		Spec: clusterv1beta1.PlacementSpec{
			ClusterSets: []string{clusterSetName},
			Predicates:  regionPredicates(regions[cluster1]),
		},
	}
	if _, err := h.Cluster.ClusterV1beta1().Placements(namespace).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Placement %s: %w", placementName, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace},
		StringData: map[string]string{"url": prometheusURL},
	}
	if _, err := h.Kube.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Secret %s: %w", secretName, err)
	}
	if _, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create TrafficMigrationPolicy %s: %w", policy.Name, err)
	}
	// The Gateway (of Traefik's GatewayClass, for the demo's name) and its HTTPRoute to
	// the spoke's backend, on the clusters of the PROXY Placement.
	mwrs, err := fixture.ManifestWorkReplicaSetOf(namespace, mwrsName, proxyName,
		fixture.TraefikGatewayObject(namespace, gatewayName, gatewayHostname),
		fixture.BackendRouteObject(namespace, routeName, gatewayName, gatewayHostname, backendName))
	if err != nil {
		return err
	}
	if _, err := h.Work.WorkV1alpha1().ManifestWorkReplicaSets(namespace).Create(ctx, mwrs, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ManifestWorkReplicaSet %s: %w", mwrsName, err)
	}
	return nil
}

// regionPredicates select the clusters of a region.
func regionPredicates(region string) []clusterv1beta1.ClusterPredicate {
	return fixture.SelectorPredicates(map[string]string{regionLabel: region})
}

// movePlacement edits the real Placement to select another region, as the
// administrator does, retrying on a write conflict.
func movePlacement(ctx context.Context, h *fixture.HubClients, region string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := h.Cluster.ClusterV1beta1().Placements(namespace).Get(ctx, placementName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p.Spec.Predicates = regionPredicates(region)
		_, err = h.Cluster.ClusterV1beta1().Placements(namespace).Update(ctx, p, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// policyObject is the TrafficMigrationPolicy of the demo: trafficShare on Traefik's
// request counter, by the cluster label of the metrics pipeline, and spec.dns: the
// manager publishes the REAL Placement's Programmed Gateways under the demo's name.
func policyObject(cfg config, nameserver string) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: trafficv1alpha1.SchemeGroupVersion.String(), Kind: "TrafficMigrationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: namespace},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef: trafficv1alpha1.PlacementReference{Name: placementName},
			TargetRef: trafficv1alpha1.GatewayReference{
				Group: gatewayv1.GroupName, Kind: "Gateway", Name: gatewayName, Namespace: namespace,
			},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: secretName},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:       requestsMetric,
				Selector:     requestsFilter,
				ClusterLabel: clusterLabel,
				Window:       cfg.window,
				MaxPercent:   cfg.maxPercent,
			},
			Interval:             &metav1.Duration{Duration: cfg.interval},
			ConsecutiveSuccesses: cfg.consecutiveSuccesses,
			MinDrainDuration:     &metav1.Duration{Duration: cfg.minDrainDuration},
			DNS:                  dnsSpec(nameserver),
		},
	}
}
