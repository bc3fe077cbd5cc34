// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package probe

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// testTimeout bounds every wait of these tests; the machine may be busy.
const testTimeout = 30 * time.Second

func TestHandler(t *testing.T) {
	tests := map[string]struct {
		ready      bool
		stopping   bool
		wantReadyz int
		wantBody   string
	}{
		"not ready":             {wantReadyz: http.StatusServiceUnavailable, wantBody: "caches not synced"},
		"ready":                 {ready: true, wantReadyz: http.StatusOK, wantBody: "ok"},
		"stopping":              {ready: true, stopping: true, wantReadyz: http.StatusServiceUnavailable, wantBody: "shutting down"},
		"stopping before ready": {stopping: true, wantReadyz: http.StatusServiceUnavailable, wantBody: "shutting down"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ready := &atomic.Bool{}
			ready.Store(tc.ready)
			h := Handler(ctx, ready, "caches not synced")
			if tc.stopping {
				cancel()
			}
			for path, want := range map[string]struct {
				code int
				body string
			}{
				"/healthz": {http.StatusOK, "ok"},
				"/readyz":  {tc.wantReadyz, tc.wantBody},
			} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != want.code || rec.Body.String() != want.body+"\n" {
					t.Errorf("%s = %d %q, want %d %q", path, rec.Code, rec.Body.String(), want.code, want.body+"\n")
				}
				if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Errorf("%s Content-Type = %q", path, ct)
				}
				if nosniff := rec.Header().Get("X-Content-Type-Options"); nosniff != "nosniff" {
					t.Errorf("%s X-Content-Type-Options = %q", path, nosniff)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != http.StatusNotFound {
				t.Errorf("/metrics = %d, want 404", rec.Code)
			}
		})
	}
}

// The handler reads readiness on every request: a process that becomes ready is seen
// ready at once.
func TestHandlerFollowsReadiness(t *testing.T) {
	ready := &atomic.Bool{}
	h := Handler(t.Context(), ready, "not yet")
	readyz := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if code := readyz(); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before ready = %d, want 503", code)
	}
	ready.Store(true)
	if code := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz once ready = %d, want 200", code)
	}
}

func TestListenTakenAddress(t *testing.T) {
	first, err := Listen("health probes", "127.0.0.1:0", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Close() }()
	_, err = Listen("metrics", first.Addr(), http.NotFoundHandler())
	if want := "listen for metrics on " + first.Addr() + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Listen on a taken address: %v, want an error starting with %q", err, want)
	}
}

func TestServeAndShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := &atomic.Bool{}
	ready.Store(true)
	health, err := Listen("health probes", "127.0.0.1:0", Handler(ctx, ready, "not ready"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := Listen("metrics", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "metrics")
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(health.Addr(), ":0") || health.Addr() == other.Addr() {
		t.Fatalf("bound addresses %s and %s, want two real ports", health.Addr(), other.Addr())
	}
	stopped := make(chan struct{})
	s := Serve(ctx, func() { close(stopped) }, health, other)

	// Requests are served as soon as Serve returns: the addresses were bound before.
	if got := answer(t, "http://"+health.Addr()+"/readyz"); got != "200 ok\n" {
		t.Errorf("/readyz answered %q, want 200", got)
	}
	if got := answer(t, "http://"+other.Addr()+"/"); got != "200 metrics" {
		t.Errorf("the second endpoint answered %q", got)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, e := range []*Endpoint{health, other} {
		if conn, err := net.DialTimeout("tcp", e.Addr(), time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("%s still accepts connections after Shutdown", e.Addr())
		}
	}
	select {
	case <-stopped:
		t.Error("a server that was shut down called stop")
	default:
	}
}

// A server that fails stops the process, and Shutdown reports why.
func TestServeFailureStops(t *testing.T) {
	e, err := Listen("health probes", "127.0.0.1:0", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	addr := e.Addr()
	// A listener closed underneath the server makes it fail at its first accept.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	s := Serve(t.Context(), func() { close(stopped) }, e)
	select {
	case <-stopped:
	case <-time.After(testTimeout):
		t.Fatal("the failed server did not call stop")
	}
	err = s.Shutdown(t.Context())
	if want := "serve health probes on " + addr + ": "; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Shutdown after a failure: %v, want an error containing %q", err, want)
	}
}

// answer is the status code and body of a GET of url, as "<code> <body>".
func answer(t *testing.T, url string) string {
	t.Helper()
	code, body := proctest.Get(t, url)
	return fmt.Sprintf("%d %s", code, body)
}
