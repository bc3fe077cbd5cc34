// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

const (
	// readHeaderTimeout bounds how long a client may take to send its headers.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds how long the server waits for requests in flight when the
	// agent stops.
	shutdownTimeout = 5 * time.Second
)

// probes is the agent's health probe server: /healthz answers 200 while the process
// runs, /readyz once the agent's caches have synced.
type probes struct {
	server   *http.Server
	listener net.Listener
	wg       sync.WaitGroup
	err      error // set by the serving goroutine before wg.Done
}

// listenProbes binds addr before anything else starts, so a taken port fails the agent
// at once.
func listenProbes(ctx context.Context, addr string, ready *atomic.Bool) (*probes, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeProbe(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case ctx.Err() != nil:
			writeProbe(w, http.StatusServiceUnavailable, "shutting down")
		case !ready.Load():
			writeProbe(w, http.StatusServiceUnavailable, "the agent's caches have not synced")
		default:
			writeProbe(w, http.StatusOK, "ok")
		}
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for health probes on %s: %w", addr, err)
	}
	return &probes{listener: l, server: &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}}, nil
}

// address is the bound address.
func (p *probes) address() string { return p.listener.Addr().String() }

// serve serves in the background; when the server fails it calls stop.
func (p *probes) serve(ctx context.Context, stop func()) {
	klog.FromContext(ctx).Info("Serving health probes", "address", p.address())
	p.wg.Go(func() {
		if err := p.server.Serve(p.listener); !errors.Is(err, http.ErrServerClosed) {
			p.err = fmt.Errorf("serve health probes on %s: %w", p.address(), err)
			stop()
		}
	})
}

// shutdown stops the server, letting requests in flight finish for a while, and
// returns the error the server failed with, if any.
func (p *probes) shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var shutdownErr error
	if err := p.server.Shutdown(ctx); err != nil {
		shutdownErr = fmt.Errorf("shut down the health probe server: %w", err)
		_ = p.server.Close()
	}
	p.wg.Wait()
	return errors.Join(p.err, shutdownErr)
}

// writeProbe answers a probe with a short text body.
func writeProbe(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}
