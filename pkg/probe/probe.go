// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package probe serves the health probes of the traffic-migration processes, the hub
// manager and the spoke agent, and runs their HTTP servers the same way: each address
// is bound before anything else starts, so that a taken port fails the process at
// once; the servers run in the background, and one that fails stops the process; and
// they shut down with a grace period for the requests in flight.
package probe

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

	"k8s.io/klog/v2"
)

const (
	// readHeaderTimeout bounds how long a client may take to send its headers, so
	// slow clients cannot hold connections open.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds how long a server waits for requests in flight when the
	// process stops.
	shutdownTimeout = 5 * time.Second
)

// Handler serves the health probes: /healthz answers 200 while the process runs;
// /readyz answers 200 once ready is set, and 503 with notReady before, or with
// "shutting down" once ctx is done, so that no new work is sent to a process that is
// stopping.
func Handler(ctx context.Context, ready *atomic.Bool, notReady string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case ctx.Err() != nil:
			write(w, http.StatusServiceUnavailable, "shutting down")
		case !ready.Load():
			write(w, http.StatusServiceUnavailable, notReady)
		default:
			write(w, http.StatusOK, "ok")
		}
	})
	return mux
}

// write answers a probe with a short text body.
func write(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}

// Endpoint is one bound HTTP server of a process, not serving yet.
type Endpoint struct {
	name     string
	listener net.Listener
	server   *http.Server
}

// Listen binds addr for handler. name says what the endpoint serves, for example
// "health probes" or "metrics", in logs and errors.
func Listen(name, addr string, handler http.Handler) (*Endpoint, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for %s on %s: %w", name, addr, err)
	}
	return &Endpoint{
		name:     name,
		listener: l,
		server:   &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout},
	}, nil
}

// Addr is the bound address, with the port the system chose when addr asked for
// port 0.
func (e *Endpoint) Addr() string { return e.listener.Addr().String() }

// Close releases the address of an endpoint that is not served, for example when the
// process fails to bind another one.
func (e *Endpoint) Close() error { return e.listener.Close() }

// Servers are endpoints served together, from Serve to Shutdown.
type Servers struct {
	endpoints []*Endpoint
	wg        sync.WaitGroup
	mu        sync.Mutex
	errs      []error // what the servers failed with
}

// Serve serves the endpoints in the background. A server that fails calls stop, which
// should make the process shut down: a process without its probes is restarted anyway.
func Serve(ctx context.Context, stop func(), endpoints ...*Endpoint) *Servers {
	logger := klog.FromContext(ctx)
	s := &Servers{endpoints: endpoints}
	for _, e := range endpoints {
		logger.Info("Serving "+e.name, "address", e.Addr())
		s.wg.Go(func() {
			err := e.server.Serve(e.listener)
			if errors.Is(err, http.ErrServerClosed) {
				return
			}
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("serve %s on %s: %w", e.name, e.Addr(), err))
			s.mu.Unlock()
			stop()
		})
	}
	return s
}

// Shutdown stops the servers, letting the requests in flight finish for a while, and
// returns the errors the servers failed with, if any.
func (s *Servers) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, e := range s.endpoints {
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

// DisabledAddress is the bind address that turns a listener off where that is allowed,
// as in controller-runtime.
const DisabledAddress = "0"

// ValidateAddress checks the bind address addr given with --flag: host:port with a
// numeric port, or DisabledAddress when mayDisable.
func ValidateAddress(flag, addr string, mayDisable bool) error {
	if mayDisable && addr == DisabledAddress {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		hint := ""
		if mayDisable {
			hint = ` or "` + DisabledAddress + `" to disable`
		}
		return fmt.Errorf("--%s %q must be host:port%s: %w", flag, addr, hint, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("--%s %q: port must be a number from 0 to 65535", flag, addr)
	}
	return nil
}
