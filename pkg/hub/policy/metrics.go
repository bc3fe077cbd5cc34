// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"github.com/prometheus/client_golang/prometheus"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gate"
)

// Metrics are the policy controller's own Prometheus metrics.
type Metrics struct {
	evaluations   *prometheus.CounterVec
	queryDuration prometheus.Histogram
	draining      *prometheus.GaugeVec
	removals      *prometheus.CounterVec
	errors        *prometheus.CounterVec
}

// NewMetrics makes the controller's metrics and registers them with reg, if not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "traffic_migration_evaluations_total",
			Help: "Metrics checks of draining clusters, by result (Pass, Fail, NoData, Error).",
		}, []string{"result"}),
		queryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "traffic_migration_query_duration_seconds",
			Help:    "How long one Prometheus query of a check took.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		draining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "traffic_migration_draining_clusters",
			Help: "Clusters that left a policy's real Placement and are still in its proxy.",
		}, []string{"namespace", "policy"}),
		removals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "traffic_migration_removals_total",
			Help: "Clusters removed from proxy Placements, by reason.",
		}, []string{"reason"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "traffic_migration_errors_total",
			Help: "Checks that could not give a result, and failed writes, by reason.",
		}, []string{"reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.evaluations, m.queryDuration, m.draining, m.removals, m.errors)
	}
	return m
}

func (m *Metrics) evaluation(ev *gate.Evaluation) {
	m.evaluations.WithLabelValues(string(ev.Result)).Inc()
	if ev.Result == trafficv1alpha1.EvaluationError || ev.Result == trafficv1alpha1.EvaluationNoData {
		m.errors.WithLabelValues(ev.Reason).Inc()
	}
}

func (m *Metrics) removed(r decision.Removal) {
	m.removals.WithLabelValues(string(r.Reason)).Inc()
}

func (m *Metrics) setDraining(namespace, name string, n int32) {
	m.draining.WithLabelValues(namespace, name).Set(float64(n))
}

func (m *Metrics) forget(namespace, name string) {
	m.draining.DeleteLabelValues(namespace, name)
}
