// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package policyviewtest holds the objects the tests of the views of a policy are
// built from: a policy in the middle of a migration, its proxy decisions and its
// clusters' add-ons, at a fixed instant. Only tests import it.
package policyviewtest

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// Now is the fixed instant every test builds its views at.
var Now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// The test policy's namespace, name and proxy Placement.
const (
	Namespace = "gateway-system"
	Policy    = "example"
	Proxy     = "gateway-placement-proxy"
)

// At is Now moved by d, as an API time.
func At(d time.Duration) *metav1.Time {
	t := metav1.NewTime(Now.Add(d))
	return &t
}

// Condition is a condition that changed an hour before Now.
func Condition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: *At(-time.Hour)}
}

// NewPolicy is a trafficShare policy in the middle of a migration: cluster1 is
// active, cluster2 draining with two of three passing checks.
func NewPolicy(mutate ...func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	interval := metav1.Duration{Duration: 30 * time.Second}
	minDrain := metav1.Duration{Duration: 2 * time.Minute}
	maxDrain := metav1.Duration{Duration: 24 * time.Hour}
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: Namespace, Name: Policy, Generation: 2,
			CreationTimestamp: *At(-72 * time.Hour),
		},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: "gateway-placement"},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: "example-gateway"},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: "prometheus"},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric: "istio_requests_total", ClusterLabel: "cluster", Window: "5m", MaxPercent: 5,
			},
			Interval:             &interval,
			ConsecutiveSuccesses: 3,
			MinDrainDuration:     &minDrain,
			MaxDrainDuration:     &maxDrain,
			OnMaxDrainDuration:   trafficv1alpha1.DeadlineHold,
			NoDataPolicy:         trafficv1alpha1.NoDataHold,
		},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{
			ObservedGeneration: 2,
			Conditions: []metav1.Condition{
				Condition(trafficv1alpha1.ConditionReady, metav1.ConditionTrue, trafficv1alpha1.ReasonReconciled, "the proxy Placement mirrors gateway-placement"),
				Condition(trafficv1alpha1.ConditionPrometheusReachable, metav1.ConditionTrue, trafficv1alpha1.ReasonQuerySucceeded, "the last checks reached Prometheus"),
				Condition(trafficv1alpha1.ConditionDraining, metav1.ConditionTrue, trafficv1alpha1.ReasonClustersDraining, "1 cluster is draining"),
			},
			ProxyPlacement:   &trafficv1alpha1.ProxyPlacementStatus{Name: Proxy, NumberOfClusters: 2},
			ActiveClusters:   1,
			DrainingClusters: 1,
			Clusters: []trafficv1alpha1.ClusterStatus{
				{Name: "cluster1", Phase: trafficv1alpha1.ClusterActive},
				{
					Name: "cluster2", Phase: trafficv1alpha1.ClusterDraining,
					DrainStartTime:       At(-190 * time.Second),
					ConsecutiveSuccesses: 2,
					LastEvaluationTime:   At(-18 * time.Second),
					NextEvaluationTime:   At(12 * time.Second),
					EstimatedRemovalTime: At(12 * time.Second),
					LastResult:           trafficv1alpha1.EvaluationPass,
					LastValue:            "2.1000000000000001",
					ResolvedQuery:        `100 * sum(rate(istio_requests_total{cluster="cluster2"}[5m])) / sum(rate(istio_requests_total[5m]))`,
					Message:              "waiting for 1 more passing check",
				},
			},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// NewDecision is a PlacementDecision of a Placement listing clusters.
func NewDecision(placement string, clusters ...string) *clusterv1beta1.PlacementDecision {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Namespace: Namespace, Name: placement + "-decision-1",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement, clusterv1beta1.DecisionGroupIndexLabel: "0"},
	}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

// GatewayCondition is the agent's condition for the test policy's Gateway.
var GatewayCondition = trafficv1alpha1.GatewayConditionType(Namespace, "example-gateway")

// NewAddon is the traffic-migration add-on of a cluster with these conditions.
func NewAddon(cluster string, conds ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: trafficv1alpha1.AddonName},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conds},
	}
}

// ReadyAddon is an available add-on reporting the test Gateway programmed.
func ReadyAddon(cluster string) *addonv1alpha1.ManagedClusterAddOn {
	return NewAddon(cluster,
		Condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, "ManagedClusterAddOnLeaseUpdated", ""),
		Condition(GatewayCondition, metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "addresses: 10.0.0.1"),
	)
}

// Addons are the add-ons by their cluster's name, as the views take them.
func Addons(addons ...*addonv1alpha1.ManagedClusterAddOn) map[string]*addonv1alpha1.ManagedClusterAddOn {
	byCluster := map[string]*addonv1alpha1.ManagedClusterAddOn{}
	for _, a := range addons {
		byCluster[a.Namespace] = a
	}
	return byCluster
}

// Diff is empty when want and got are deeply equal; otherwise it shows how they
// differ: the first differing line of two texts, or both values.
func Diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	wantText, ok1 := want.(string)
	gotText, ok2 := got.(string)
	if !ok1 || !ok2 {
		return fmt.Sprintf("want: %+v\n got: %+v", want, got)
	}
	wantLines, gotLines := strings.Split(wantText, "\n"), strings.Split(gotText, "\n")
	for i := range max(len(wantLines), len(gotLines)) {
		var w, g string
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant: %q\n got: %q\nall of it:\n%s", i+1, w, g, gotText)
		}
	}
	return fmt.Sprintf("want %q, got %q", wantText, gotText)
}
