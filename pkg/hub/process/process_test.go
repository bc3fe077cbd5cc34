// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// testTimeout bounds every wait of these tests; the machine may be busy.
const testTimeout = 30 * time.Second

// testOptions returns options for a manager on free local ports that reaches a hub at
// server, without leader election, and a channel that receives the bound addresses.
func testOptions(t *testing.T, server string) (*Options, <-chan Addresses) {
	t.Helper()
	o := newOptions(t.TempDir())
	o.Kubeconfig = proctest.WriteKubeconfig(t, server)
	o.MetricsBindAddress = "127.0.0.1:0"
	o.HealthProbeBindAddress = "127.0.0.1:0"
	o.LeaderElect = false
	addrs := make(chan Addresses, 1)
	o.OnListening = func(a Addresses) { addrs <- a }
	return o, addrs
}

// runInBackground runs the manager and returns a channel that receives Run's error.
func runInBackground(ctx context.Context, o *Options, start StartFunc) <-chan error {
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, start) }()
	return done
}

// receive waits for a value on ch, failing the test after testTimeout.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// waitForStatus polls url until it answers want.
func waitForStatus(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		code, body := proctest.Get(t, url)
		if code == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %q, want %d", url, code, body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertClosed checks that nothing listens on addr any more.
func assertClosed(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = conn.Close()
		t.Errorf("%s still accepts connections", addr)
	}
}

func TestRunWithoutLeaderElection(t *testing.T) {
	// Without leader election the manager never calls the hub itself.
	o, addrs := testOptions(t, "http://127.0.0.1:1")
	called := make(chan *rest.Config, 1)
	markReady := make(chan struct{})
	start := func(ctx context.Context, env Env) error {
		if env.Workers != 4 {
			return fmt.Errorf("workers = %d, want 4", env.Workers)
		}
		syncs := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_controller_syncs_total", Help: "Syncs."})
		if err := env.Registry.Register(syncs); err != nil {
			return err
		}
		syncs.Inc()
		called <- env.Config
		select {
		case <-markReady:
			env.Ready()
		case <-ctx.Done():
		}
		<-ctx.Done()
		return nil
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runInBackground(ctx, o, start)
	a := receive(t, addrs, "the bound addresses")
	if a.Health == "" || a.Metrics == "" || strings.HasSuffix(a.Health, ":0") || strings.HasSuffix(a.Metrics, ":0") {
		t.Fatalf("bound addresses %+v, want two real ports", a)
	}

	if code, body := proctest.Get(t, "http://"+a.Health+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	cfg := receive(t, called, "the StartFunc")
	if cfg.Host != "http://127.0.0.1:1" || cfg.QPS != 50 || cfg.Burst != 100 || !strings.HasPrefix(cfg.UserAgent, userAgent+"/") {
		t.Errorf("rest config: host %q, qps %v, burst %d, user agent %q", cfg.Host, cfg.QPS, cfg.Burst, cfg.UserAgent)
	}
	if code, body := proctest.Get(t, "http://"+a.Health+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") {
		t.Errorf("/readyz before Ready = %d %q, want 503", code, body)
	}
	close(markReady)
	waitForStatus(t, "http://"+a.Health+"/readyz", http.StatusOK)

	code, metrics := proctest.Get(t, "http://"+a.Metrics+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		"\ngo_goroutines ",
		"\nprocess_start_time_seconds ",
		"\ntest_controller_syncs_total 1\n",
		"\ntraffic_migration_manager_leader 1\n",
		"\npromhttp_metric_handler_requests_total{",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	cancel()
	if err := receive(t, done, "Run to return"); err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
	assertClosed(t, a.Health)
	assertClosed(t, a.Metrics)
}

func TestRunFailures(t *testing.T) {
	errBoom := errors.New("boom")
	tests := map[string]struct {
		mutate  func(t *testing.T, o *Options)
		start   StartFunc
		wantErr string
		wantIs  error
	}{
		"controllers fail": {
			start:   func(context.Context, Env) error { return errBoom },
			wantErr: "run the hub controllers: boom",
			wantIs:  errBoom,
		},
		"controllers stop on their own": {
			start:   func(context.Context, Env) error { return nil },
			wantErr: "the hub controllers stopped before the manager was asked to stop",
		},
		"controllers register a runtime metric again": {
			start: func(_ context.Context, env Env) error {
				return env.Registry.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines", Help: "Again."}))
			},
			wantErr: `run the hub controllers: a previously registered descriptor with the same fully-qualified name as Desc{fqName: "go_goroutines"`,
		},
		"invalid options": {
			mutate:  func(_ *testing.T, o *Options) { o.Workers = 0 },
			wantErr: "invalid options: --workers must be at least 1, not 0",
		},
		"health port taken": {
			mutate:  func(t *testing.T, o *Options) { o.HealthProbeBindAddress = proctest.TakenAddress(t) },
			wantErr: "listen for health probes on 127.0.0.1:",
		},
		"metrics port taken": {
			mutate:  func(t *testing.T, o *Options) { o.MetricsBindAddress = proctest.TakenAddress(t) },
			wantErr: "listen for metrics on 127.0.0.1:",
		},
		"no kubeconfig": {
			mutate: func(t *testing.T, o *Options) {
				// Nothing to load: no file, no $KUBECONFIG, no home and not in a pod.
				o.Kubeconfig = ""
				t.Setenv("KUBECONFIG", "")
				t.Setenv("HOME", t.TempDir())
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			},
			wantErr: "load the hub kubeconfig: ",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, addrs := testOptions(t, "http://127.0.0.1:1")
			if tc.mutate != nil {
				tc.mutate(t, o)
			}
			start := tc.start
			if start == nil {
				start = func(ctx context.Context, env Env) error {
					<-ctx.Done()
					return nil
				}
			}
			err := receive(t, runInBackground(t.Context(), o, start), "Run to return")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Run returned %v, want an error containing %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Run returned %v, which does not wrap %v", err, tc.wantIs)
			}
			select {
			case a := <-addrs:
				assertClosed(t, a.Health)
				assertClosed(t, a.Metrics)
			default: // it failed before listening
			}
		})
	}
}

func TestRunMetricsDisabled(t *testing.T) {
	o, addrs := testOptions(t, "http://127.0.0.1:1")
	o.MetricsBindAddress = "0"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runInBackground(ctx, o, func(ctx context.Context, env Env) error {
		env.Ready()
		<-ctx.Done()
		return nil
	})
	a := receive(t, addrs, "the bound addresses")
	if a.Metrics != "" {
		t.Errorf("metrics address %q, want none", a.Metrics)
	}
	waitForStatus(t, "http://"+a.Health+"/readyz", http.StatusOK)
	if code, _ := proctest.Get(t, "http://"+a.Health+"/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics on the health address = %d, want 404", code)
	}
	cancel()
	if err := receive(t, done, "Run to return"); err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	assertClosed(t, a.Health)
}

// TestRunProfiling: --profiling serves Go's heap profile beside the metrics; without
// it there is none.
func TestRunProfiling(t *testing.T) {
	for _, on := range []bool{true, false} {
		o, addrs := testOptions(t, "http://127.0.0.1:1")
		o.Profiling = on
		ctx, cancel := context.WithCancel(t.Context())
		done := runInBackground(ctx, o, func(ctx context.Context, env Env) error {
			env.Ready()
			<-ctx.Done()
			return nil
		})
		a := receive(t, addrs, "the bound addresses")
		waitForStatus(t, "http://"+a.Health+"/readyz", http.StatusOK)
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		if code, _ := proctest.Get(t, "http://"+a.Metrics+"/debug/pprof/heap"); code != want {
			t.Errorf("with --profiling=%t, /debug/pprof/heap on the metrics address = %d, want %d", on, code, want)
		}
		cancel()
		if err := receive(t, done, "Run to return"); err != nil {
			t.Fatalf("Run returned %v, want nil", err)
		}
	}
}
