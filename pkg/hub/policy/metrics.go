// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// Metrics are the policy controller's own Prometheus metrics.
type Metrics struct {
	evaluations   *prometheus.CounterVec
	queryDuration prometheus.Histogram
	slotWait      *prometheus.HistogramVec
	draining      *prometheus.GaugeVec
	removals      *prometheus.CounterVec
	errors        *prometheus.CounterVec

	// What the alerts of the chart's PrometheusRule read, from each policy's status.
	conditions *prometheus.GaugeVec
	clusters   *prometheus.GaugeVec
	drainStart *prometheus.GaugeVec
	minDrain   *prometheus.GaugeVec
	// What a dashboard draws a drain with: each draining cluster's last value and the
	// threshold it must meet, and how long drains took.
	checkValue     *prometheus.GaugeVec
	checkThreshold *prometheus.GaugeVec
	estimate       *prometheus.GaugeVec
	drainDuration  *prometheus.HistogramVec
	// dnsWrites counts the writes of policies' DNSEndpoints.
	dnsWrites *prometheus.CounterVec
	// statusWritesDeferred counts the syncs whose status kept new check results in
	// memory (StatusWrites).
	statusWritesDeferred prometheus.Counter
	// mu guards series, the label values each policy's status gave last.
	mu     sync.Mutex
	series map[string]policySeries
}

// NewMetrics makes the controller's metrics and registers them with reg, if not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		evaluations: counterVec("traffic_migration_evaluations_total", policyLabels("result"),
			"Metrics checks of draining clusters, by policy and result (Pass, Fail, NoData, Error)."),
		queryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "traffic_migration_query_duration_seconds",
			Help:    "How long one Prometheus query of a check took.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		slotWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "traffic_migration_query_slot_wait_seconds",
			Help:    "How long a check's Prometheus query waited for one of the manager's query slots, by the policy's namespace.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
		}, []string{"namespace"}),
		draining: gaugeVec("traffic_migration_draining_clusters", policyLabels(),
			"Clusters that left a policy's real Placement and are still in its proxy."),
		removals: counterVec("traffic_migration_removals_total", policyLabels("reason"),
			"Clusters removed from proxy Placements, by policy and reason."),
		errors: counterVec("traffic_migration_errors_total", []string{"reason"},
			"Checks that could not give a result, and failed writes, by reason."),
		conditions: gaugeVec("traffic_migration_policy_condition", policyLabels("type", "status", "reason"),
			"1 for each condition of a policy's status, with its type, status and reason."),
		clusters: gaugeVec("traffic_migration_clusters", policyLabels("phase"),
			"Clusters in a policy's status, by phase (Active, Draining, Held, Removed)."),
		drainStart: gaugeVec("traffic_migration_drain_start_timestamp_seconds", policyLabels("cluster"),
			"When a draining or held cluster started to drain, in Unix seconds."),
		minDrain: gaugeVec("traffic_migration_min_drain_duration_seconds", policyLabels(),
			"A policy's minDrainDuration, in seconds."),
		checkValue: gaugeVec("traffic_migration_check_value", policyLabels("cluster"),
			"The value the last check of a draining or held cluster read (for trafficShare, its share in percent); only while it drains."),
		checkThreshold: gaugeVec("traffic_migration_check_threshold", policyLabels("cluster"),
			"The threshold a draining or held cluster's checks compare their value with (maxPercent, or expectedMetricsResult's number); only while it drains."),
		estimate: gaugeVec("traffic_migration_estimated_removal_timestamp_seconds", policyLabels("cluster"),
			"When a draining or held cluster's checks are expected to let it go, in Unix seconds (its status row's estimatedRemovalTime); no series while that is unknown."),
		drainDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "traffic_migration_drain_duration_seconds",
			Help:    "How long clusters drained before they left a proxy Placement, by outcome (GatePassed, MaxDrainDurationRemove, HubMaxDrainDurationRemove, ForceRemoved, ManagedClusterGone).",
			Buckets: prometheus.ExponentialBuckets(30, 2, 12), // 30s to about 17h
		}, []string{"outcome"}),
		dnsWrites: counterVec("traffic_migration_dns_writes_total", policyLabels("operation", "result"),
			"Writes of a policy's DNSEndpoint (spec.dns), by operation (create, update) and result (Written, Error)."),
		statusWritesDeferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "traffic_migration_status_writes_deferred_total",
			Help: "Syncs whose new status differed from the written one only by check results and was kept in memory, the budget of such writes being spent (--status-write-qps); it is written with the policy's next change or within --status-flush-interval.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.evaluations, m.queryDuration, m.slotWait, m.draining, m.removals, m.errors,
			m.conditions, m.clusters, m.drainStart, m.minDrain, m.checkValue, m.checkThreshold, m.estimate, m.drainDuration, m.dnsWrites, m.statusWritesDeferred)
	}
	return m
}

// policyLabels are the label names of a policy's series: its namespace and name, then
// extra.
func policyLabels(extra ...string) []string {
	return append([]string{"namespace", "policy"}, extra...)
}

// gaugeVec makes a GaugeVec named name, with labels and help.
func gaugeVec(name string, labels []string, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// counterVec makes a CounterVec named name, with labels and help.
func counterVec(name string, labels []string, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func (m *Metrics) evaluation(policy *trafficv1alpha1.TrafficMigrationPolicy, ev *promcheck.Check) {
	m.evaluations.WithLabelValues(policy.Namespace, policy.Name, string(ev.Result)).Inc()
	if ev.Result == trafficv1alpha1.EvaluationError || ev.Result == trafficv1alpha1.EvaluationNoData {
		m.errors.WithLabelValues(ev.Reason).Inc()
	}
}

// removed counts a removal and, from the Removed row of the status written with it,
// how long the cluster drained.
func (m *Metrics) removed(policy *trafficv1alpha1.TrafficMigrationPolicy, r decision.Removal, status *trafficv1alpha1.TrafficMigrationPolicyStatus) {
	m.removals.WithLabelValues(policy.Namespace, policy.Name, string(r.Reason)).Inc()
	for _, row := range status.Clusters {
		if row.Name == r.Cluster && row.DrainStartTime != nil && row.RemovalTime != nil {
			m.drainDuration.WithLabelValues(string(r.Reason)).Observe(row.RemovalTime.Sub(row.DrainStartTime.Time).Seconds())
			return
		}
	}
}

func (m *Metrics) setDraining(namespace, name string, n int32) {
	m.draining.WithLabelValues(namespace, name).Set(float64(n))
}

// observe sets the per-policy gauges from the status written for the policy. Series
// that the new status no longer has are deleted, and only those, so that a scrape
// never misses a series that stays.
func (m *Metrics) observe(policy *trafficv1alpha1.TrafficMigrationPolicy, status *trafficv1alpha1.TrafficMigrationPolicyStatus) {
	ns, name := policy.Namespace, policy.Name
	m.setDraining(ns, name, status.DrainingClusters)
	now := policySeries{}
	for _, c := range status.Conditions {
		now.conditions = append(now.conditions, [5]string{ns, name, c.Type, string(c.Status), c.Reason})
	}
	phases := map[trafficv1alpha1.ClusterPhase]int{}
	expect, expectErr := policy.Spec.Expectation()
	for _, row := range status.Clusters {
		phases[row.Phase]++
		if row.Phase != trafficv1alpha1.ClusterDraining && row.Phase != trafficv1alpha1.ClusterHeld {
			continue
		}
		if row.DrainStartTime != nil {
			now.drainStarts = append(now.drainStarts, row.Name)
			m.drainStart.WithLabelValues(ns, name, row.Name).Set(float64(row.DrainStartTime.Unix()))
		}
		// A value that is not a number (none yet, NaN) leaves no series: a gap in the
		// drawing, not a zero.
		if v, err := strconv.ParseFloat(row.LastValue, 64); err == nil && !math.IsNaN(v) {
			now.checkValues = append(now.checkValues, row.Name)
			m.checkValue.WithLabelValues(ns, name, row.Name).Set(v)
		}
		if row.EstimatedRemovalTime != nil {
			now.estimates = append(now.estimates, row.Name)
			m.estimate.WithLabelValues(ns, name, row.Name).Set(float64(row.EstimatedRemovalTime.Unix()))
		}
		if expectErr == nil {
			now.thresholds = append(now.thresholds, row.Name)
			m.checkThreshold.WithLabelValues(ns, name, row.Name).Set(expect.Threshold)
		}
	}
	for _, c := range now.conditions {
		m.conditions.WithLabelValues(c[:]...).Set(1)
	}
	for _, phase := range []trafficv1alpha1.ClusterPhase{trafficv1alpha1.ClusterActive, trafficv1alpha1.ClusterDraining, trafficv1alpha1.ClusterHeld, trafficv1alpha1.ClusterRemoved} {
		m.clusters.WithLabelValues(ns, name, string(phase)).Set(float64(phases[phase]))
	}
	m.minDrain.WithLabelValues(ns, name).Set(decision.PolicyFromSpec(&policy.Spec).MinDrainDuration.Seconds())

	m.mu.Lock()
	defer m.mu.Unlock()
	before := m.series[ns+"/"+name]
	for _, c := range before.conditions {
		if !slices.Contains(now.conditions, c) {
			m.conditions.DeleteLabelValues(c[:]...)
		}
	}
	for _, gone := range []struct {
		before, now []string
		vec         *prometheus.GaugeVec
	}{
		{before.drainStarts, now.drainStarts, m.drainStart},
		{before.checkValues, now.checkValues, m.checkValue},
		{before.thresholds, now.thresholds, m.checkThreshold},
		{before.estimates, now.estimates, m.estimate},
	} {
		for _, cluster := range gone.before {
			if !slices.Contains(gone.now, cluster) {
				gone.vec.DeleteLabelValues(ns, name, cluster)
			}
		}
	}
	if m.series == nil {
		m.series = map[string]policySeries{}
	}
	m.series[ns+"/"+name] = now
}

// policySeries are the label values of a policy's series that come and go.
type policySeries struct {
	conditions  [][5]string
	drainStarts []string
	// checkValues, thresholds and estimates are the clusters with a value, a threshold
	// and an estimate series.
	checkValues, thresholds, estimates []string
}

func (m *Metrics) forget(namespace, name string) {
	m.draining.DeleteLabelValues(namespace, name)
	m.mu.Lock()
	delete(m.series, namespace+"/"+name)
	m.mu.Unlock()
	policy := prometheus.Labels{"namespace": namespace, "policy": name}
	m.conditions.DeletePartialMatch(policy)
	m.clusters.DeletePartialMatch(policy)
	m.drainStart.DeletePartialMatch(policy)
	m.minDrain.DeletePartialMatch(policy)
	m.checkValue.DeletePartialMatch(policy)
	m.checkThreshold.DeletePartialMatch(policy)
	m.estimate.DeletePartialMatch(policy)
	m.evaluations.DeletePartialMatch(policy)
	m.removals.DeletePartialMatch(policy)
	m.dnsWrites.DeletePartialMatch(policy)
}

// dnsWrite counts a write of the policy's DNSEndpoint.
func (m *Metrics) dnsWrite(policy *trafficv1alpha1.TrafficMigrationPolicy, operation, result string) {
	m.dnsWrites.WithLabelValues(policy.Namespace, policy.Name, operation, result).Inc()
}
