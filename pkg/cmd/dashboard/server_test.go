// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policywatch"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// fakeRange answers every range query with one series, and records the queries. The
// dashboard runs no instant query.
type fakeRange struct {
	promcheck.Querier
	queries []string
}

func (f *fakeRange) QueryRange(_ context.Context, query string, r promv1.Range) (model.Value, error) {
	f.queries = append(f.queries, query)
	return model.Matrix{{Values: []model.SamplePair{
		{Timestamp: model.TimeFromUnixNano(r.Start.UnixNano()), Value: 50},
		{Timestamp: model.TimeFromUnixNano(r.End.UnixNano()), Value: 1},
	}}}, nil
}

// newTestServer serves the policies in an indexer that the test changes, with a
// Secret that may be read or not.
func newTestServer(t *testing.T, secretReadable bool, policies ...*trafficv1alpha1.TrafficMigrationPolicy) (*httptest.Server, cache.Indexer, *server, *fakeRange) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range policies {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	kube := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "prometheus", UID: "u1", ResourceVersion: "1"},
		Data:       map[string][]byte{"url": []byte("http://prometheus.invalid:9090"), "token": []byte("s3cret")},
	})
	if !secretReadable {
		kube.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "prometheus", nil)
		})
	}
	prom := &fakeRange{}
	source := &chartSource{clients: promcheck.NewClients(kube.CoreV1(), clock.RealClock{}, func(cfg promcheck.Config) (promcheck.Client, error) {
		if cfg.URL != "http://prometheus.invalid:9090" {
			t.Errorf("querier built for %s", cfg.URL)
		}
		return prom, nil
	})}
	s := &server{
		policies:     trafficlisters.NewTrafficMigrationPolicyLister(indexer),
		source:       source,
		changes:      policywatch.NewBroadcaster(),
		now:          func() time.Time { return now },
		allowedHosts: allowedHosts("localhost:3100"),
	}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	return srv, indexer, s, prom
}

func get(t *testing.T, url, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPagesAndAssets: the pages, the embedded assets and the JSON are served to
// localhost, with a policy that forbids loading anything from elsewhere, and nothing
// is served to another Host.
func TestPagesAndAssets(t *testing.T) {
	srv, _, _, _ := newTestServer(t, true, drainingPolicy())
	for path, want := range map[string]string{
		"/":                                      "<title>traffic-migration dashboard</title>",
		"/policies/gw/move":                      "/assets/dashboard.js",
		"/assets/vendor/uplot/uPlot.iife.min.js": "uPlot (v1.6.32)",
		"/assets/dashboard.js":                   "EventSource",
		"/api/fleet":                             `"name":"move"`,
	} {
		resp, body := get(t, srv.URL+path, "localhost:3100")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %s, want %q in the body", path, resp.Status, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	if resp, _ := get(t, srv.URL+"/api/fleet", "evil.example:3100"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request for another host: %s, want 403", resp.Status)
	}
}

// TestPolicyPageSources: the chart comes from Prometheus, through the Secret's
// client, when the user may read the Secret, and from the history, saying why,
// when not. The page never carries the Secret's values.
func TestPolicyPageSources(t *testing.T) {
	for name, tc := range map[string]struct {
		readable   bool
		wantSource string
		wantNote   string
	}{
		"may read the Secret":     {readable: true, wantSource: SourcePrometheus, wantNote: "range query"},
		"may not read the Secret": {readable: false, wantSource: SourceHistory, wantNote: "you may not read the policy's Prometheus Secret gw/prometheus"},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _, _, prom := newTestServer(t, tc.readable, drainingPolicy())
			resp, body := get(t, srv.URL+"/api/policies/gw/move", "127.0.0.1")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s", resp.Status, body)
			}
			var page PolicyPage
			if err := json.Unmarshal([]byte(body), &page); err != nil {
				t.Fatal(err)
			}
			if len(page.Charts) != 1 || page.Charts[0].Source != tc.wantSource || !strings.Contains(page.Charts[0].SourceNote, tc.wantNote) {
				t.Fatalf("charts: %+v", page.Charts)
			}
			if tc.readable && (len(prom.queries) != 1 || prom.queries[0] != "100 * share") {
				t.Errorf("want one range query of the resolved query, got %q", prom.queries)
			}
			if !tc.readable && len(prom.queries) != 0 {
				t.Errorf("queried Prometheus without the Secret: %q", prom.queries)
			}
			if strings.Contains(body, "s3cret") || strings.Contains(body, "prometheus.invalid") {
				t.Errorf("the page carries the Secret's values: %s", body)
			}
		})
	}
	srv, _, _, _ := newTestServer(t, true)
	_, body := get(t, srv.URL+"/api/policies/gw/gone", "localhost")
	if !strings.Contains(body, `"found":false`) {
		t.Errorf("a missing policy: %s", body)
	}
}

// TestEventsFollowChanges: the events stream sends the page at once and again when
// the policy changes, here when its draining cluster is removed.
func TestEventsFollowChanges(t *testing.T) {
	srv, indexer, s, _ := newTestServer(t, false, drainingPolicy())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events/policies/gw/move", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "localhost"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	pages := make(chan PolicyPage)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var p PolicyPage
			if err := json.Unmarshal([]byte(data), &p); err != nil {
				t.Errorf("event data: %v", err)
				return
			}
			select {
			case pages <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	next := func() PolicyPage {
		t.Helper()
		select {
		case p := <-pages:
			return p
		case <-ctx.Done():
			t.Fatal("no event")
			return PolicyPage{}
		}
	}
	if first := next(); len(first.Charts) != 1 || first.Charts[0].Phase != "Draining" {
		t.Fatalf("first event: %+v", first.Charts)
	}
	removed := drainingPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Status.Clusters[0].Phase = trafficv1alpha1.ClusterRemoved
		p.Status.Clusters[0].RemovalTime = at(0)
	})
	if err := indexer.Update(removed); err != nil {
		t.Fatal(err)
	}
	s.changes.Notify()
	if got := next(); len(got.Charts) != 1 || got.Charts[0].Phase != "Removed" || got.Charts[0].Removal == nil {
		t.Fatalf("after the removal: %+v", got.Charts)
	}
}

func TestValidate(t *testing.T) {
	for addr, ok := range map[string]bool{"localhost:3100": true, ":3100": true, "localhost": false, "localhost:": false} {
		o := NewOptions(nil, io.Discard, io.Discard)
		o.Address = addr
		if err := o.Validate(); (err == nil) != ok {
			t.Errorf("--address %q: %v", addr, err)
		}
	}
	o := NewOptions(nil, io.Discard, io.Discard)
	o.AllNamespaces, o.Hub.Namespace = true, "gw"
	if err := o.Validate(); err == nil {
		t.Error("--namespace with --all-namespaces should be refused")
	}
	if allowedHosts(":3100") != nil || allowedHosts("0.0.0.0:3100") != nil {
		t.Error("an address on every interface answers any host")
	}
	if h := allowedHosts("127.0.0.1:3100"); !h["localhost"] || h["example.com"] {
		t.Errorf("loopback hosts: %v", h)
	}
}
