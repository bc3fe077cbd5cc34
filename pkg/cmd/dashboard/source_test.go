// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// TestChartSourceNotes: each reason the charts cannot come from Prometheus is said
// in words, without the Secret's values; a client is built once per version of the
// Secret.
func TestChartSourceNotes(t *testing.T) {
	secret := func(data map[string]string, rv string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "prometheus", UID: "u", ResourceVersion: rv}, StringData: data}
	}
	for name, tc := range map[string]struct {
		objects []runtime.Object
		want    string
	}{
		"no Secret":       {nil, "Secret gw/prometheus does not exist"},
		"no url":          {[]runtime.Object{secret(map[string]string{"token": "s3cret"}, "1")}, "cannot be used"},
		"a misspelt key":  {[]runtime.Object{secret(map[string]string{"URL": "http://p:9090", "token": "s3cret"}, "1")}, "cannot be used"},
		"a usable Secret": {[]runtime.Object{secret(map[string]string{"url": "http://p:9090", "token": "s3cret"}, "1")}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			source := newChartSource(fake.NewClientset(tc.objects...).CoreV1())
			q, note := source.querier(context.Background(), drainingPolicy())
			if tc.want == "" && (q == nil || note != "") || tc.want != "" && (q != nil || !strings.Contains(note, tc.want)) {
				t.Errorf("querier %v, note %q; want a note with %q", q, note, tc.want)
			}
			if strings.Contains(note, "s3cret") {
				t.Errorf("the note shows the token: %q", note)
			}
		})
	}

	kube := fake.NewClientset(secret(map[string]string{"url": "http://p:9090"}, "1"))
	built := 0
	source := &chartSource{clients: promcheck.NewClients(kube.CoreV1(), clock.RealClock{}, func(cfg promcheck.Config) (promcheck.Client, error) {
		built++
		return promcheck.NewClient(cfg)
	})}
	for range 3 {
		source.querier(context.Background(), drainingPolicy())
	}
	if _, err := kube.CoreV1().Secrets("gw").Update(context.Background(), secret(map[string]string{"url": "http://q:9090"}, "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	source.querier(context.Background(), drainingPolicy())
	if built != 2 {
		t.Errorf("built %d clients for two versions of the Secret", built)
	}
}

// TestRunRefusesWhatItCannotRead: without the right to list policies, the command
// stops at once and says what it needs.
func TestRunRefusesWhatItCannotRead(t *testing.T) {
	traffic := trafficfake.NewSimpleClientset()
	traffic.PrependReactor("list", "trafficmigrationpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "traffic.open-cluster-management.io", Resource: "trafficmigrationpolicies"}, "", errors.New("no"))
	})
	o := NewOptions(nil, io.Discard, io.Discard)
	o.AllNamespaces = true
	o.Hub.Load = func() (*hubclient.Clients, string, error) {
		return &hubclient.Clients{Traffic: traffic, Kube: fake.NewClientset()}, "default", nil
	}
	err := o.ValidateAndRun(context.Background())
	if err == nil || !strings.Contains(err.Error(), "list and watch on trafficmigrationpolicies") || !strings.Contains(err.Error(), "-n") {
		t.Errorf("want an error that says which right is missing, got %v", err)
	}
}

// TestRunServesUntilCancelled: the command watches the policies, serves them, and
// returns when its context ends, with its event streams closed.
func TestRunServesUntilCancelled(t *testing.T) {
	traffic := trafficfake.NewSimpleClientset(drainingPolicy())
	var out strings.Builder
	o := NewOptions(nil, &out, io.Discard)
	o.Address = "127.0.0.1:0"
	o.Hub.Load = func() (*hubclient.Clients, string, error) {
		return &hubclient.Clients{Traffic: traffic, Kube: fake.NewClientset()}, "gw", nil
	}
	addr := make(chan string, 1)
	o.listening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.ValidateAndRun(ctx) }()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("Run returned before it listened: %v", err)
	}
	resp, body := get(t, base+"/api/fleet", "127.0.0.1")
	if resp.StatusCode != 200 || !strings.Contains(body, `"name":"move"`) {
		t.Fatalf("GET /api/fleet: %s %s", resp.Status, body)
	}
	stream, err := http.Get(base + "/api/events/fleet")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := io.ReadAll(stream.Body); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the event stream did not end cleanly: %v", err)
	}
	if !strings.Contains(out.String(), "Serving the traffic-migration dashboard at http://127.0.0.1:") {
		t.Errorf("the command should say where it serves: %q", out.String())
	}
}
