// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policywatch"
)

//go:embed assets
var assets embed.FS

// minUpdateGap is the least time between two updates sent to one page: a drain
// checked every second changes its policy's status every second, and each update
// of a policy page runs its range queries.
const minUpdateGap = time.Second

// refreshEvery is how often a page is sent again although no policy changed, so
// that Prometheus's newest values reach the charts and idle connections stay open.
const refreshEvery = 15 * time.Second

// server serves the dashboard's pages, its JSON and its server-sent events, all read
// from the policy cache.
type server struct {
	namespace string
	policies  trafficlisters.TrafficMigrationPolicyLister
	source    *chartSource
	changes   *policywatch.Broadcaster
	now       func() time.Time
	// allowedHosts are the Host headers the server answers; nil for any.
	allowedHosts map[string]bool
}

// handler returns the server's routes:
//
//	GET /                                  the fleet page
//	GET /policies/{namespace}/{name}       a policy's page
//	GET /assets/...                        the embedded scripts and styles
//	GET /api/fleet, /api/policies/{ns}/{name}           the pages' data, as JSON
//	GET /api/events/fleet, /api/events/policies/{ns}/{name}  the same as server-sent events, on every change
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	page := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(index)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /policies/{namespace}/{name}", page)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /api/fleet", s.serveJSON(s.fleet))
	mux.HandleFunc("GET /api/policies/{namespace}/{name}", s.serveJSON(s.policyOf))
	mux.HandleFunc("GET /api/events/fleet", s.serveEvents(s.fleet))
	mux.HandleFunc("GET /api/events/policies/{namespace}/{name}", s.serveEvents(s.policyOf))
	return s.guard(mux)
}

// guard answers only requests for an allowed Host, so that a web page elsewhere
// cannot read the hub through the user's browser by rebinding its name to the
// loopback address; and it tells the browser to load nothing from elsewhere.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.allowedHosts != nil {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !s.allowedHosts[host] {
				http.Error(w, "this dashboard answers only as localhost", http.StatusForbidden)
				return
			}
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// view builds the data of a page for a request.
type view func(ctx context.Context, r *http.Request) (any, error)

// fleet builds the fleet page, the list of the policies, from the cache.
func (s *server) fleet(_ context.Context, _ *http.Request) (any, error) {
	var list []*trafficv1alpha1.TrafficMigrationPolicy
	var err error
	if s.namespace == "" {
		list, err = s.policies.List(labels.Everything())
	} else {
		list, err = s.policies.TrafficMigrationPolicies(s.namespace).List(labels.Everything())
	}
	if err != nil {
		return nil, fmt.Errorf("list policies from the cache: %w", err)
	}
	now := s.now()
	views := make([]policyview.Policy, 0, len(list))
	for _, p := range list {
		views = append(views, policyview.Build(policyview.Objects{Policy: p}, now))
	}
	return policyview.NewList(s.namespace, views), nil
}

// policyOf builds a policy's page from the cache and, for its charts, Prometheus.
func (s *server) policyOf(ctx context.Context, r *http.Request) (any, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p, err := s.policies.TrafficMigrationPolicies(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return PolicyPage{Policy: policyview.Policy{Namespace: ns, Name: name}, Found: false}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get policy %s/%s from the cache: %w", ns, name, err)
	}
	now := s.now()
	return buildPolicyPage(p, s.source.inputs(ctx, p, now), now), nil
}

func (s *server) serveJSON(v view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := v(r.Context(), r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(data)
	}
}

// serveEvents sends the page's data as a server-sent event at once, then again
// whenever a policy changed (at most once per minUpdateGap) or refreshEvery passed,
// and only when the data differ from what was sent last, until the browser leaves.
func (s *server) serveEvents(v view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming is not supported", http.StatusInternalServerError)
			return
		}
		changed, unsubscribe := s.changes.Subscribe()
		defer unsubscribe()
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		flusher.Flush()

		ctx := r.Context()
		var last []byte
		refresh := time.NewTicker(refreshEvery)
		defer refresh.Stop()
		for {
			data, err := v(ctx, r)
			if ctx.Err() != nil {
				return
			}
			var msg []byte
			if err != nil {
				msg, _ = json.Marshal(map[string]string{"error": err.Error()})
			} else if msg, err = json.Marshal(data); err != nil {
				msg, _ = json.Marshal(map[string]string{"error": err.Error()})
			}
			if !bytes.Equal(msg, last) {
				if _, err := fmt.Fprintf(w, "event: page\ndata: %s\n\n", msg); err != nil {
					return
				}
				flusher.Flush()
				last = msg
			}
			gap := time.NewTimer(minUpdateGap)
			select {
			case <-ctx.Done():
				gap.Stop()
				return
			case <-gap.C:
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-refresh.C:
			}
		}
	}
}

// logRequests logs each request at verbosity 4.
func logRequests(ctx context.Context, next http.Handler) http.Handler {
	logger := klog.FromContext(ctx)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger.V(4).Info("Request", "method", r.Method, "path", r.URL.Path)
		next.ServeHTTP(w, r)
	})
}
