// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/output"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview/policyviewtest"
)

const wantDetail = `Name:                    example
Namespace:               gateway-system
Age:                     3d
Ready:                   True (Reconciled)
Placement:               gateway-placement
Proxy Placement:         gateway-placement-proxy (2 clusters: 1 active, 1 draining)
Target Gateway:          gateway-system/example-gateway
Check:                   traffic share <= 5% (istio_requests_total by label cluster over 5m)
Interval:                30s
Consecutive Successes:   3
Min Drain Duration:      2m
Max Drain Duration:      24h, then Hold
No Data Policy:          Hold
Replacement:             another cluster with the Gateway ready
Suspended:               false

Conditions:
  TYPE                  STATUS   REASON             MESSAGE
  Ready                 True     Reconciled         the proxy Placement mirrors gateway-placement
  PrometheusReachable   True     QuerySucceeded     the last checks reached Prometheus
  Draining              True     ClustersDraining   1 cluster is draining

Clusters:
  CLUSTER     PHASE      GATEWAY   VALUE        SUCCESSES   DRAINING FOR   NEXT CHECK   EXPECTED OUT   MESSAGE
  cluster1    Active     Ready     -            -           -              -            -
  cluster2    Draining   Ready     2.1 / <= 5   2/3         3m10s          in 12s       in 12s         waiting for 1 more passing check
  cluster3*   -          NoAgent   -            -           -              -            -

  * cluster3: in the proxy decisions but not in the policy status

Gateways not ready:
  cluster3: NoAgent: the traffic-migration add-on is not enabled on the cluster

Resolved queries of draining clusters:
  cluster2: 100 * sum(rate(istio_requests_total{cluster="cluster2"}[5m])) / sum(rate(istio_requests_total[5m]))
`

const wantNewPolicyDetail = `Name:                    example
Namespace:               gateway-system
Age:                     3d
Ready:                   -
Placement:               gateway-placement
Proxy Placement:         gateway-placement-proxy (0 clusters: 0 active, 0 draining)
Target Gateway:          gateway-system/example-gateway
Check:                   up < 1
Interval:                30s
Consecutive Successes:   3
Min Drain Duration:      2m
Max Drain Duration:      none
No Data Policy:          Hold
Replacement:             another cluster with the Gateway ready
Suspended:               true

Conditions:
  none yet: the manager has not reconciled the policy

Clusters:
  none

Warnings:
  the status describes generation 0 of the policy, not the current 2: the manager has not caught up (is it running?)
  cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: placementdecisions.cluster.open-cluster-management.io is forbidden
`

func TestRenderDetail(t *testing.T) {
	tests := map[string]struct {
		in   policyview.Objects
		want string
	}{
		"draining, with a cluster missing from the status": {
			in: objects(policyviewtest.NewPolicy(), []*clusterv1beta1.PlacementDecision{policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2", "cluster3")},
				policyviewtest.ReadyAddon("cluster1"), policyviewtest.ReadyAddon("cluster2")),
			want: wantDetail,
		},
		"new policy, decisions forbidden": {
			in: func() policyview.Objects {
				p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
					p.Spec = trafficv1alpha1.TrafficMigrationPolicySpec{
						PlacementRef: p.Spec.PlacementRef, TargetRef: p.Spec.TargetRef,
						MetricsQuery: "up", ExpectedMetricsResult: "< 1", Suspend: true,
					}
					p.Status = trafficv1alpha1.TrafficMigrationPolicyStatus{}
				})
				in := objects(p, nil)
				in.DecisionsErr = errors.New("placementdecisions.cluster.open-cluster-management.io is forbidden")
				return in
			}(),
			want: wantNewPolicyDetail,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := renderDetail(&b, policyview.Build(tc.in, policyviewtest.Now)); err != nil {
				t.Fatal(err)
			}
			if diff := policyviewtest.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("detail:\n%s", diff)
			}
		})
	}
}

func TestRenderTable(t *testing.T) {
	second := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Namespace, p.Name = "payments", "checkout"
		p.Spec.PlacementRef.Name = "checkout"
		p.CreationTimestamp = *policyviewtest.At(-90 * time.Minute)
		p.Status = trafficv1alpha1.TrafficMigrationPolicyStatus{}
	})
	views := []policyview.Policy{policyview.Build(policyview.Objects{Policy: policyviewtest.NewPolicy()}, policyviewtest.Now), policyview.Build(policyview.Objects{Policy: second}, policyviewtest.Now)}
	tests := map[string]struct {
		views     []policyview.Policy
		namespace string
		wide      bool
		noHeaders bool
		want      string
	}{
		"wide": {
			views: views[:1], namespace: policyviewtest.Namespace, wide: true,
			want: "NAME      READY   PROXY                     ACTIVE   DRAINING   PROMETHEUS       AGE   PLACEMENT           GATEWAY                          SUSPENDED   CHECK\n" +
				"example   True    gateway-placement-proxy   1        1          QuerySucceeded   3d    gateway-placement   gateway-system/example-gateway   false       traffic share <= 5% (istio_requests_total by label cluster over 5m)\n",
		},
		"one namespace": {
			views: views[:1], namespace: policyviewtest.Namespace,
			want: "NAME      READY   PROXY                     ACTIVE   DRAINING   PROMETHEUS       AGE\n" +
				"example   True    gateway-placement-proxy   1        1          QuerySucceeded   3d\n",
		},
		"all namespaces": {
			views: views,
			want: "NAMESPACE        NAME       READY   PROXY                     ACTIVE   DRAINING   PROMETHEUS       AGE\n" +
				"gateway-system   example    True    gateway-placement-proxy   1        1          QuerySucceeded   3d\n" +
				"payments         checkout   -       checkout-proxy            0        0          -                90m\n",
		},
		"no headers": {
			views: views, noHeaders: true,
			want: "gateway-system   example    True   gateway-placement-proxy   1     1     QuerySucceeded   3d\n" +
				"payments         checkout   -      checkout-proxy            0     0     -                90m\n",
		},
		"nothing in a namespace": {namespace: "empty", want: "No TrafficMigrationPolicies found in namespace empty.\n"},
		"nothing at all":         {want: "No TrafficMigrationPolicies found in any namespace.\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := renderTable(&b, tc.views, tc.namespace, tc.wide, tc.noHeaders); err != nil {
				t.Fatal(err)
			}
			if diff := policyviewtest.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("table:\n%s", diff)
			}
		})
	}
}

func TestRenderDetailKeepsTablesOnOneLine(t *testing.T) {
	p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Conditions[0].Message = "line one\nline two\tand a tab"
		p.Status.Clusters[1].ResolvedQuery = "sum(a)\n/ sum(b)"
	})
	var b bytes.Buffer
	if err := renderDetail(&b, policyview.Build(objects(p, []*clusterv1beta1.PlacementDecision{policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2")}), policyviewtest.Now)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  Ready                 True     Reconciled         line one line two and a tab\n",
		"  cluster2: sum(a)\n    / sum(b)\n",
	} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRenderDetailShowsHistory(t *testing.T) {
	record := func(d time.Duration, result trafficv1alpha1.EvaluationResult, value string) trafficv1alpha1.CheckRecord {
		return trafficv1alpha1.CheckRecord{Time: *policyviewtest.At(d), Result: result, Value: value}
	}
	p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Clusters[1].History = []trafficv1alpha1.CheckRecord{
			record(-90*time.Second, trafficv1alpha1.EvaluationFail, "48.123456789"),
			record(-60*time.Second, trafficv1alpha1.EvaluationError, ""),
			record(-30*time.Second, trafficv1alpha1.EvaluationNoData, ""),
			record(0, trafficv1alpha1.EvaluationPass, "2.1"),
		}
	})
	var b bytes.Buffer
	if err := renderDetail(&b, policyview.Build(objects(p, []*clusterv1beta1.PlacementDecision{policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2")}), policyviewtest.Now)); err != nil {
		t.Fatal(err)
	}
	want := "\nCheck history (oldest first; ✓ passed, ✗ did not):\n  cluster2   <= 5:   48.1235✗  error✗  no data✗  2.1✓\n"
	if !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Errorf("detail lacks %q:\n%s", want, b.String())
	}
	var j bytes.Buffer
	if err := output.Write(&j, "json", policyview.Build(objects(p, nil), policyviewtest.Now)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(j.Bytes(), []byte(`"history": [`)) || !bytes.Contains(j.Bytes(), []byte(`"value": "48.123456789"`)) {
		t.Errorf("-o json lacks the history:\n%s", j.String())
	}
}

func TestDrainingForCell(t *testing.T) {
	cases := []struct {
		drainingFor, outOfDNS, want string
	}{
		{"", "", "-"},
		{"5m", "", "5m"},
		{"5m", "in DNS", "5m (in DNS)"},
		{"5m", "1m", "5m (out of DNS 1m)"},
	}
	for _, tc := range cases {
		if got := drainingForCell(policyview.Cluster{DrainingFor: tc.drainingFor, OutOfDNS: tc.outOfDNS}); got != tc.want {
			t.Errorf("drainingForCell(%q, %q) = %q, want %q", tc.drainingFor, tc.outOfDNS, got, tc.want)
		}
	}
}

// TestRenderDetailShowsStalled: a stalled drain shows in the PHASE column and in a
// note under the table, with its cause and where the remedy is.
func TestRenderDetailShowsStalled(t *testing.T) {
	p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Clusters[1].Stalled = true
		p.Status.Clusters[1].EstimatedRemovalTime = nil
	})
	var b bytes.Buffer
	in := objects(p, []*clusterv1beta1.PlacementDecision{policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2")}, policyviewtest.ReadyAddon("cluster1"), policyviewtest.ReadyAddon("cluster2"))
	if err := renderDetail(&b, policyview.Build(in, policyviewtest.Now)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  cluster2   Draining, stalled   Ready     2.1 / <= 5   2/3         3m10s          in 12s       unknown",
		"\nStalled drains (never removed for it; maxDrainDuration or force-remove end them):\n  cluster2: " + policyview.StalledHint + "\n",
	} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(wantDetail, "Stalled") {
		t.Error("the detail of a drain that is not stalled mentions it")
	}
}
