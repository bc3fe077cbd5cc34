// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

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

// now is the fixed instant every test builds its views at.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	testNamespace = "gateway-system"
	testPolicy    = "example"
	testProxy     = "gateway-placement-proxy"
)

// at is now moved by d, as an API time.
func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(d))
	return &t
}

func condition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: *at(-time.Hour)}
}

// newPolicy is a trafficShare policy in the middle of a migration: cluster1 is
// active, cluster2 draining with two of three passing checks.
func newPolicy(mutate ...func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	interval := metav1.Duration{Duration: 30 * time.Second}
	minDrain := metav1.Duration{Duration: 2 * time.Minute}
	maxDrain := metav1.Duration{Duration: 24 * time.Hour}
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace, Name: testPolicy, Generation: 2,
			CreationTimestamp: *at(-72 * time.Hour),
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
				condition(trafficv1alpha1.ConditionReady, metav1.ConditionTrue, trafficv1alpha1.ReasonReconciled, "the proxy Placement mirrors gateway-placement"),
				condition(trafficv1alpha1.ConditionPrometheusReachable, metav1.ConditionTrue, trafficv1alpha1.ReasonQuerySucceeded, "the last checks reached Prometheus"),
				condition(trafficv1alpha1.ConditionDraining, metav1.ConditionTrue, trafficv1alpha1.ReasonClustersDraining, "1 cluster is draining"),
			},
			ProxyPlacement:   &trafficv1alpha1.ProxyPlacementStatus{Name: testProxy, NumberOfClusters: 2},
			ActiveClusters:   1,
			DrainingClusters: 1,
			Clusters: []trafficv1alpha1.ClusterStatus{
				{Name: "cluster1", Phase: trafficv1alpha1.ClusterActive},
				{
					Name: "cluster2", Phase: trafficv1alpha1.ClusterDraining,
					DrainStartTime:       at(-190 * time.Second),
					ConsecutiveSuccesses: 2,
					LastEvaluationTime:   at(-18 * time.Second),
					NextEvaluationTime:   at(12 * time.Second),
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

// newDecision is a PlacementDecision of a Placement listing clusters.
func newDecision(placement string, clusters ...string) *clusterv1beta1.PlacementDecision {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Namespace: testNamespace, Name: placement + "-decision-1",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement, clusterv1beta1.DecisionGroupIndexLabel: "0"},
	}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

// gatewayCondition is the agent's condition for the test policy's Gateway.
var gatewayCondition = trafficv1alpha1.GatewayConditionType(testNamespace, "example-gateway")

// newAddon is the traffic-migration add-on of a cluster with these conditions.
func newAddon(cluster string, conds ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: trafficv1alpha1.AddonName},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conds},
	}
}

// readyAddon is an available add-on reporting the test Gateway programmed.
func readyAddon(cluster string) *addonv1alpha1.ManagedClusterAddOn {
	return newAddon(cluster,
		condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, "ManagedClusterAddOnLeaseUpdated", ""),
		condition(gatewayCondition, metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "addresses: 10.0.0.1"),
	)
}

// objects are the objects of the test policy with the given decisions and add-ons.
func objects(p *trafficv1alpha1.TrafficMigrationPolicy, decisions []*clusterv1beta1.PlacementDecision, addons ...*addonv1alpha1.ManagedClusterAddOn) policyObjects {
	in := policyObjects{policy: p, detail: true, decisions: decisions, addons: map[string]*addonv1alpha1.ManagedClusterAddOn{}}
	for _, a := range addons {
		in.addons[a.Namespace] = a
	}
	return in
}

// diff is empty when want and got are deeply equal; otherwise it shows how they
// differ: the first differing line of two texts, or both values.
func diff(want, got any) string {
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
