// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// trafficMetric is the request counter that the Gateways of the tests serve.
const trafficMetric = "e2e_gateway_requests_total"

// trafficSource plays the Gateways' metrics: a counter of requests served, labelled
// with the cluster's value of the label clusterLabel, which grows at a rate the test
// sets per cluster. The test bed's Prometheus scrapes it under its own job.
type trafficSource struct {
	job      string
	requests *prometheus.CounterVec

	mu    sync.Mutex
	rates map[string]float64 // requests per second by label value
}

// newTrafficSource serves the counter on a local port and makes the test bed's
// Prometheus scrape it until the test ends.
func newTrafficSource(t *testing.T, clusterLabel string) *trafficSource {
	t.Helper()
	s := &trafficSource{
		job:   "e2e-gateways",
		rates: map[string]float64{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: trafficMetric,
			Help: "Requests served by the Gateway.",
		}, []string{clusterLabel}),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.requests)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		const tick = 50 * time.Millisecond
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				s.mu.Lock()
				for value, rate := range s.rates {
					s.requests.WithLabelValues(value).Add(rate * tick.Seconds())
				}
				s.mu.Unlock()
			}
		}
	})
	setScrapeJobs(t, testbed.ScrapeConfig{JobName: s.job, Targets: []string{l.Addr().String()}})
	t.Cleanup(func() {
		setScrapeJobs(t)
		cancel()
		wg.Wait()
		_ = srv.Close()
	})
	return s
}

// set sets the request rates, in requests per second, by the cluster label's value.
func (s *trafficSource) set(rates map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for value, rate := range rates {
		s.rates[value] = rate
		s.requests.WithLabelValues(value).Add(0)
	}
}

// setScrapeJobs makes the test bed's Prometheus scrape exactly these jobs.
func setScrapeJobs(t *testing.T, jobs ...testbed.ScrapeConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bed.Prometheus.SetScrapeConfigs(ctx, testbed.PrometheusOptions{ScrapeConfigs: jobs}); err != nil {
		t.Errorf("set Prometheus's scrape jobs: %v", err)
	}
}
