// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package check

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
)

// TestQuerierFromSecret: the check reads the policy's Secret as the manager does, and
// tells a Secret the user may not read from one that does not exist, each with what
// to do; --prometheus-url needs no Secret.
func TestQuerierFromSecret(t *testing.T) {
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: testSpec()}
	policy.Spec.PrometheusSecret.Name = "prom"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "prom"}, Data: map[string][]byte{"url": []byte("http://p:9090")}}
	forbidden := fake.NewClientset(secret)
	forbidden.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "prom", errors.New("no"))
	})
	for name, tc := range map[string]struct {
		kube       *fake.Clientset
		url        string
		wantFrom   string
		wantErrors []string
	}{
		"readable":         {kube: fake.NewClientset(secret), wantFrom: "http://p:9090 (Secret prom)"},
		"forbidden":        {kube: forbidden, wantErrors: []string{"you may not read Secret prom in namespace ns", "--prometheus-url"}},
		"missing":          {kube: fake.NewClientset(), wantErrors: []string{"Secret prom does not exist in namespace ns", "--prometheus-url"}},
		"--prometheus-url": {kube: forbidden, url: "http://q:9090", wantFrom: "http://q:9090 (--prometheus-url)"},
		"bad flag":         {kube: forbidden, url: "q:9090", wantErrors: []string{`--prometheus-url: Secret key "url"`}},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions(nil, io.Discard, io.Discard)
			o.PrometheusURL = tc.url
			q, from, err := o.querier(context.Background(), &hubclient.Clients{Kube: tc.kube}, policy)
			if tc.wantErrors == nil {
				if err != nil || q == nil || from != tc.wantFrom {
					t.Fatalf("got %v, %q, %v; want a client of %q", q, from, err, tc.wantFrom)
				}
				return
			}
			for _, want := range tc.wantErrors {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want %q in it", err, want)
				}
			}
		})
	}
}

// TestRunRestoresLostDrains: a cluster whose row says it drains but that the proxy
// lost (rule 12) is checked and reported as the manager decides it: draining, with its
// gate.
func TestRunRestoresLostDrains(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	policy := policyWith(drainingC1(now, 1, time.Minute))
	hub := readFrom(&gather.Hub{Input: decision.Input{
		RealKnown:       true,
		Real:            []decision.Group{{Clusters: []string{"c2"}}},
		Proxy:           []decision.Group{{Clusters: []string{"c2"}}}, // c1 lost
		ManagedClusters: sets.New("c1", "c2"),
		GatewayReady:    sets.New("c1", "c2"),
	}}, policy, now)
	r := run(context.Background(), policy, hub, querier{"c1": 1, "c2": 99})
	if len(r.Clusters) != 2 {
		t.Fatalf("want rows for c1 and c2, got %+v", r.Clusters)
	}
	c1 := r.Clusters[0]
	if c1.Name != "c1" || c1.Phase != trafficv1alpha1.ClusterDraining || c1.Result != trafficv1alpha1.EvaluationPass ||
		c1.Gate == nil || c1.Gate.ConsecutiveSuccesses == nil || *c1.Gate.ConsecutiveSuccesses != 2 {
		t.Errorf("c1 drains on, checked, with 2 passes in a row: %+v, gate %+v", c1, c1.Gate)
	}
}
