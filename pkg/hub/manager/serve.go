// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

const (
	// readHeaderTimeout bounds how long a client may take to send its headers, so
	// slow clients cannot hold connections open.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds how long a server waits for requests in flight when
	// the manager stops.
	shutdownTimeout = 5 * time.Second
)

// endpoint is one bound HTTP server of the manager.
type endpoint struct {
	name     string
	server   *http.Server
	listener net.Listener
}

// servers are the manager's HTTP servers: health probes and, unless disabled, metrics.
type servers struct {
	health  *endpoint
	metrics *endpoint // nil when disabled
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// listen binds the health and metrics addresses. Binding happens before anything
// else starts, so a taken port fails the manager at once.
func listen(ctx context.Context, o *Options, reg *prometheus.Registry, ready *atomic.Bool) (*servers, error) {
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeProbe(w, http.StatusOK, "ok")
	})
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case ctx.Err() != nil:
			writeProbe(w, http.StatusServiceUnavailable, "shutting down")
		case !ready.Load():
			writeProbe(w, http.StatusServiceUnavailable, "the hub controllers are not ready")
		default:
			writeProbe(w, http.StatusOK, "ok")
		}
	})

	s := &servers{}
	var err error
	if s.health, err = bind("health probes", o.HealthProbeBindAddress, health); err != nil {
		return nil, err
	}
	if o.MetricsBindAddress != disabledAddress {
		metrics := http.NewServeMux()
		metrics.Handle("/metrics", promhttp.InstrumentMetricHandler(reg,
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: promErrorLogger{klog.FromContext(ctx)}})))
		if s.metrics, err = bind("metrics", o.MetricsBindAddress, metrics); err != nil {
			_ = s.health.listener.Close()
			return nil, err
		}
	}
	return s, nil
}

// bind listens on addr and returns a server for handler there.
func bind(name, addr string, handler http.Handler) (*endpoint, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for %s on %s: %w", name, addr, err)
	}
	return &endpoint{
		name:     name,
		listener: l,
		server:   &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout},
	}, nil
}

// endpoints lists the servers that are on.
func (s *servers) endpoints() []*endpoint {
	if s.metrics == nil {
		return []*endpoint{s.health}
	}
	return []*endpoint{s.health, s.metrics}
}

// addresses reports the bound addresses.
func (s *servers) addresses() Addresses {
	a := Addresses{Health: s.health.listener.Addr().String()}
	if s.metrics != nil {
		a.Metrics = s.metrics.listener.Addr().String()
	}
	return a
}

// serve starts serving in the background; a server that fails calls stop.
func (s *servers) serve(ctx context.Context, stop func()) {
	logger := klog.FromContext(ctx)
	for _, e := range s.endpoints() {
		logger.Info("Serving "+e.name, "address", e.listener.Addr().String())
		s.wg.Go(func() {
			err := e.server.Serve(e.listener)
			if errors.Is(err, http.ErrServerClosed) {
				return
			}
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("serve %s on %s: %w", e.name, e.listener.Addr(), err))
			s.mu.Unlock()
			stop()
		})
	}
}

// shutdown stops the servers, letting requests in flight finish for a while, and
// returns the errors the servers failed with.
func (s *servers) shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, e := range s.endpoints() {
		if err := e.server.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down the %s server: %w", e.name, err))
			// Shutdown gave up on requests in flight; Close drops them.
			_ = e.server.Close()
		}
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(append(s.errs, errs...)...)
}

// writeProbe answers a probe with a short text body.
func writeProbe(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}

// promErrorLogger logs the errors promhttp meets while gathering metrics.
type promErrorLogger struct {
	logger klog.Logger
}

// Println implements promhttp.Logger.
func (l promErrorLogger) Println(v ...any) {
	l.logger.Error(nil, "Serving metrics failed", "error", fmt.Sprint(v...))
}
