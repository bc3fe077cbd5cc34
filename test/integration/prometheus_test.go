// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestPrometheusScrapesServedMetric proves the test bed's Prometheus scrapes a target
// the test serves and answers PromQL over what it scraped, live.
func TestPrometheusScrapesServedMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "testbed_requests_total", Help: "Requests served."}, []string{"cluster"})
	reg.MustRegister(requests)
	requests.WithLabelValues("cluster1").Add(42)
	requests.WithLabelValues("cluster2").Add(7)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	job := fmt.Sprintf("served-%d", time.Now().UnixNano())
	addScrapeJob(t, testbed.ScrapeConfig{JobName: job, Targets: []string{l.Addr().String()}})
	t.Cleanup(func() { removeScrapeJob(t, job) })

	client, err := api.NewClient(api.Config{Address: bed.Prometheus.URL})
	if err != nil {
		t.Fatal(err)
	}
	prom := promv1.NewAPI(client)
	query := fmt.Sprintf(`sum by (cluster) (testbed_requests_total{job=%q, cluster="cluster1"})`, job)
	waitForValue := func(want float64) {
		t.Helper()
		var last model.Value
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			v, _, err := prom.Query(ctx, query, time.Now())
			if err != nil {
				return false, err
			}
			last = v
			vec, ok := v.(model.Vector)
			return ok && len(vec) == 1 && float64(vec[0].Value) == want, nil
		})
		if err != nil {
			t.Fatalf("query %s: want %v, last answer %v: %v", query, want, last, err)
		}
	}
	waitForValue(42)
	// The answer follows the target: a later scrape sees the counter grow.
	requests.WithLabelValues("cluster1").Add(8)
	waitForValue(50)
}
