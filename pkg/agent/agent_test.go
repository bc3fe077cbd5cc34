// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// testTimeout bounds every wait of these tests; the machine may be busy.
const testTimeout = 30 * time.Second

// unreachable is an address where nothing listens.
func unreachable(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "https://" + addr
}

// get is proctest.Get with the body's surrounding white space trimmed.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	code, body := proctest.Get(t, url)
	return code, strings.TrimSpace(body)
}

// unavailableAPIServer is a Kubernetes API server that answers every request 503, as
// one that is starting or overloaded does, and counts the lists it is sent, by path.
type unavailableAPIServer struct {
	url   string
	mu    sync.Mutex
	lists map[string]int
}

func newUnavailableAPIServer(t *testing.T) *unavailableAPIServer {
	t.Helper()
	s := &unavailableAPIServer{lists: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An informer's reflector lists once per attempt, after a watch-list request
		// when it tries one first.
		if r.Method == http.MethodGet && !r.URL.Query().Has("watch") {
			s.mu.Lock()
			s.lists[r.URL.Path]++
			s.mu.Unlock()
		}
		http.Error(w, "the server is currently unable to handle the request", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// listed is how many lists of path the server has answered (or is answering).
func (s *unavailableAPIServer) listed(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists[path]
}

// The lists of the informers whose sync makes the agent ready.
const (
	addonsPath = "/apis/addon.open-cluster-management.io/v1alpha1/namespaces/c1/managedclusteraddons"
	crdsPath   = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
)

// An agent whose clusters do not answer keeps running and retrying, says it is alive
// but not ready, and stops cleanly when asked.
func TestRunWaitsForUnavailableClusters(t *testing.T) {
	hub, spoke := newUnavailableAPIServer(t), newUnavailableAPIServer(t)
	o := NewOptions()
	o.HubKubeconfig = proctest.WriteKubeconfig(t, hub.url)
	o.Kubeconfig = proctest.WriteKubeconfig(t, spoke.url)
	o.ClusterName = "c1"
	o.HealthProbeBindAddress = "127.0.0.1:0"
	addrs := make(chan string, 1)
	o.OnListening = func(a string) { addrs <- a }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()

	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("the agent did not listen")
	}
	if code, body := get(t, "http://"+addr+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	// Not ready, checked all along until the agent has met a failed list of both its
	// informers and tried again: a reflector lists again only once it has handled the
	// failure of its previous attempt, so by then the agent has seen its clusters fail
	// and must still not be ready.
	deadline := time.Now().Add(testTimeout)
	for hub.listed(addonsPath) < 2 || spoke.listed(crdsPath) < 2 {
		if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusServiceUnavailable || body != "the agent's caches have not synced" {
			t.Fatalf("/readyz = %d %q while the clusters fail every request", code, body)
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned while the clusters are unavailable: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not list again after failing: %d lists of its add-on on the hub, %d of the CRDs on its cluster", hub.listed(addonsPath), spoke.listed(crdsPath))
		}
		time.Sleep(20 * time.Millisecond) // the poll's interval
	}
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusServiceUnavailable || body != "the agent's caches have not synced" {
		t.Errorf("/readyz = %d %q after failed lists", code, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Run did not return after cancel")
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = conn.Close()
		t.Errorf("%s still accepts connections", addr)
	}
}

func TestRunFailures(t *testing.T) {
	taken := proctest.TakenAddress(t)
	tests := map[string]struct {
		mutate  func(o *Options)
		wantErr string
	}{
		"invalid options": {mutate: func(o *Options) { o.ClusterName = "" }, wantErr: "invalid options: --cluster-name is required"},
		"taken port": {
			mutate:  func(o *Options) { o.HealthProbeBindAddress = taken },
			wantErr: "listen for health probes on " + taken,
		},
		"bad hub kubeconfig": {
			mutate: func(o *Options) {
				o.HubKubeconfig = filepath.Join(t.TempDir(), "bad")
				_ = os.WriteFile(o.HubKubeconfig, []byte("not: [yaml"), 0o600)
			},
			wantErr: "load the hub kubeconfig",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			o.HubKubeconfig = proctest.WriteKubeconfig(t, unreachable(t))
			o.Kubeconfig = proctest.WriteKubeconfig(t, unreachable(t))
			o.ClusterName = "c1"
			o.HealthProbeBindAddress = "127.0.0.1:0"
			tc.mutate(o)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err := o.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
