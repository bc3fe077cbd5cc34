// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
)

// The CRD's validation rules, each tested on create (and, where it concerns a change,
// on update) against the real kube-apiserver, with the message a user sees.

func policyClient(t *testing.T) versioned.Interface {
	t.Helper()
	c, err := versioned.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queryPolicy is a valid policy with a hand-written metricsQuery.
func queryPolicy(name string) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:          trafficv1alpha1.PlacementReference{Name: "gateway-placement"},
			TargetRef:             trafficv1alpha1.GatewayReference{Name: "example-gateway"},
			PrometheusSecret:      trafficv1alpha1.SecretReference{Name: "prometheus-secret"},
			MetricsQuery:          `sum(rate(istio_requests_total{cluster="{{ .Cluster.Name }}"}[5m])) / sum(rate(istio_requests_total[5m]))`,
			ExpectedMetricsResult: "<= 0.05",
		},
	}
}

// sharePolicy is a valid policy with trafficShare.
func sharePolicy(name string) *trafficv1alpha1.TrafficMigrationPolicy {
	p := queryPolicy(name)
	p.Spec.MetricsQuery, p.Spec.ExpectedMetricsResult = "", ""
	p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{Metric: "istio_requests_total", MaxPercent: 5}
	return p
}

func duration(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

func TestCRDValidationOnCreate(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-create")
	client := policyClient(t).TrafficV1alpha1().TrafficMigrationPolicies(ns)

	tests := map[string]struct {
		policy     func(name string) *trafficv1alpha1.TrafficMigrationPolicy
		mutate     func(p *trafficv1alpha1.TrafficMigrationPolicy)
		wantErrors []string // all must appear; none means the policy is accepted
	}{
		"valid metricsQuery policy": {policy: queryPolicy},
		"valid trafficShare policy": {policy: sharePolicy},
		"every optional field set": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.ProxyPlacementName = "gateway-placement-drained"
				p.Spec.TargetRef = trafficv1alpha1.GatewayReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Namespace: "gateway-system"}
				p.Spec.TrafficShare.Selector = `destination_service_name="example-gateway-istio"`
				p.Spec.TrafficShare.ClusterLabel = "cluster"
				p.Spec.TrafficShare.ClusterLabelValue = `{{ index .Cluster.Labels "cluster" }}`
				p.Spec.TrafficShare.Window = "1h30m"
				p.Spec.TrafficShare.MaxPercent = 0.5
				p.Spec.TrafficShare.MinRequestsPerSecond = 0.25
				p.Spec.Replacement = &trafficv1alpha1.Replacement{MinReadyClusters: 2,
					MetricsQuery:          `sum(rate(requests_total{cluster={{ index .Cluster.Labels "cluster" | quote }}}[2m]))`,
					ExpectedMetricsResult: "> 1"}
				p.Spec.Interval = duration("1m30s")
				p.Spec.ConsecutiveSuccesses = 5
				p.Spec.MinDrainDuration = duration("10m")
				p.Spec.MaxDrainDuration = duration("24h")
				p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineRemove
				p.Spec.NoDataPolicy = trafficv1alpha1.NoDataPass
				p.Spec.Suspend = true
			},
		},

		// Exactly one of metricsQuery and trafficShare.
		"both metricsQuery and trafficShare": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{Metric: "m", MaxPercent: 5}
			},
			wantErrors: []string{"exactly one of metricsQuery and trafficShare must be set"},
		},
		"neither metricsQuery nor trafficShare": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare = nil },
			wantErrors: []string{"exactly one of metricsQuery and trafficShare must be set"},
		},
		"metricsQuery without expectedMetricsResult": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "" },
			wantErrors: []string{"metricsQuery needs expectedMetricsResult, for example '<= 0.05'"},
		},
		"trafficShare with expectedMetricsResult": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "<= 5" },
			wantErrors: []string{"expectedMetricsResult goes with metricsQuery; with trafficShare set trafficShare.maxPercent instead"},
		},
		"metricsQuery too long": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.MetricsQuery = strings.Repeat("x", 8193) },
			wantErrors: []string{"spec.metricsQuery: Too long: may not be more than 8192"},
		},

		// The query language: what can hurt the manager is refused at admission.
		"metricsQuery with quote, index, if and eq": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MetricsQuery = `sum(rate(x{cluster={{ index .Cluster.Labels "range" | quote }}{{ if eq .Policy.Name "printf" }},a="b"{{ end }}}[5m]))`
			},
		},
		"metricsQuery with range": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.MetricsQuery = `x{{range 1000000000}}x{{end}}` },
			wantErrors: []string{"metricsQuery: a template action may use only the documented fields, index, quote, if/else and eq, ne, and, or, not"},
		},
		"metricsQuery with printf in a pipeline": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MetricsQuery = `x{c="{{ .Cluster.Name | printf "%999999999s" }}"}`
			},
			wantErrors: []string{"metricsQuery: a template action may use only"},
		},
		"metricsQuery with define": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.MetricsQuery = `{{- define "a" }}x{{ end }}x` },
			wantErrors: []string{"metricsQuery: a template action may use only"},
		},
		"clusterLabelValue with template": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.TrafficShare.ClusterLabelValue = `{{ template "x" }}`
			},
			wantErrors: []string{"trafficShare.clusterLabelValue: a template action may use only"},
		},

		// The proxy Placement's name.
		"proxyPlacementName equals placementRef.name": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "gateway-placement" },
			wantErrors: []string{"proxyPlacementName must differ from placementRef.name: the proxy cannot be the Placement it mirrors"},
		},
		"proxyPlacementName not a DNS label": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "Gateway.Proxy" },
			wantErrors: []string{"proxyPlacementName must be a DNS label"},
		},
		"proxyPlacementName longer than a label value": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = strings.Repeat("a", 64) },
			wantErrors: []string{"spec.proxyPlacementName: Too long: may not be more than 63"},
		},
		"long placementRef.name without proxyPlacementName": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PlacementRef.Name = strings.Repeat("p", 58) },
			wantErrors: []string{"placementRef.name is longer than 57 characters, so the default proxy name '<placementRef.name>-proxy' would not fit in 63: set proxyPlacementName"},
		},
		"long placementRef.name with proxyPlacementName": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.PlacementRef.Name = strings.Repeat("p", 58)
				p.Spec.ProxyPlacementName = "proxy"
			},
		},
		"placementRef.name missing": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PlacementRef.Name = "" },
			wantErrors: []string{"spec.placementRef.name: Invalid value: \"\": spec.placementRef.name in body should be at least 1 chars long"},
		},
		"placementRef.name not a DNS subdomain": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PlacementRef.Name = "Gateway_Placement" },
			wantErrors: []string{"placementRef.name must be a DNS subdomain"},
		},

		// The target Gateway and the Secret.
		"targetRef.name missing": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TargetRef.Name = "" },
			wantErrors: []string{"spec.targetRef.name in body should be at least 1 chars long"},
		},
		"targetRef.name not a DNS subdomain": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TargetRef.Name = "My Gateway" },
			wantErrors: []string{"targetRef.name must be a DNS subdomain"},
		},
		"targetRef.group not Gateway API": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TargetRef.Group = "networking.istio.io" },
			wantErrors: []string{`spec.targetRef.group: Unsupported value: "networking.istio.io": supported values: "gateway.networking.k8s.io"`},
		},
		"targetRef.kind not Gateway": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TargetRef.Kind = "HTTPRoute" },
			wantErrors: []string{`spec.targetRef.kind: Unsupported value: "HTTPRoute": supported values: "Gateway"`},
		},
		"targetRef.namespace not a DNS label": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TargetRef.Namespace = "gateway.system" },
			wantErrors: []string{"targetRef.namespace must be a DNS label"},
		},
		"prometheusSecret.name missing": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PrometheusSecret.Name = "" },
			wantErrors: []string{"spec.prometheusSecret.name in body should be at least 1 chars long"},
		},
		"prometheusSecret.name not a DNS subdomain": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PrometheusSecret.Name = "prometheus/secret" },
			wantErrors: []string{"prometheusSecret.name must be a DNS subdomain"},
		},

		// The expectedMetricsResult grammar.
		"expectedMetricsResult bare number": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "0.05" },
		},
		"expectedMetricsResult every operator and number form": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = " >= -1.5e3 " },
		},
		"expectedMetricsResult without a number": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "<=" },
			wantErrors: []string{"expectedMetricsResult must be a comparison operator (<=, <, >=, >, ==, !=) and a number, for example '<= 0.05', with an exponent of at most two digits such as 1e-3 or 2.5e12; a bare number means '<='"},
		},
		"expectedMetricsResult unknown operator": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "=< 0.05" },
			wantErrors: []string{"expectedMetricsResult must be a comparison operator"},
		},
		"expectedMetricsResult beyond float64": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "<= 1e999" },
			wantErrors: []string{"expectedMetricsResult must be a comparison operator", "with an exponent of at most two digits"},
		},
		"expectedMetricsResult below float64": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = ">= 1e-999" },
			wantErrors: []string{"with an exponent of at most two digits"},
		},
		"expectedMetricsResult with a two-digit exponent": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "<= 1e99" },
		},
		"expectedMetricsResult with a unit": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ExpectedMetricsResult = "<= 5%" },
			wantErrors: []string{"expectedMetricsResult must be a comparison operator"},
		},

		// Durations and counts.
		"interval below one second": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.Interval = duration("500ms") },
			wantErrors: []string{"interval must be at least 1s"},
		},
		"interval not a duration": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.Interval = &metav1.Duration{Duration: -time.Second}
			},
			wantErrors: []string{"spec.interval in body should match"},
		},
		"minDrainDuration not a duration": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MinDrainDuration = &metav1.Duration{Duration: -time.Minute}
			},
			wantErrors: []string{"spec.minDrainDuration in body should match"},
		},
		"maxDrainDuration not a duration": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MaxDrainDuration = &metav1.Duration{Duration: -time.Hour}
			},
			wantErrors: []string{"spec.maxDrainDuration in body should match"},
		},
		"maxDrainDuration shorter than minDrainDuration": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MinDrainDuration = duration("10m")
				p.Spec.MaxDrainDuration = duration("5m")
			},
			wantErrors: []string{"maxDrainDuration must not be shorter than minDrainDuration"},
		},
		"maxDrainDuration shorter than the default minDrainDuration": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.MaxDrainDuration = duration("1m") },
			wantErrors: []string{"maxDrainDuration must not be shorter than minDrainDuration"},
		},
		"onMaxDrainDuration Remove without maxDrainDuration": {
			policy: queryPolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineRemove
			},
			wantErrors: []string{"onMaxDrainDuration: Remove needs maxDrainDuration"},
		},
		"onMaxDrainDuration unknown": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.OnMaxDrainDuration = "Wait" },
			wantErrors: []string{`spec.onMaxDrainDuration: Unsupported value: "Wait": supported values: "Hold", "Remove"`},
		},
		"noDataPolicy unknown": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.NoDataPolicy = "Fail" },
			wantErrors: []string{`spec.noDataPolicy: Unsupported value: "Fail": supported values: "Hold", "Pass"`},
		},
		"consecutiveSuccesses below one": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ConsecutiveSuccesses = -1 },
			wantErrors: []string{"spec.consecutiveSuccesses: Invalid value: -1: spec.consecutiveSuccesses in body should be greater than or equal to 1"},
		},
		"consecutiveSuccesses above 1000": {
			policy:     queryPolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ConsecutiveSuccesses = 1001 },
			wantErrors: []string{"spec.consecutiveSuccesses in body should be less than or equal to 1000"},
		},

		// trafficShare.
		"trafficShare.metric missing": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Metric = "" },
			wantErrors: []string{"spec.trafficShare.metric in body should be at least 1 chars long"},
		},
		"trafficShare.metric not a metric name": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Metric = "istio-requests" },
			wantErrors: []string{"trafficShare.metric must be a Prometheus metric name, for example istio_requests_total"},
		},
		"trafficShare.selector with braces": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Selector = `{app="gw"}` },
			wantErrors: []string{"trafficShare.selector holds label matchers without braces"},
		},
		"trafficShare.clusterLabel not a label name": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.ClusterLabel = "cluster-name" },
			wantErrors: []string{"trafficShare.clusterLabel must be a Prometheus label name, for example cluster"},
		},
		"trafficShare.window not a Prometheus duration": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "5 minutes" },
			wantErrors: []string{"trafficShare.window must be a Prometheus duration, for example 5m or 1h30m"},
		},
		"trafficShare.window zero": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "0s" },
			wantErrors: []string{"trafficShare.window must be longer than 0s: a rate over an empty range has no data"},
		},
		"trafficShare.window zero in two units": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "0h0m" },
			wantErrors: []string{"trafficShare.window must be longer than 0s"},
		},
		"trafficShare.window units out of order": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "30s1m" },
			wantErrors: []string{"with its units from the largest to the smallest (y, w, d, h, m, s, ms), each at most once"},
		},
		"trafficShare.window beyond what Prometheus holds": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "999y" },
			wantErrors: []string{"trafficShare.window must be a Prometheus duration"},
		},
		"trafficShare.window in every unit": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.Window = "1y2w3d4h5m6s7ms" },
		},
		"trafficShare.maxPercent above 100": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.MaxPercent = 101 },
			wantErrors: []string{"spec.trafficShare.maxPercent in body should be less than or equal to 100"},
		},
		"trafficShare.maxPercent negative": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.MaxPercent = -1 },
			wantErrors: []string{"spec.trafficShare.maxPercent in body should be greater than or equal to 0"},
		},
		"replacement.minReadyClusters below 1": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.Replacement = &trafficv1alpha1.Replacement{MinReadyClusters: -1}
			},
			wantErrors: []string{"spec.replacement.minReadyClusters in body should be greater than or equal to 1"},
		},
		"replacement.metricsQuery without expectedMetricsResult": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.Replacement = &trafficv1alpha1.Replacement{MetricsQuery: "sum(rate(requests_total[2m]))"}
			},
			wantErrors: []string{"spec.replacement: Invalid value", "replacement.metricsQuery and replacement.expectedMetricsResult go together"},
		},
		"replacement.expectedMetricsResult not a comparison": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.Replacement = &trafficv1alpha1.Replacement{MetricsQuery: "sum(rate(requests_total[2m]))", ExpectedMetricsResult: "more than 1"}
			},
			wantErrors: []string{"spec.replacement.expectedMetricsResult", "replacement.expectedMetricsResult must be a comparison operator"},
		},
		"replacement.metricsQuery with a forbidden function": {
			policy: sharePolicy,
			mutate: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.Replacement = &trafficv1alpha1.Replacement{MetricsQuery: `up{cluster="{{ printf "%s" .Cluster.Name }}"}`, ExpectedMetricsResult: "> 0"}
			},
			wantErrors: []string{"spec.replacement.metricsQuery", "range, with, template, define, block and functions such as printf are not allowed"},
		},
		"trafficShare.minRequestsPerSecond negative": {
			policy:     sharePolicy,
			mutate:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.TrafficShare.MinRequestsPerSecond = -0.5 },
			wantErrors: []string{"spec.trafficShare.minRequestsPerSecond in body should be greater than or equal to 0"},
		},
	}

	i := 0
	for name, tc := range tests {
		i++
		t.Run(name, func(t *testing.T) {
			p := tc.policy(fmt.Sprintf("policy-%d", i))
			if tc.mutate != nil {
				tc.mutate(p)
			}
			_, err := client.Create(t.Context(), p, metav1.CreateOptions{})
			checkErrors(t, err, tc.wantErrors)
		})
	}
}

func TestCRDValidationOnUpdate(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-update")
	client := policyClient(t).TrafficV1alpha1().TrafficMigrationPolicies(ns)

	tests := map[string]struct {
		before     func(p *trafficv1alpha1.TrafficMigrationPolicy)
		after      func(p *trafficv1alpha1.TrafficMigrationPolicy)
		wantErrors []string
	}{
		"proxyPlacementName changed": {
			before:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "proxy-a" },
			after:      func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "proxy-b" },
			wantErrors: []string{"the proxy Placement's name cannot change, since workloads point at it: create a new policy instead"},
		},
		"proxyPlacementName unset, so the default name would apply": {
			before:     func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "proxy-a" },
			after:      func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "" },
			wantErrors: []string{"the proxy Placement's name cannot change"},
		},
		"proxyPlacementName set to the default name it had": {
			after: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "gateway-placement-proxy" },
		},
		"placementRef changed with the default proxy name": {
			after:      func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PlacementRef.Name = "other-placement" },
			wantErrors: []string{"the proxy Placement's name cannot change"},
		},
		"placementRef changed with an explicit proxy name": {
			before: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.ProxyPlacementName = "proxy-a" },
			after:  func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.PlacementRef.Name = "other-placement" },
		},
		"metricsQuery swapped for trafficShare": {
			after: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MetricsQuery, p.Spec.ExpectedMetricsResult = "", ""
				p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{Metric: "istio_requests_total", MaxPercent: 5}
			},
		},
		"trafficShare added to metricsQuery": {
			after: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{Metric: "istio_requests_total", MaxPercent: 5}
			},
			wantErrors: []string{"exactly one of metricsQuery and trafficShare must be set"},
		},
		"interval lowered below one second": {
			after:      func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.Interval = duration("100ms") },
			wantErrors: []string{"interval must be at least 1s"},
		},
		"onMaxDrainDuration Remove after maxDrainDuration removed": {
			before: func(p *trafficv1alpha1.TrafficMigrationPolicy) {
				p.Spec.MaxDrainDuration = duration("1h")
				p.Spec.OnMaxDrainDuration = trafficv1alpha1.DeadlineRemove
			},
			after:      func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.MaxDrainDuration = nil },
			wantErrors: []string{"onMaxDrainDuration: Remove needs maxDrainDuration"},
		},
		"suspend toggled": {
			after: func(p *trafficv1alpha1.TrafficMigrationPolicy) { p.Spec.Suspend = true },
		},
	}

	i := 0
	for name, tc := range tests {
		i++
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			p := queryPolicy(fmt.Sprintf("policy-%d", i))
			if tc.before != nil {
				tc.before(p)
			}
			if _, err := client.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create: %v", err)
			}
			// The manager writes the policy's status meanwhile: update what is there now.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				current, err := client.Get(ctx, p.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				tc.after(current)
				_, err = client.Update(ctx, current, metav1.UpdateOptions{})
				return err
			})
			checkErrors(t, err, tc.wantErrors)
		})
	}
}

// TestCRDDefaults checks the defaults the schema fills in.
func TestCRDDefaults(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-defaults")
	got, err := policyClient(t).TrafficV1alpha1().TrafficMigrationPolicies(ns).Create(t.Context(), sharePolicy("defaults"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Spec
	checks := map[string][2]string{
		"interval":             {s.Interval.Duration.String(), "30s"},
		"consecutiveSuccesses": {fmt.Sprint(s.ConsecutiveSuccesses), "3"},
		"minDrainDuration":     {s.MinDrainDuration.Duration.String(), "2m0s"},
		"maxDrainDuration set": {fmt.Sprint(s.MaxDrainDuration != nil), "false"},
		"onMaxDrainDuration":   {string(s.OnMaxDrainDuration), "Hold"},
		"noDataPolicy":         {string(s.NoDataPolicy), "Hold"},
		"suspend":              {fmt.Sprint(s.Suspend), "false"},
		"targetRef.group":      {s.TargetRef.Group, "gateway.networking.k8s.io"},
		"targetRef.kind":       {s.TargetRef.Kind, "Gateway"},
		"targetRef.namespace":  {s.TargetRef.Namespace, ""},
		"trafficShare.window":  {s.TrafficShare.Window, "5m"},
		"trafficShare.label":   {s.TrafficShare.ClusterLabel, "cluster"},
		"proxy name (helper)":  {got.ProxyPlacementName(), "gateway-placement-proxy"},
		"target ns (helper)":   {got.TargetNamespace(), ns},
	}
	for field, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s: got %s, want %s", field, c[0], c[1])
		}
	}
}

// checkErrors fails unless err carries every wanted message, or, with none wanted, is nil.
func checkErrors(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("want the policy accepted, got: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want errors %q, the policy was accepted", want)
	}
	t.Logf("rejected as wanted: %v", err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("want error containing %q, got: %v", w, err)
		}
	}
}

// TestCRDValidationZeroMinReadyClusters: replacement.minReadyClusters 0, as a user
// writes it in YAML, is refused naming the field (the typed client cannot send it: 0 is
// its omitted value, which the API server defaults to 1).
func TestCRDValidationZeroMinReadyClusters(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-zero")
	p := sharePolicy("zero")
	p.APIVersion, p.Kind = trafficv1alpha1.SchemeGroupVersion.String(), "TrafficMigrationPolicy"
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	obj["spec"].(map[string]any)["replacement"] = map[string]any{"minReadyClusters": 0}
	if raw, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	err = policyClient(t).TrafficV1alpha1().RESTClient().Post().Namespace(ns).Resource("trafficmigrationpolicies").
		Body(raw).SetHeader("Content-Type", "application/json").Do(t.Context()).Error()
	checkErrors(t, err, []string{"spec.replacement.minReadyClusters in body should be greater than or equal to 1"})
}
