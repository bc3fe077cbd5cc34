// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// workqueueMetrics exposes client-go's work queue metrics (depth, adds, latency, work
// duration, retries) under the names Kubernetes controllers use, labelled with the
// queue's name, so that an operator can see a backlog and its age.
type workqueueMetrics struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = &workqueueMetrics{}

// registerWorkqueueMetrics registers the work queue metrics with reg and makes them
// the provider of every work queue created after it, process-wide. client-go takes
// only the first provider, so a second call registers metrics that stay at zero.
func registerWorkqueueMetrics(reg prometheus.Registerer) error {
	// Each metric is labelled with the queue's name.
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"name"})
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"name"})
	}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12) // 10ns to 1000s
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"name"})
	}
	m := &workqueueMetrics{
		depth: gauge("workqueue_depth", "Current depth of the work queue."),
		adds:  counter("workqueue_adds_total", "Total number of adds handled by the work queue."),
		latency: histogram("workqueue_queue_duration_seconds",
			"How long in seconds an item stays in the work queue before being requested."),
		workDuration: histogram("workqueue_work_duration_seconds",
			"How long in seconds processing an item from the work queue takes."),
		unfinished: gauge("workqueue_unfinished_work_seconds",
			"How many seconds of work has been done that is in progress and has not been observed by work_duration."),
		longestRunning: gauge("workqueue_longest_running_processor_seconds",
			"How many seconds the longest running processor of the work queue has been running."),
		retries: counter("workqueue_retries_total", "Total number of retries handled by the work queue."),
	}
	for _, c := range []prometheus.Collector{m.depth, m.adds, m.latency, m.workDuration, m.unfinished, m.longestRunning, m.retries} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	workqueue.SetProvider(m)
	return nil
}

func (m *workqueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(name)
}

func (m *workqueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(name)
}

func (m *workqueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(name)
}

func (m *workqueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.workDuration.WithLabelValues(name)
}

func (m *workqueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(name)
}

func (m *workqueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.longestRunning.WithLabelValues(name)
}

func (m *workqueueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(name)
}
