// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// The sources a chart's values come from.
const (
	// SourcePrometheus: the values are a range query of the cluster's resolved query,
	// read through the policy's Prometheus Secret.
	SourcePrometheus = "prometheus"
	// SourceHistory: the values are the checks kept in the policy's status.
	SourceHistory = "history"
)

// PolicyPage is the page of one policy: its view, as the status command shows it,
// and a chart per draining cluster. The browser draws it as it is, so its field
// names are the page's contract.
type PolicyPage struct {
	policyview.Policy
	// Found is false when the policy does not exist (any more).
	Found bool `json:"found"`
	// StalledHint says what a stalled drain is and what to do, for the charts of
	// stalled clusters (policyview.StalledHint).
	StalledHint string `json:"stalledHint"`
	// ValueLabel names a check's value on the charts' axis.
	ValueLabel string `json:"valueLabel"`
	// Threshold is the number a check's value is compared with, where the charts
	// draw their threshold line; HasThreshold is false when the expectation cannot
	// be parsed.
	Threshold    float64 `json:"threshold"`
	HasThreshold bool    `json:"hasThreshold"`
	Charts       []Chart `json:"charts"`
}

// Chart is the chart of one draining (or Held, or lately Removed) cluster. Its
// series are aligned on Times, as the chart library draws them: Values, Passed,
// Failed and NoValue have one entry per time, nil where the series has no point.
type Chart struct {
	Cluster string `json:"cluster"`
	Phase   string `json:"phase"`
	// Stalled: the cluster drains, and its drain is stalled (the row's stalled).
	Stalled bool `json:"stalled,omitempty"`
	// Source is SourcePrometheus or SourceHistory; SourceNote says so in words, and
	// why the chart is not from Prometheus when it is not.
	Source     string `json:"source"`
	SourceNote string `json:"sourceNote"`
	Query      string `json:"query,omitempty"`
	// The moments marked on the chart, in Unix seconds: the drain's start, the end of
	// minDrainDuration, the end of maxDrainDuration (nil without a deadline) and the
	// removal (nil while the cluster is in the proxy).
	DrainStart float64 `json:"drainStart"`
	// DNSWithdrawal is, with spec.dns, when DNS let go of the cluster (nil until
	// then): the minimum drain counts from it, and lasts at least the TTL, so
	// MinDrainEnd is 0 until then.
	DNSWithdrawal *float64 `json:"dnsWithdrawal,omitempty"`
	MinDrainEnd   float64  `json:"minDrainEnd,omitempty"`
	MaxDrainEnd   *float64 `json:"maxDrainEnd,omitempty"`
	Removal       *float64 `json:"removal,omitempty"`
	// Times are Unix seconds, ascending.
	Times  []float64  `json:"times"`
	Values []*float64 `json:"values"`
	// Passed and Failed are the checks with a value, at that value; NoValue are the
	// checks that read none (NoData, Error), drawn on the threshold line.
	Passed  []*float64 `json:"passed"`
	Failed  []*float64 `json:"failed"`
	NoValue []*float64 `json:"noValue"`
	// Texts are the values as a person reads them, one per time: the check's value
	// (or "error", "no data") where there is a check, else the series' value.
	Texts []string `json:"texts"`
	// Checks lists the checks shown, oldest first.
	Checks []CheckView `json:"checks"`
}

// CheckView is one check of a cluster.
type CheckView struct {
	Time   float64 `json:"time"`
	Result string  `json:"result"`
	Value  string  `json:"value,omitempty"`
}

// series is a chart's values over time, from Prometheus, before they are aligned
// with the checks.
type series struct {
	times  []float64
	values []float64
}

// chartInput is what a chart of one cluster is built from besides the policy: the
// values from Prometheus when they could be read, or why not.
type chartInput struct {
	// prometheus holds the values of the range query; nil when there are none.
	prometheus *series
	// note says why the chart is not from Prometheus; empty when it is.
	note string
}

// buildPolicyPage builds the page of p at time now. inputs has, for each cluster
// that gets a chart, what its values come from; a cluster missing from inputs is
// charted from the status history.
func buildPolicyPage(p *trafficv1alpha1.TrafficMigrationPolicy, inputs map[string]chartInput, now time.Time) PolicyPage {
	rules := decision.PolicyFromSpec(&p.Spec)
	page := PolicyPage{Policy: policyview.Build(policyview.Objects{Policy: p}, now), Found: true, ValueLabel: "query result", Charts: []Chart{},
		StalledHint: policyview.StalledHint}
	if p.Spec.TrafficShare != nil {
		page.ValueLabel = "share of the traffic (%)"
	}
	if cmpn, err := p.Spec.Expectation(); err == nil {
		page.Threshold, page.HasThreshold = cmpn.Threshold, true
	}
	for _, row := range p.Status.Clusters {
		if charted(row) {
			page.Charts = append(page.Charts, buildChart(rules, p.Spec.DNS != nil, row, inputs[row.Name], page.Threshold))
		}
	}
	return page
}

// charted reports whether a cluster row gets a chart: it drains, is held, or was
// removed after a drain.
func charted(row trafficv1alpha1.ClusterStatus) bool {
	return row.DrainStartTime != nil && row.Phase != trafficv1alpha1.ClusterActive
}

// buildChart builds the chart of one cluster row: its values from Prometheus when in
// has them, otherwise from the checks in the row's history; the checks as points
// either way.
func buildChart(rules decision.Policy, followsDNS bool, row trafficv1alpha1.ClusterStatus, in chartInput, threshold float64) Chart {
	c := Chart{
		Cluster:    row.Name,
		Phase:      string(row.Phase),
		Stalled:    row.Stalled && (row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld),
		Query:      row.ResolvedQuery,
		DrainStart: unix(row.DrainStartTime.Time),
		Checks:     []CheckView{},
	}
	if followsDNS && row.DNSWithdrawalTime != nil {
		at := unix(row.DNSWithdrawalTime.Time)
		c.DNSWithdrawal = &at
	}
	// The drain's moments as the manager's rules count them.
	if end := rules.MinDrainEnd(&row, followsDNS); !end.IsZero() {
		c.MinDrainEnd = unix(end)
	}
	if end := rules.Deadline(&row); !end.IsZero() {
		c.MaxDrainEnd = ptr(unix(end))
	}
	if row.RemovalTime != nil {
		r := unix(row.RemovalTime.Time)
		c.Removal = &r
	}
	for _, rec := range checksOf(row) {
		c.Checks = append(c.Checks, CheckView{Time: unix(rec.Time.Time), Result: string(rec.Result), Value: rec.Value})
	}

	// Every time of the chart: the values' and the checks'.
	values := map[float64]float64{}
	var times []float64
	if in.prometheus != nil {
		c.Source = SourcePrometheus
		c.SourceNote = "Values from Prometheus: a range query of the resolved query, through the policy's Secret."
		for i, t := range in.prometheus.times {
			times = append(times, t)
			values[t] = in.prometheus.values[i]
		}
	} else {
		c.Source = SourceHistory
		c.SourceNote = "Values from the check history in the policy's status (the last " +
			strconv.Itoa(trafficv1alpha1.MaxCheckHistory) + " checks)"
		if in.note != "" {
			c.SourceNote += ": " + in.note
		} else {
			c.SourceNote += "."
		}
		for _, ch := range c.Checks {
			if v, ok := number(ch.Value); ok {
				values[ch.Time] = v
			}
		}
	}
	for _, ch := range c.Checks {
		times = append(times, ch.Time)
	}
	slices.Sort(times)
	times = slices.Compact(times)

	checkAt := map[float64]CheckView{}
	for _, ch := range c.Checks {
		checkAt[ch.Time] = ch
	}
	c.Times = times
	c.Texts = make([]string, len(times))
	c.Values = make([]*float64, len(times))
	c.Passed = make([]*float64, len(times))
	c.Failed = make([]*float64, len(times))
	c.NoValue = make([]*float64, len(times))
	for i, t := range times {
		if v, ok := values[t]; ok {
			c.Values[i], c.Texts[i] = ptr(v), policyview.Number(v)
		}
		ch, ok := checkAt[t]
		if !ok {
			continue
		}
		c.Texts[i] = policyview.CheckValue(ch.Value, trafficv1alpha1.EvaluationResult(ch.Result))
		v, hasValue := number(ch.Value)
		switch {
		case ch.Result == string(trafficv1alpha1.EvaluationPass) && hasValue:
			c.Passed[i] = ptr(v)
		case ch.Result == string(trafficv1alpha1.EvaluationFail) && hasValue:
			c.Failed[i] = ptr(v)
		default:
			c.NoValue[i] = ptr(threshold)
		}
	}
	return c
}

// checksOf is a row's history, with its last check added when the history does not
// hold it (a manager that keeps no history still reports its last check).
func checksOf(row trafficv1alpha1.ClusterStatus) []trafficv1alpha1.CheckRecord {
	checks := slices.Clone(row.History)
	if row.LastEvaluationTime == nil || row.LastResult == "" {
		return checks
	}
	for _, rec := range checks {
		if rec.Time.Equal(row.LastEvaluationTime) {
			return checks
		}
	}
	checks = append(checks, trafficv1alpha1.CheckRecord{Time: *row.LastEvaluationTime, Result: row.LastResult, Value: row.LastValue})
	slices.SortStableFunc(checks, func(a, b trafficv1alpha1.CheckRecord) int { return a.Time.Compare(b.Time.Time) })
	return checks
}

// seriesFromMatrix reads the values of the first series of a range query's answer.
// NaN and infinite values are left out: the chart cannot draw them. The note says
// when the answer had more than one series.
func seriesFromMatrix(v model.Value) (*series, string) {
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Sprintf("Prometheus answered a %s, not a matrix", v.Type())
	}
	if len(m) == 0 {
		return &series{}, ""
	}
	note := ""
	if len(m) > 1 {
		note = fmt.Sprintf("the query returned %d series; the chart shows the first, %s", len(m), m[0].Metric)
	}
	s := &series{}
	for _, sp := range m[0].Values {
		f := float64(sp.Value)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s.times = append(s.times, float64(sp.Timestamp)/1000)
		s.values = append(s.values, f)
	}
	return s, note
}

// number parses a value as Prometheus formats it; NaN and infinities are no number
// the chart can draw.
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func unix(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func ptr(f float64) *float64 { return &f }
