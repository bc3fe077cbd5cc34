// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"

	"open-cluster-management.io/traffic-migration/pkg/probe"
)

// servers are the manager's HTTP endpoints: health probes and, unless disabled, metrics.
type servers struct {
	health  *probe.Endpoint
	metrics *probe.Endpoint // nil when disabled
}

// listen binds the health and metrics addresses. Binding happens before anything
// else starts, so a taken port fails the manager at once.
func listen(ctx context.Context, o *Options, reg *prometheus.Registry, ready *atomic.Bool) (*servers, error) {
	s := &servers{}
	var err error
	health := probe.Handler(ctx, ready, "the hub controllers are not ready")
	if s.health, err = probe.Listen("health probes", o.HealthProbeBindAddress, health); err != nil {
		return nil, err
	}
	if o.MetricsBindAddress != probe.DisabledAddress {
		metrics := http.NewServeMux()
		metrics.Handle("/metrics", promhttp.InstrumentMetricHandler(reg,
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: promErrorLogger{klog.FromContext(ctx)}})))
		if o.Profiling {
			metrics.HandleFunc("/debug/pprof/", pprof.Index)
			metrics.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			metrics.HandleFunc("/debug/pprof/profile", pprof.Profile)
			metrics.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			metrics.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		if s.metrics, err = probe.Listen("metrics", o.MetricsBindAddress, metrics); err != nil {
			_ = s.health.Close()
			return nil, err
		}
	}
	return s, nil
}

// endpoints lists the endpoints that are on.
func (s *servers) endpoints() []*probe.Endpoint {
	if s.metrics == nil {
		return []*probe.Endpoint{s.health}
	}
	return []*probe.Endpoint{s.health, s.metrics}
}

// addresses reports the bound addresses.
func (s *servers) addresses() Addresses {
	a := Addresses{Health: s.health.Addr()}
	if s.metrics != nil {
		a.Metrics = s.metrics.Addr()
	}
	return a
}

// promErrorLogger logs the errors promhttp meets while gathering metrics.
type promErrorLogger struct {
	logger klog.Logger
}

// Println implements promhttp.Logger.
func (l promErrorLogger) Println(v ...any) {
	l.logger.Error(nil, "Serving metrics failed", "error", fmt.Sprint(v...))
}
