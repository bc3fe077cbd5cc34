// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"errors"
	"reflect"
	"slices"
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

func linesOf(v Policy) []clusterLine {
	var out []clusterLine
	for _, c := range v.Clusters {
		out = append(out, clusterLine{c.Name, c.Phase, c.Gateway, c.DrainingFor, c.NextCheck, c.Discrepancy, c.InProxyDecisions})
	}
	return out
}

func TestBuildViewClusters(t *testing.T) {
	both := []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1", "cluster2")}
	tests := map[string]struct {
		in   Objects
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
			in: func() Objects {
				in := objects(newPolicy(), nil)
				in.DecisionsErr = errors.New("forbidden")
				return in
			}(),
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayNoAgent},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayNoAgent, DrainingFor: "3m10s", NextCheck: "in 12s"},
			},
		},
		"without detail nothing is cross-checked and no Gateway is known": {
			in: Objects{Policy: newPolicy()},
			want: []clusterLine{
				{Name: "cluster1", Phase: "Active", Gateway: GatewayUnknown},
				{Name: "cluster2", Phase: "Draining", Gateway: GatewayUnknown, DrainingFor: "3m10s", NextCheck: "in 12s"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := diff(tc.want, linesOf(Build(tc.in, now))); diff != "" {
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
				OnMaxDrainDuration: "Hold", Deadline: "24h, then Hold", NoDataPolicy: "Hold", Replacement: "another cluster with the Gateway ready",
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
				OnMaxDrainDuration: "Hold", Deadline: "none", NoDataPolicy: "Hold", Replacement: "another cluster with the Gateway ready",
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
				OnMaxDrainDuration: "Remove", Deadline: "24h, then Remove", NoDataPolicy: "Hold", Replacement: "another cluster with the Gateway ready",
			},
		},
		"status of an older generation": {
			policy: newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Generation = 3 }),
			want: Check{
				Summary: "traffic share <= 5% (istio_requests_total by label cluster over 5m)", Expectation: "<= 5",
				Interval: "30s", ConsecutiveSuccesses: 3, MinDrainDuration: "2m", MaxDrainDuration: "24h",
				OnMaxDrainDuration: "Hold", Deadline: "24h, then Hold", NoDataPolicy: "Hold", Replacement: "another cluster with the Gateway ready",
			},
			wantWarnings: []string{"the status describes generation 2 of the policy, not the current 3: the manager has not caught up (is it running?)"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v := Build(Objects{Policy: tc.policy}, now)
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
	v := Build(Objects{Policy: newPolicy()}, now)
	want := Policy{
		Namespace: testNamespace, Name: testPolicy, Age: "3d", Ready: "True", ReadyReason: "Reconciled",
		ReadyMessage: "the proxy Placement mirrors gateway-placement", Prometheus: "QuerySucceeded", Placement: "gateway-placement", ProxyPlacement: testProxy, ProxyClusters: 2,
		Gateway: "gateway-system/example-gateway", ActiveClusters: 1, DrainingClusters: 1, Generation: 2, ObservedGeneration: 2,
		Phases: []PhaseClusters{{Phase: "Active", Clusters: []string{"cluster1"}}, {Phase: "Draining", Clusters: []string{"cluster2"}}},
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
	in.DecisionsErr = errors.New("placementdecisions is forbidden")
	in.AddonErrs = map[string]error{"cluster2": errors.New("forbidden"), "cluster1": errors.New("forbidden")}
	got := strings.Join(Build(in, now).Warnings, "\n")
	want := "cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: placementdecisions is forbidden\n" +
		"cannot read the traffic-migration add-on of cluster1, cluster2: forbidden"
	if got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

func TestClusterCells(t *testing.T) {
	tests := map[string]struct {
		cluster                  Cluster
		expectation              string
		wantValue, wantSuccesses string
	}{
		"active":               {cluster: Cluster{Phase: "Active"}, expectation: "<= 5", wantValue: "-", wantSuccesses: "-"},
		"draining, not yet":    {cluster: Cluster{Phase: "Draining", RequiredSuccesses: 3}, expectation: "<= 5", wantValue: "- / <= 5", wantSuccesses: "0/3"},
		"draining, passed":     {cluster: Cluster{Phase: "Draining", LastValue: "0.0123456789", ConsecutiveSuccesses: 2, RequiredSuccesses: 3}, expectation: "<= 0.05", wantValue: "0.0123457 / <= 0.05", wantSuccesses: "2/3"},
		"held, error":          {cluster: Cluster{Phase: "Held", LastResult: "Error", RequiredSuccesses: 3}, expectation: "<= 5", wantValue: "error / <= 5", wantSuccesses: "0/3"},
		"draining, no data":    {cluster: Cluster{Phase: "Draining", LastResult: "NoData", RequiredSuccesses: 1}, expectation: "<= 5", wantValue: "no data / <= 5", wantSuccesses: "0/1"},
		"draining, NaN":        {cluster: Cluster{Phase: "Draining", LastResult: "NoData", LastValue: "NaN", RequiredSuccesses: 1}, expectation: "<= 5", wantValue: "NaN / <= 5", wantSuccesses: "0/1"},
		"removed, last value":  {cluster: Cluster{Phase: "Removed", LastValue: "0.5"}, expectation: "<= 5", wantValue: "0.5 / <= 5", wantSuccesses: "-"},
		"unparsable threshold": {cluster: Cluster{Phase: "Draining", LastValue: "7"}, wantValue: "7", wantSuccesses: "0/0"},
		"not a number":         {cluster: Cluster{Phase: "Draining", LastValue: "many"}, expectation: "<= 5", wantValue: "many / <= 5", wantSuccesses: "0/0"},
		"draining, run met":    {cluster: Cluster{Phase: "Draining", LastValue: "1", ConsecutiveSuccesses: 3, RequiredSuccesses: 3}, expectation: "<= 5", wantValue: "1 / <= 5", wantSuccesses: "3/3 met"},
		"draining, run longer": {cluster: Cluster{Phase: "Draining", LastValue: "1", ConsecutiveSuccesses: 4, RequiredSuccesses: 3}, expectation: "<= 5", wantValue: "1 / <= 5", wantSuccesses: "3/3 met"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OrNone(valueText(tc.cluster, tc.expectation)); got != tc.wantValue {
				t.Errorf("value %q, want %q", got, tc.wantValue)
			}
			if got := OrNone(successesText(tc.cluster)); got != tc.wantSuccesses {
				t.Errorf("successes %q, want %q", got, tc.wantSuccesses)
			}
		})
	}
}

func TestDNSView(t *testing.T) {
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "ns"}}
	if v := buildDNS(p); v != nil {
		t.Errorf("without spec.dns: %+v, want nil", v)
	}
	p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.example.com"}}
	p.Status.DNS = &trafficv1alpha1.DNSStatus{EndpointName: "gw", PublishedClusters: []string{"c2"}}
	p.Status.Conditions = []metav1.Condition{{Type: trafficv1alpha1.ConditionDNSPublished, Status: metav1.ConditionTrue,
		Reason: trafficv1alpha1.ReasonDNSPublished, Message: "published"}}
	want := &DNS{Hostnames: []string{"gw.example.com"}, TTL: "1m", Endpoint: "gw", PublishedClusters: []string{"c2"},
		Reason: "Published", Message: "published", Summary: "gw.example.com (TTL 1m), DNSEndpoint gw publishing c2: Published"}
	if v := buildDNS(p); !reflect.DeepEqual(v, want) {
		t.Errorf("buildDNS = %+v, want %+v", v, want)
	}
}

// TestBuildViewRows: the rows of a draining, a held and a removed cluster of a
// policy with spec.dns, each string as a person reads it, the clusters by phase and
// the DNS; without spec.dns the rows say nothing of DNS.
func TestBuildViewRows(t *testing.T) {
	type row struct{ Phase, Value, Successes, DrainingFor, OutOfDNS, NextCheck string }
	p := newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.example.com", "www.example.com"}}
		p.Status.DNS = &trafficv1alpha1.DNSStatus{EndpointName: p.Name, PublishedClusters: []string{"cluster1", "cluster3"}}
		p.Status.Conditions = append(p.Status.Conditions, condition(trafficv1alpha1.ConditionDNSPublished,
			metav1.ConditionTrue, trafficv1alpha1.ReasonDNSPublished, "published"))
		p.Status.Clusters[1].ConsecutiveSuccesses = 4
		p.Status.Clusters[1].DNSWithdrawalTime = at(-time.Minute)
		p.Status.Clusters = append(p.Status.Clusters,
			trafficv1alpha1.ClusterStatus{Name: "cluster3", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: at(-25 * time.Hour),
				LastResult: trafficv1alpha1.EvaluationError, NextEvaluationTime: at(-time.Second)},
			trafficv1alpha1.ClusterStatus{Name: "cluster0", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: at(-time.Hour),
				RemovalTime: at(-time.Minute), LastResult: trafficv1alpha1.EvaluationPass, LastValue: "0.5", ConsecutiveSuccesses: 3})
	})
	rows := func(v Policy) (out []row) {
		for _, c := range v.Clusters {
			out = append(out, row{c.Phase, c.Value, c.Successes, c.DrainingFor, c.OutOfDNS, c.NextCheck})
		}
		return out
	}
	v := Build(Objects{Policy: p}, now)
	want := []row{
		{Phase: "Removed", Value: "0.5 / <= 5"},
		{Phase: "Active"},
		{Phase: "Draining", Value: "2.1 / <= 5", Successes: "3/3 met", DrainingFor: "3m10s", OutOfDNS: "60s", NextCheck: "in 12s"},
		{Phase: "Held", Value: "error / <= 5", Successes: "0/3", DrainingFor: "25h", OutOfDNS: "in DNS", NextCheck: "due"},
	}
	if diff := diff(want, rows(v)); diff != "" {
		t.Errorf("rows:\n%s", diff)
	}
	wantPhases := []PhaseClusters{{"Active", []string{"cluster1"}}, {"Draining", []string{"cluster2"}}, {"Held", []string{"cluster3"}}, {"Removed", []string{"cluster0"}}}
	if diff := diff(wantPhases, v.Phases); diff != "" {
		t.Errorf("phases:\n%s", diff)
	}
	if v.DNS == nil || v.DNS.TTL != "1m" || v.DNS.Reason != "Published" ||
		v.DNS.Summary != "gw.example.com, www.example.com (TTL 1m), DNSEndpoint example publishing cluster1, cluster3: Published" {
		t.Errorf("DNS: %+v", v.DNS)
	}

	p.Spec.DNS = nil
	v = Build(Objects{Policy: p}, now)
	want[2].OutOfDNS, want[3].OutOfDNS = "", ""
	if diff := diff(want, rows(v)); diff != "" || v.DNS != nil {
		t.Errorf("without spec.dns, DNS %+v, rows:\n%s", v.DNS, diff)
	}
}

// TestBuildViewReplacementCheck: with spec.replacement.metricsQuery, the check says
// what a replacement must pass, and an Active row shows its replacement check's value
// against that expectation and when it is checked next.
func TestBuildViewReplacementCheck(t *testing.T) {
	p := newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.Replacement = &trafficv1alpha1.Replacement{MinReadyClusters: 1, MetricsQuery: "sum(rate(requests_total[2m]))", ExpectedMetricsResult: "> 1"}
		p.Status.Clusters[0].LastResult, p.Status.Clusters[0].LastValue = trafficv1alpha1.EvaluationPass, "12"
		p.Status.Clusters[0].NextEvaluationTime = at(5 * time.Second)
	})
	v := Build(Objects{Policy: p}, now)
	if v.Check.Replacement != "1 Active cluster with the Gateway ready and passing sum(rate(requests_total[2m])) > 1" || v.Check.ReplacementExpectation != "> 1" {
		t.Errorf("check: %q, expectation %q", v.Check.Replacement, v.Check.ReplacementExpectation)
	}
	c := v.Clusters[0]
	if c.Phase != "Active" || c.Value != "12 / > 1" || c.NextCheck != "in 5s" || c.Successes != "" {
		t.Errorf("Active row: %+v", c)
	}
}

// TestNewList: the policies sorted by namespace and name, and their clusters counted
// by phase, every phase listed.
func TestNewList(t *testing.T) {
	other := newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Namespace, p.Name = "a", "first"
		p.Status.Clusters[1].Phase = trafficv1alpha1.ClusterHeld
		p.Status.Clusters = append(p.Status.Clusters, trafficv1alpha1.ClusterStatus{Name: "b0", Phase: trafficv1alpha1.ClusterActive})
	})
	l := NewList("", []Policy{Build(Objects{Policy: newPolicy()}, now), Build(Objects{Policy: other}, now)})
	if len(l.Items) != 2 || l.Items[0].Name != "first" || l.Items[1].Name != testPolicy {
		t.Fatalf("want the policies sorted by namespace and name, got %+v", l.Items)
	}
	if want := []PhaseClusters{{"Active", []string{"b0", "cluster1"}}, {"Held", []string{"cluster2"}}}; !reflect.DeepEqual(l.Items[0].Phases, want) {
		t.Errorf("phases of a/first: %+v, want %+v", l.Items[0].Phases, want)
	}
	want := []PhaseCount{{"Active", 3}, {"Draining", 1}, {"Held", 1}, {"Removed", 0}}
	if !reflect.DeepEqual(l.Totals, want) {
		t.Errorf("totals: %+v, want %+v", l.Totals, want)
	}
	if empty := NewList("ns", nil); empty.Items == nil || len(empty.Totals) != 4 || empty.Namespace != "ns" {
		t.Errorf("an empty list: %+v", empty)
	}
}

// TestBuildViewStalled: a stalled drain is marked once, in the view: the row's state,
// the policy's list of stalled clusters, and no estimate.
func TestBuildViewStalled(t *testing.T) {
	p := newPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Clusters[1].Stalled = true
		p.Status.Clusters[1].EstimatedRemovalTime = nil
	})
	v := Build(objects(p, []*clusterv1beta1.PlacementDecision{newDecision(testProxy, "cluster1", "cluster2")}), now)
	c := v.Clusters[1]
	if c.Name != "cluster2" || !c.Stalled || c.State != "Draining, stalled" || c.Phase != "Draining" || c.Expected != "unknown" {
		t.Errorf("stalled row: %+v", c)
	}
	if v.Clusters[0].Stalled || v.Clusters[0].State != "Active" {
		t.Errorf("active row: %+v", v.Clusters[0])
	}
	if !slices.Equal(v.StalledClusters, []string{"cluster2"}) {
		t.Errorf("stalled clusters %v", v.StalledClusters)
	}

	// A row that says stalled but no longer drains is not shown as stalled.
	p.Status.Clusters[1].Phase = trafficv1alpha1.ClusterRemoved
	if v := Build(objects(p, nil), now); v.Clusters[1].Stalled || v.StalledClusters != nil {
		t.Errorf("a removed row is shown stalled: %+v", v.Clusters[1])
	}
}
