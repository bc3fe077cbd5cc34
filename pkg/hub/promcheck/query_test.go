// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"os"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// testData is the template data of cluster "cluster1" with the labels an agent reports.
func testData() QueryData {
	return QueryData{
		Cluster: ClusterInfo{
			Name:   "cluster1",
			Labels: map[string]string{"cluster_name": "cluster1", "cluster_id": "0a1b", "cluster": "us-east-1"},
		},
		Gateway: ObjectInfo{Name: "example-gateway", Namespace: "gateway-system"},
		Policy:  ObjectInfo{Name: "example-traffic-migration", Namespace: "policies"},
	}
}

func TestResolveQuery(t *testing.T) {
	share := func(mutate func(*v1alpha1.TrafficShare)) *v1alpha1.TrafficMigrationPolicySpec {
		ts := &v1alpha1.TrafficShare{Metric: "istio_requests_total", ClusterLabel: "cluster", Window: "5m", MaxPercent: 5}
		if mutate != nil {
			mutate(ts)
		}
		return &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: ts}
	}
	query := func(q string) *v1alpha1.TrafficMigrationPolicySpec {
		return &v1alpha1.TrafficMigrationPolicySpec{MetricsQuery: q, ExpectedMetricsResult: "<= 0.05"}
	}
	tests := map[string]struct {
		spec    *v1alpha1.TrafficMigrationPolicySpec
		data    func(*QueryData)
		want    string
		wantErr string
	}{
		"metricsQuery with every field": {
			spec: query(`sum(rate(m{c="{{ .Cluster.Name }}",l="{{ index .Cluster.Labels "cluster" }}",gw="{{ .Gateway.Name }}",gwns="{{ .Gateway.Namespace }}",p="{{ .Policy.Name }}",pns="{{ .Policy.Namespace }}"}[5m]))`),
			want: `sum(rate(m{c="cluster1",l="us-east-1",gw="example-gateway",gwns="gateway-system",p="example-traffic-migration",pns="policies"}[5m]))`,
		},
		"metricsQuery is trimmed": {
			spec: query("\n  sum(up{cluster=\"{{ .Cluster.Name }}\"})\n"),
			want: `sum(up{cluster="cluster1"})`,
		},
		"metricsQuery with a label as a field": {
			spec: query(`up{cluster="{{ .Cluster.Labels.cluster }}"}`),
			want: `up{cluster="us-east-1"}`,
		},
		"metricsQuery without template": {
			spec: query(`vector(1)`),
			want: `vector(1)`,
		},
		"missing label with index": {
			spec:    query(`up{cluster="{{ index .Cluster.Labels "region" }}"}`),
			wantErr: `no key "region" in the map; it has cluster, cluster_id, cluster_name`,
		},
		"missing label with index and no labels at all": {
			spec:    query(`up{cluster="{{ index .Cluster.Labels "region" }}"}`),
			data:    func(d *QueryData) { d.Cluster.Labels = nil },
			wantErr: `no key "region" in the map, which is empty`,
		},
		"missing label as a field": {
			spec:    query(`up{cluster="{{ .Cluster.Labels.region }}"}`),
			wantErr: `map has no entry for key "region"`,
		},
		"unknown field": {
			spec:    query(`up{cluster="{{ .Cluster.Nmae }}"}`),
			wantErr: `metricsQuery: .Cluster.Nmae is not a field of the query data (line 1, col 23); the fields are .Cluster.Name, .Cluster.Labels,`,
		},
		"template that does not parse": {
			spec:    query(`up{cluster="{{ .Cluster.Name }"}`),
			wantErr: `template: metricsQuery:1`,
		},
		"index of something else than a map": {
			spec:    query(`{{ index .Cluster.Name 0 }}`),
			wantErr: `index works on maps such as .Cluster.Labels, not on string`,
		},
		"metricsQuery empty once filled in": {
			spec:    query(`{{ if false }}up{{ end }}`),
			wantErr: "metricsQuery is empty once its template is filled in",
		},
		"neither query": {
			spec:    &v1alpha1.TrafficMigrationPolicySpec{},
			wantErr: "neither metricsQuery nor trafficShare is set",
		},
		"trafficShare without selector": {
			spec: share(nil),
			want: `100 * sum(rate(istio_requests_total{cluster="cluster1"}[5m])) / sum(rate(istio_requests_total[5m]))`,
		},
		"trafficShare with selector": {
			spec: share(func(ts *v1alpha1.TrafficShare) {
				ts.Selector = ` destination_service_name="example-gateway-istio",reporter="source" `
			}),
			want: `100 * sum(rate(istio_requests_total{cluster="cluster1",destination_service_name="example-gateway-istio",reporter="source"}[5m])) / sum(rate(istio_requests_total{destination_service_name="example-gateway-istio",reporter="source"}[5m]))`,
		},
		"trafficShare with custom label and value": {
			spec: share(func(ts *v1alpha1.TrafficShare) {
				ts.ClusterLabel = "source_cluster"
				ts.ClusterLabelValue = `{{ index .Cluster.Labels "cluster" }}`
				ts.Window = "1h30m"
			}),
			want: `100 * sum(rate(istio_requests_total{source_cluster="us-east-1"}[1h30m])) / sum(rate(istio_requests_total[1h30m]))`,
		},
		"trafficShare with a minimum of traffic": {
			spec: share(func(ts *v1alpha1.TrafficShare) {
				ts.Selector = `reporter="source"`
				ts.MinRequestsPerSecond = 0.25
			}),
			want: `100 * sum(rate(istio_requests_total{cluster="cluster1",reporter="source"}[5m])) / (sum(rate(istio_requests_total{reporter="source"}[5m])) >= 0.25)`,
		},
		"trafficShare with a large minimum": {
			spec: share(func(ts *v1alpha1.TrafficShare) { ts.MinRequestsPerSecond = 2e6 }),
			want: `100 * sum(rate(istio_requests_total{cluster="cluster1"}[5m])) / (sum(rate(istio_requests_total[5m])) >= 2e+06)`,
		},
		"trafficShare defaults when not defaulted by the API server": {
			spec: share(func(ts *v1alpha1.TrafficShare) { ts.ClusterLabel, ts.Window = "", "" }),
			want: `100 * sum(rate(istio_requests_total{cluster="cluster1"}[5m])) / sum(rate(istio_requests_total[5m]))`,
		},
		"trafficShare value with quotes and backslashes": {
			spec: share(func(ts *v1alpha1.TrafficShare) { ts.ClusterLabelValue = `{{ index .Cluster.Labels "odd" }}` }),
			data: func(d *QueryData) { d.Cluster.Labels["odd"] = `a"b\c` },
			want: `100 * sum(rate(istio_requests_total{cluster="a\"b\\c"}[5m])) / sum(rate(istio_requests_total[5m]))`,
		},
		"trafficShare value with a missing label": {
			spec:    share(func(ts *v1alpha1.TrafficShare) { ts.ClusterLabelValue = `{{ index .Cluster.Labels "region" }}` }),
			wantErr: `template: trafficShare.clusterLabelValue:1:3: executing "trafficShare.clusterLabelValue" at <index .Cluster.Labels "region">: error calling index: no key "region"`,
		},
		"trafficShare value that is empty": {
			spec:    share(func(ts *v1alpha1.TrafficShare) { ts.ClusterLabelValue = `{{ index .Cluster.Labels "empty" }}` }),
			data:    func(d *QueryData) { d.Cluster.Labels["empty"] = "" },
			wantErr: `the value of label "cluster" for cluster "cluster1" is empty`,
		},
		"no spec": {
			wantErr: "no policy spec",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data := testData()
			if tc.data != nil {
				tc.data(&data)
			}
			got, err := ResolveQuery(tc.spec, data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v (query %q)", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("\nwant %s\ngot  %s", tc.want, got)
			}
			again, err := ResolveQuery(tc.spec, data)
			if err != nil || again != got {
				t.Errorf("a second resolution differs: %q, %v", again, err)
			}
		})
	}
}

func TestNewQueryData(t *testing.T) {
	policy := &v1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "policies"},
		Spec:       v1alpha1.TrafficMigrationPolicySpec{TargetRef: v1alpha1.GatewayReference{Name: "gw"}},
	}
	cluster := ClusterInfo{Name: "cluster1"}
	got := NewQueryData(policy, cluster)
	want := QueryData{Cluster: cluster, Gateway: ObjectInfo{Name: "gw", Namespace: "policies"}, Policy: ObjectInfo{Name: "p", Namespace: "policies"}}
	if got.Gateway != want.Gateway || got.Policy != want.Policy || got.Cluster.Name != want.Cluster.Name {
		t.Errorf("want %+v, got %+v", want, got)
	}
	policy.Spec.TargetRef.Namespace = "gateways"
	if got := NewQueryData(policy, cluster); got.Gateway.Namespace != "gateways" {
		t.Errorf("want the Gateway in targetRef.namespace, got %+v", got.Gateway)
	}
}

// TestWindowGrammarMatchesCRD proves that every trafficShare.window the CRD accepts is
// one the built query accepts (Prometheus's own duration parser, longer than zero),
// and that the windows Prometheus would refuse are refused by both.
func TestWindowGrammarMatchesCRD(t *testing.T) {
	b, err := os.ReadFile("../../../manifests/crd/traffic.open-cluster-management.io_trafficmigrationpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	rules := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["trafficShare"].Properties["window"].XValidations
	// Each rule is a conjunction of self.matches('<regex>') and self != '', with the
	// regex as a CEL string literal.
	matches := regexp.MustCompile(`self\.matches\('([^']*)'\)`)
	var patterns []*regexp.Regexp
	for _, r := range rules {
		rest := matches.ReplaceAllString(r.Rule, "")
		if strings.Trim(strings.ReplaceAll(rest, "self != ''", ""), " &") != "" {
			t.Fatalf("rule %q has more than self.matches and self != '': extend this test", r.Rule)
		}
		for _, m := range matches.FindAllStringSubmatch(r.Rule, -1) {
			patterns = append(patterns, regexp.MustCompile(strings.ReplaceAll(m[1], `\\`, `\`)))
		}
	}
	if len(patterns) == 0 {
		t.Fatal("no self.matches rule on trafficShare.window")
	}
	crdAccepts := func(s string) bool {
		if s == "" {
			return false
		}
		for _, p := range patterns {
			if !p.MatchString(s) {
				return false
			}
		}
		return true
	}

	tests := map[string]bool{ // window: both accept it
		"5m": true, "1h30m": true, "30s": true, "1ms": true, "1y2w3d4h5m6s7ms": true, "90s": true,
		"99y999w9999d99999h999999m9999999s999999999ms": true, // the largest the CRD accepts
		"0s": false, "0m0s": false, "0": false, "": false,
		"5m1h": false, "1h1h": false, "5 minutes": false, "5": false, "1.5m": false, "-5m": false,
		"999y": false, "99999999999999999999s": false,
	}
	for in, want := range tests {
		_, err := trafficShareQuery(&v1alpha1.TrafficShare{Metric: "m", ClusterLabel: "cluster", Window: in}, testData())
		if in == "" {
			err = checkWindow(in) // an unset window means the default
		}
		goAccepts := err == nil
		if got := crdAccepts(in); got != want || goAccepts != want {
			t.Errorf("window %q: CRD accepts it: %v, the query accepts it: %v (%v); want %v", in, got, goAccepts, err, want)
		}
	}
}
