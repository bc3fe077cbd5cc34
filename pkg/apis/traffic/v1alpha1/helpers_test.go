// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func TestProxyPlacementName(t *testing.T) {
	tests := map[string]struct {
		spec TrafficMigrationPolicySpec
		want string
	}{
		"default":  {spec: TrafficMigrationPolicySpec{PlacementRef: PlacementReference{Name: "gw"}}, want: "gw-proxy"},
		"explicit": {spec: TrafficMigrationPolicySpec{PlacementRef: PlacementReference{Name: "gw"}, ProxyPlacementName: "gw-drained"}, want: "gw-drained"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &TrafficMigrationPolicy{Spec: tc.spec}
			if got := p.ProxyPlacementName(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTargetNamespace(t *testing.T) {
	p := &TrafficMigrationPolicy{}
	p.Namespace = "policies"
	if got := p.TargetNamespace(); got != "policies" {
		t.Errorf("default: got %q, want the policy's namespace", got)
	}
	p.Spec.TargetRef.Namespace = "gateway-system"
	if got := p.TargetNamespace(); got != "gateway-system" {
		t.Errorf("explicit: got %q, want gateway-system", got)
	}
}

func TestParseComparison(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Comparison
		wantErr bool
	}{
		"le":                {in: "<= 0.05", want: Comparison{"<=", 0.05}},
		"bare number":       {in: "0.05", want: Comparison{"<=", 0.05}},
		"lt no space":       {in: "<1", want: Comparison{"<", 1}},
		"ge exponent":       {in: ">= 1e3", want: Comparison{">=", 1000}},
		"gt negative":       {in: "> -2.5", want: Comparison{">", -2.5}},
		"eq leading dot":    {in: "== .5", want: Comparison{"==", 0.5}},
		"ne trailing space": {in: " != 0 ", want: Comparison{"!=", 0}},
		"explicit plus":     {in: "<= +3", want: Comparison{"<=", 3}},
		"operator only":     {in: "<=", wantErr: true},
		"empty":             {in: "", wantErr: true},
		"reversed operator": {in: "=< 1", wantErr: true},
		"percent":           {in: "<= 5%", wantErr: true},
		"words":             {in: "less than 5", wantErr: true},
		"two numbers":       {in: "<= 1 2", wantErr: true},
		"nan":               {in: "<= NaN", wantErr: true},
		"infinity":          {in: "<= Inf", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseComparison(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestComparisonMet(t *testing.T) {
	tests := map[string]struct {
		c    Comparison
		v    float64
		want bool
	}{
		"le below":      {Comparison{"<=", 5}, 4.9, true},
		"le equal":      {Comparison{"<=", 5}, 5, true},
		"le above":      {Comparison{"<=", 5}, 5.1, false},
		"lt equal":      {Comparison{"<", 5}, 5, false},
		"ge equal":      {Comparison{">=", 5}, 5, true},
		"ge below":      {Comparison{">=", 5}, 4, false},
		"gt above":      {Comparison{">", 5}, 6, true},
		"eq":            {Comparison{"==", 0}, 0, true},
		"ne":            {Comparison{"!=", 0}, 0, false},
		"nan never le":  {Comparison{"<=", 5}, math.NaN(), false},
		"nan never ne":  {Comparison{"!=", 5}, math.NaN(), false},
		"inf above le":  {Comparison{"<=", 5}, math.Inf(1), false},
		"-inf below le": {Comparison{"<=", 5}, math.Inf(-1), true},
		"unknown op":    {Comparison{"~", 5}, 5, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.c.Met(tc.v); got != tc.want {
				t.Errorf("%s Met(%v) = %v, want %v", tc.c, tc.v, got, tc.want)
			}
		})
	}
}

func TestExpectation(t *testing.T) {
	share := TrafficMigrationPolicySpec{TrafficShare: &TrafficShare{MaxPercent: 2.5}}
	if got, err := share.Expectation(); err != nil || got != (Comparison{"<=", 2.5}) {
		t.Errorf("trafficShare: got %+v, %v", got, err)
	}
	query := TrafficMigrationPolicySpec{MetricsQuery: "q", ExpectedMetricsResult: "> 3"}
	if got, err := query.Expectation(); err != nil || got != (Comparison{">", 3}) {
		t.Errorf("metricsQuery: got %+v, %v", got, err)
	}
	bad := TrafficMigrationPolicySpec{MetricsQuery: "q", ExpectedMetricsResult: "three"}
	if _, err := bad.Expectation(); err == nil {
		t.Error("bad expectedMetricsResult: want an error")
	}
}

func TestParseForceRemove(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []string
	}{
		"empty":            {in: "", want: nil},
		"one":              {in: "cluster1", want: []string{"cluster1"}},
		"sorted and clean": {in: " cluster2, cluster1 ,,cluster2", want: []string{"cluster1", "cluster2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ParseForceRemove(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// crdSpec is the schema of spec in the generated CRD.
func crdSpec(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	b, err := os.ReadFile("../../../../manifests/crd/traffic.open-cluster-management.io_trafficmigrationpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

// TestComparisonGrammarMatchesCRD proves that the API server's validation of
// expectedMetricsResult (a CEL regex in the generated CRD) and the manager's parser
// accept exactly the same strings, so a policy the API accepts is one the manager reads.
func TestComparisonGrammarMatchesCRD(t *testing.T) {
	field := crdSpec(t).Properties["expectedMetricsResult"]
	rules := field.XValidations
	maxLength := int(ptr.Deref(field.MaxLength, 0))
	if maxLength != MaxComparisonLength {
		t.Fatalf("CRD maxLength of expectedMetricsResult is %d, ParseComparison's limit %d", maxLength, MaxComparisonLength)
	}
	if len(rules) != 1 {
		t.Fatalf("want one rule on expectedMetricsResult, got %d", len(rules))
	}
	// The rule is self.matches('<regex>') with the regex as a CEL string literal, in
	// which a backslash is written twice.
	rule := rules[0].Rule
	const prefix, suffix = "self.matches('", "')"
	if !strings.HasPrefix(rule, prefix) || !strings.HasSuffix(rule, suffix) {
		t.Fatalf("unexpected rule %q", rule)
	}
	celRegex := regexp.MustCompile(strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(rule, prefix), suffix), `\\`, `\`))

	for _, in := range []string{
		"<= 0.05", "0.05", "<1", ">= 1e3", "> -2.5", "== .5", " != 0 ", "<= +3", "1.", "1E-3", "\t<=\t7",
		"<=", "", "=< 1", "<= 5%", "less than 5", "<= 1 2", "<= NaN", "<= Inf", "1e", "..5", "<<= 1", "- 1",
		// Numbers at the edges of float64: a three-digit exponent would overflow (or
		// underflow) it, so neither side accepts one; the largest accepted numbers
		// are still finite.
		"<= 1e999", "<= 1e308", "1e-999", "<= 1e99", ">= -1e-99", "<= " + strings.Repeat("9", 58) + "e99",
		// The length limit: 64 characters are accepted, 65 are not.
		strings.Repeat("9", MaxComparisonLength), strings.Repeat("9", MaxComparisonLength+1),
	} {
		c, err := ParseComparison(in)
		cel := celRegex.MatchString(in) && utf8.RuneCountInString(in) <= maxLength
		if parsed := err == nil; cel != parsed {
			t.Errorf("%q: CRD accepts it: %v, ParseComparison accepts it: %v (%v)", in, cel, parsed, err)
		}
		if err == nil && (math.IsInf(c.Threshold, 0) || math.IsNaN(c.Threshold)) {
			t.Errorf("%q: accepted with a threshold that is not finite: %v", in, c.Threshold)
		}
	}
}

func TestClusterLabelsRoundTrip(t *testing.T) {
	labels := map[string]string{"region": "us-east", "cluster": "us-east-1", ClusterNameLabel: "cluster1"}
	msg := FormatClusterLabels(labels)
	if msg != "cluster=us-east-1,cluster_name=cluster1,region=us-east" {
		t.Errorf("format: got %q", msg)
	}
	got := ParseClusterLabels(msg + ", bad,=x")
	if len(got) != 3 || got["region"] != "us-east" || got["cluster"] != "us-east-1" || got[ClusterNameLabel] != "cluster1" {
		t.Errorf("parse: got %v", got)
	}
	if GatewayConditionType("gateway-system", "gw") != "gateway.traffic.open-cluster-management.io/gateway-system.gw" {
		t.Errorf("unexpected gateway condition type %q", GatewayConditionType("gateway-system", "gw"))
	}
}
