// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ProxyPlacementSuffix is appended to placementRef.name when proxyPlacementName is unset.
const ProxyPlacementSuffix = "-proxy"

// ProxyPlacementName is the name of the policy's proxy Placement: proxyPlacementName,
// or "<placementRef.name>-proxy" when that is unset.
func (p *TrafficMigrationPolicy) ProxyPlacementName() string {
	if p.Spec.ProxyPlacementName != "" {
		return p.Spec.ProxyPlacementName
	}
	return p.Spec.PlacementRef.Name + ProxyPlacementSuffix
}

// TargetNamespace is the namespace of the target Gateway on the spokes: targetRef.namespace,
// or the policy's own namespace when that is unset.
func (p *TrafficMigrationPolicy) TargetNamespace() string {
	if p.Spec.TargetRef.Namespace != "" {
		return p.Spec.TargetRef.Namespace
	}
	return p.Namespace
}

// Comparison is a parsed expectedMetricsResult: an operator and a threshold.
type Comparison struct {
	// Operator is one of <=, <, >=, >, ==, !=.
	Operator string
	// Threshold is the number the value is compared with.
	Threshold float64
}

// MaxComparisonLength is the longest expectedMetricsResult, as the CRD's maxLength.
// With the exponent's two digits at most, it keeps every threshold a finite float64.
const MaxComparisonLength = 64

var comparisonPattern = regexp.MustCompile(`^\s*(<=|>=|<|>|==|!=)?\s*([-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]{1,2})?)\s*$`)

// ParseComparison parses an expectedMetricsResult such as "<= 0.05". A bare number
// means "<=". It accepts exactly what the CRD's validation accepts: the same grammar,
// the same length limit, so a number that would overflow is refused by both.
func ParseComparison(s string) (Comparison, error) {
	if len(s) > MaxComparisonLength {
		return Comparison{}, fmt.Errorf("%q is longer than %d characters", s, MaxComparisonLength)
	}
	m := comparisonPattern.FindStringSubmatch(s)
	if m == nil {
		return Comparison{}, fmt.Errorf("%q is not a comparison operator (<=, <, >=, >, ==, !=) and a number", s)
	}
	threshold, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return Comparison{}, fmt.Errorf("%q: %w", s, err)
	}
	op := m[1]
	if op == "" {
		op = "<="
	}
	return Comparison{Operator: op, Threshold: threshold}, nil
}

// Met reports whether v satisfies the comparison. NaN satisfies none: a value that is
// not a number never lets a check pass.
func (c Comparison) Met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch c.Operator {
	case "<=":
		return v <= c.Threshold
	case "<":
		return v < c.Threshold
	case ">=":
		return v >= c.Threshold
	case ">":
		return v > c.Threshold
	case "==":
		return v == c.Threshold
	case "!=":
		return v != c.Threshold
	}
	return false
}

// String formats the comparison as "<op> <threshold>".
func (c Comparison) String() string {
	return c.Operator + " " + strconv.FormatFloat(c.Threshold, 'g', -1, 64)
}

// Expectation is the comparison a check's value must meet: expectedMetricsResult for
// metricsQuery, or "<= maxPercent" for trafficShare.
func (s *TrafficMigrationPolicySpec) Expectation() (Comparison, error) {
	if s.TrafficShare != nil {
		return Comparison{Operator: "<=", Threshold: s.TrafficShare.MaxPercent}, nil
	}
	return ParseComparison(s.ExpectedMetricsResult)
}

// Check is the replacement check as a spec of its own, with metricsQuery and
// expectedMetricsResult, for the code that resolves and evaluates a policy's check;
// nil when the replacement has none.
func (r *Replacement) Check() *TrafficMigrationPolicySpec {
	if r == nil || r.MetricsQuery == "" {
		return nil
	}
	return &TrafficMigrationPolicySpec{MetricsQuery: r.MetricsQuery, ExpectedMetricsResult: r.ExpectedMetricsResult}
}

// ParseForceRemove splits the force-remove annotation's value into sorted, unique,
// non-empty cluster names.
func ParseForceRemove(value string) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range strings.Split(value, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// VerifyMode is how the manager confirms a withdrawal from DNS: verify.mode, and
// Authoritative when it is unset.
func (d *DNSPublishing) VerifyMode() DNSVerificationMode {
	if d == nil || d.Verify == nil || d.Verify.Mode == "" {
		return DNSVerifyAuthoritative
	}
	return d.Verify.Mode
}

// VerifyNameservers are verify.nameservers as strings; none asks the zones' own.
func (d *DNSPublishing) VerifyNameservers() []string {
	if d == nil || d.Verify == nil {
		return nil
	}
	out := make([]string, 0, len(d.Verify.Nameservers))
	for _, n := range d.Verify.Nameservers {
		out = append(out, string(n))
	}
	return out
}
