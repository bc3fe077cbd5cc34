// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// clusterLine is what a test checks of a cluster row.
type clusterLine struct {
	Name, Phase, Gateway, DrainingFor, NextCheck, Discrepancy string
	InProxyDecisions                                          bool
}

func linesOf(v PolicyView) []clusterLine {
	var out []clusterLine
	for _, c := range v.Clusters {
		out = append(out, clusterLine{c.Name, c.Phase, c.Gateway, c.DrainingFor, c.NextCheck, c.Discrepancy, c.InProxyDecisions})
	}
	return out
}

func TestBuildViewClusters(t *testing.T) {
	both := []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1", "cluster2")}
	tests := map[string]struct {
		in   policyObjects
		want []clusterLine
	}{
		"active and draining, agreeing with the decisions": {
			in: objects(newPolicy(), both, readyAddon("cluster1"), readyAddon("cluster2")),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayReady, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayReady, DrainingFor: "3m10s", NextCheck: "in 12s", InProxyDecisions: true},
			},
		},
		"overdue check": {
			in: objects(newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Clusters[1].NextEvaluationTime = at(-time.Second)
			}), both, readyAddon("cluster1"), readyAddon("cluster2")),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayReady, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayReady, DrainingFor: "3m10s", NextCheck: "due", InProxyDecisions: true},
			},
		},
		"held past the deadline": {
			in: objects(newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Clusters[1].Phase = trafficv1alpha1.ClusterHeld
				p.Status.Clusters[1].DrainStartTime = at(-25 * time.Hour)
			}), both, readyAddon("cluster1")),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayReady, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Held", Gateway: GatewayNoAgent, DrainingFor: "25h", NextCheck: "in 12s", InProxyDecisions: true},
			},
		},
		"in the decisions but not in the status": {
			in: objects(newPolicy(), []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1", "cluster2", "cluster3")}),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayNoAgent, DrainingFor: "3m10s", NextCheck: "in 12s", InProxyDecisions: true},
				{Name: "cluster3", Gateway: GatewayNoAgent, InProxyDecisions: true, Discrepancy: "in the proxy decisions but not in the policy status"},
			},
		},
		"in the status but not in the decisions": {
			in: objects(newPolicy(), []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1")}),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayNoAgent, DrainingFor: "3m10s", NextCheck: "in 12s", Discrepancy: "Draining in the policy status but not in the proxy decisions"},
			},
		},
		"removed and gone from the decisions": {
			in: objects(newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Clusters[1] = trafficv1alpha1.ClusterStatus{Name: "cluster2", Phase: trafficv1alpha1.ClusterRemoved, RemovalTime: at(-time.Minute)}
			}), []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1")}),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Removed", Gateway: GatewayNoAgent},
			},
		},
		"removed but still in the decisions": {
			in: objects(newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Status.Clusters[1] = trafficv1alpha1.ClusterStatus{Name: "cluster2", Phase: trafficv1alpha1.ClusterRemoved}
			}), both),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent, InProxyDecisions: true},
				{Name: "cluster2", Phase: "Removed", Gateway: GatewayNoAgent, InProxyDecisions: true, Discrepancy: "Removed in the policy status but still in the proxy decisions"},
			},
		},
		"decisions that cannot be read are not cross-checked": {
			in: func() policyObjects {
				in := objects(newPolicy(), nil)
				in.decisionsErr = errors.New("forbidden")
				return in
			}(),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayNoAgent, DrainingFor: "3m10s", NextCheck: "in 12s"},
			},
		},
		"without detail nothing is cross-checked and no Gateway is known": {
			in: policyObjects{policy: newPolicy()},
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayUnknown},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayUnknown, DrainingFor: "3m10s", NextCheck: "in 12s"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := diff(tc.want, linesOf(buildView(tc.in, now))); diff != "" {
				t.Errorf("clusters:\n%s", diff)
			}
		})
	}
}

func TestBuildViewSummary(t *testing.T) {
	tests := map[string]struct {
		policy       *trafficv1alpha1.TrafficMigrationPolicy
		want         Check
		wantWarnings []string
	}{
		"traffic share": {
			policy: newPolicy(),
			want: Check{
				Summary: "traffic share <= 5% (istio_requests_total by label cluster over 5m)", Expectation: "<= 5",
				Interval: "30s", ConsecutiveSuccesses: 3, MinDrainDuration: "2m", MaxDrainDuration: "24h",
				OnMaxDrainDuration: "Hold", NoDataPolicy: "Hold",
			},
		},
		"metrics query, defaults applied": {
			policy: newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec = trafficv1alpha1.TrafficMigrationPolicySpec{
					PlacementRef:          p.Spec.PlacementRef,
					TargetRef:             p.Spec.TargetRef,
					MetricsQuery:          "sum(rate(requests{cluster=\"{{ .Cluster.Name }}\"}[5m]))\n  / sum(rate(requests[5m]))",
					ExpectedMetricsResult: "0.05",
				}
			}),
			want: Check{
				Summary:     `sum(rate(requests{cluster="{{ .Cluster.Name }}"}[5m])) / sum(rate(requests[5m])) <= 0.05`,
				Expectation: "<= 0.05",
				Interval:    "30s", ConsecutiveSuccesses: 3, MinDrainDuration: "2m",
				OnMaxDrainDuration: "Hold", NoDataPolicy: "Hold",
			},
		},
		"invalid expected result": {
			policy: newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.TrafficShare = nil
				p.Spec.MetricsQuery = "up"
				p.Spec.ExpectedMetricsResult = "about 3"
				p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineRemove
			}),
			want: Check{
				Summary:  `up (invalid expectedMetricsResult: "about 3" is not a comparison operator (<=, <, >=, >, ==, !=) and a number)`,
				Interval: "30s", ConsecutiveSuccesses: 3, MinDrainDuration: "2m", MaxDrainDuration: "24h",
				OnMaxDrainDuration: "Remove", NoDataPolicy: "Hold",
			},
		},
		"status of an older generation": {
			policy: newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Generation = 3 }),
			want: Check{
				Summary: "traffic share <= 5% (istio_requests_total by label cluster over 5m)", Expectation: "<= 5",
				Interval: "30s", ConsecutiveSuccesses: 3, MinDrainDuration: "2m", MaxDrainDuration: "24h",
				OnMaxDrainDuration: "Hold", NoDataPolicy: "Hold",
			},
			wantWarnings: []string{"the status describes generation 2 of the policy, not the current 3: the manager has not caught up (is it running?)"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v := buildView(policyObjects{policy: tc.policy}, now)
			got := v.Check
			got.MetricsQuery, got.TrafficShare = "", nil
			if diff := diff(tc.want, got); diff != "" {
				t.Errorf("check:\n%s", diff)
			}
			if diff := diff(tc.wantWarnings, v.Warnings); diff != "" {
				t.Errorf("warnings:\n%s", diff)
			}
		})
	}
}

func TestBuildViewHeader(t *testing.T) {
	v := buildView(policyObjects{policy: newPolicy()}, now)
	want := PolicyView{
		Namespace: testNamespace, Name: testPolicy, Age: "3d", Ready: "True", ReadyReason: "Reconciled",
		Prometheus: "QuerySucceeded", Placement: "gateway-placement", ProxyPlacement: testProxy, ProxyClusters: 2,
		Gateway: "gateway-system/example-gateway", ActiveClusters: 1, DrainingClusters: 1, Generation: 2, ObservedGeneration: 2,
	}
	got := v
	got.CreationTimestamp, got.Check, got.Conditions, got.Clusters = metav1.Time{}, Check{}, nil, nil
	if diff := diff(want, got); diff != "" {
		t.Errorf("view:\n%s", diff)
	}
	if len(v.Conditions) != 3 || v.Conditions[2].Type != trafficv1alpha1.ConditionDraining {
		t.Errorf("conditions: %+v", v.Conditions)
	}
}

func TestGatewayState(t *testing.T) {
	available := condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, "ManagedClusterAddOnLeaseUpdated", "")
	tests := map[string]struct {
		addon       *addonv1alpha1.ManagedClusterAddOn
		readErr     error
		want        string
		wantDetails string
	}{
		"not installed":  {want: GatewayNoAgent, wantDetails: "the traffic-migration add-on is not enabled on the cluster"},
		"cannot be read": {readErr: errors.New("forbidden"), want: GatewayUnknown, wantDetails: "the traffic-migration add-on cannot be read: forbidden"},
		"agent not available": {
			addon: newAddon("c", condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse, "ManagedClusterAddOnLeaseUpdateStopped", "lease not updated")),
			want:  GatewayNoAgent, wantDetails: "the agent is not available (ManagedClusterAddOnLeaseUpdateStopped: lease not updated)",
		},
		"availability unknown": {
			addon: newAddon("c", condition(gatewayCondition, metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "")),
			want:  GatewayNoAgent, wantDetails: "the agent is not available",
		},
		"no Gateway API": {
			addon: newAddon("c", available, condition(trafficv1alpha1.ConditionGatewayAPI, metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled, "")),
			want:  GatewayNotReady, wantDetails: "the cluster has no Gateway API (CRDNotInstalled)",
		},
		"no such Gateway": {
			addon: newAddon("c", available),
			want:  GatewayNotReady, wantDetails: "the agent reports no such Gateway",
		},
		"not programmed": {
			addon: newAddon("c", available, condition(gatewayCondition, metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed, "no address")),
			want:  GatewayNotReady, wantDetails: "the Gateway is not programmed (NotProgrammed: no address)",
		},
		"programmed": {
			addon: readyAddon("c"),
			want:  GatewayReady, wantDetails: "addresses: 10.0.0.1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, details := gatewayState(tc.addon, tc.readErr, gatewayCondition)
			if got != tc.want || details != tc.wantDetails {
				t.Errorf("got %s (%s), want %s (%s)", got, details, tc.want, tc.wantDetails)
			}
		})
	}
}

func TestReadWarnings(t *testing.T) {
	in := objects(newPolicy(), nil)
	in.decisionsErr = errors.New("placementdecisions is forbidden")
	in.addonErrs = map[string]error{"cluster2": errors.New("forbidden"), "cluster1": errors.New("forbidden")}
	got := strings.Join(buildView(in, now).Warnings, "\n")
	want := "cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: placementdecisions is forbidden\n" +
		"cannot read the traffic-migration add-on of cluster1, cluster2: forbidden"
	if got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

func TestDurations(t *testing.T) {
	tests := map[string]struct {
		got, want string
	}{
		"seconds":           {shortDuration(30 * time.Second), "30s"},
		"whole minutes":     {shortDuration(2 * time.Minute), "2m"},
		"whole hours":       {shortDuration(24 * time.Hour), "24h"},
		"hours and minutes": {shortDuration(90 * time.Minute), "1h30m"},
		"mixed":             {shortDuration(61 * time.Second), "1m1s"},
		"since":             {since(now.Add(-190*time.Second), now), "3m10s"},
		"since nothing":     {since(time.Time{}, now), "<unknown>"},
		"next check later":  {nextCheck(now.Add(90*time.Second), now), "in 90s"},
		"next check now":    {nextCheck(now, now), "due"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
