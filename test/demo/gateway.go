// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The shape of the gateways' request counter: Istio's istio_requests_total, with the
// cluster label that multi-cluster Istio and federated Prometheus setups carry.
const (
	requestsMetric      = "istio_requests_total"
	clusterLabel        = "cluster"
	serviceLabel        = "destination_service_name"
	gatewayServiceName  = "demo-gateway-istio"
	responseCodeLabel   = "response_code"
	gatewayMetricsPath  = "/stats/prometheus" // where Envoy serves Prometheus metrics
	servedByHeader      = "X-Served-By"
	gatewayShutdownWait = 5 * time.Second
)

// gatewayServer is the data plane of one spoke's Gateway: an HTTP server that answers
// every request, counted in istio_requests_total, and a metrics endpoint for
// Prometheus. The spoke's gateway controller starts it when the Gateway object exists
// and stops it when the object is deleted, as a real Gateway controller (Istio, for
// one) creates and deletes the Gateway's deployment.
type gatewayServer struct {
	cluster     string
	addr        string // host:port of the traffic listener
	metricsAddr string // host:port of the metrics endpoint

	mu     sync.Mutex
	run    *gatewayRun // nil when stopped
	served atomic.Int64
}

// gatewayRun is one run of the data plane, from start to stop.
type gatewayRun struct {
	traffic, metrics *http.Server
	done             sync.WaitGroup
}

func newGatewayServer(cluster, addr, metricsAddr string) *gatewayServer {
	return &gatewayServer{cluster: cluster, addr: addr, metricsAddr: metricsAddr}
}

// running reports whether the data plane serves.
func (g *gatewayServer) running() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.run != nil
}

// start binds both listeners and serves; it does nothing if the server runs already.
// A new start has a new counter, as a new gateway pod has.
func (g *gatewayServer) start() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.run != nil {
		return nil
	}
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: requestsMetric,
		Help: "Requests served by the gateway.",
	}, []string{clusterLabel, serviceLabel, responseCodeLabel})
	reg.MustRegister(requests)
	ok := requests.WithLabelValues(g.cluster, gatewayServiceName, strconv.Itoa(http.StatusOK))

	trafficListener, err := net.Listen("tcp", g.addr)
	if err != nil {
		return fmt.Errorf("gateway of %s: %w", g.cluster, err)
	}
	metricsListener, err := net.Listen("tcp", g.metricsAddr)
	if err != nil {
		trafficListener.Close()
		return fmt.Errorf("gateway metrics of %s: %w", g.cluster, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		ok.Inc()
		g.served.Add(1)
		w.Header().Set(servedByHeader, g.cluster)
		fmt.Fprintf(w, "hello from the gateway on %s\n", g.cluster)
	})
	metricsMux := http.NewServeMux()
	metricsMux.Handle(gatewayMetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	run := &gatewayRun{
		traffic: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		metrics: &http.Server{Handler: metricsMux, ReadHeaderTimeout: 5 * time.Second},
	}
	for _, s := range []struct {
		srv *http.Server
		l   net.Listener
	}{{run.traffic, trafficListener}, {run.metrics, metricsListener}} {
		run.done.Add(1)
		go func() {
			defer run.done.Done()
			_ = s.srv.Serve(s.l) // ends with ErrServerClosed on stop
		}()
	}
	g.run = run
	return nil
}

// stop stops serving: no new connection is accepted, requests in flight finish. The
// server counts as running until it has stopped. Start and stop are not called
// concurrently.
func (g *gatewayServer) stop() {
	g.mu.Lock()
	run := g.run
	g.mu.Unlock()
	if run == nil {
		return
	}
	defer func() {
		g.mu.Lock()
		g.run = nil
		g.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), gatewayShutdownWait)
	defer cancel()
	for _, s := range []*http.Server{run.traffic, run.metrics} {
		if err := s.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = s.Close()
		}
	}
	run.done.Wait()
}
