// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

// TestSecretsNeverLeak: the manager reads two Prometheus Secrets, one with a bearer
// token and one with a username and password, both with a CA certificate, and uses
// them for the checks of a draining cluster (a recording proxy in front of Prometheus
// sees the credentials arrive). Neither the token, the password, the CA certificate
// nor their base64 forms appear in the manager's log at -v=10, in any Event of the hub
// or in any policy. The same search over the Secrets themselves finds every one.
// Rules: none; docs/design.md section 4 (the Prometheus Secret and its keys).
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "secrets")
	f := m.f
	token := "tok" + rand.String(32)
	username, password := "reader-"+rand.String(6), "pw"+rand.String(32)+"!%"
	ca := pki.NewTestCA(t, "secrets CA "+rand.String(8))
	caPEM, caDER := ca.CertPEM, ca.Cert.Raw
	auth := newAuthRecorder(t, bed.Prometheus.URL)

	secrets := map[string]map[string]string{
		"prometheus-token": {"url": auth.url, "token": token, "ca.crt": string(caPEM)},
		"prometheus-basic": {"url": auth.url, "username": username, "password": password, "ca.crt": string(caPEM)},
	}
	var policies []string
	for name, data := range secrets {
		policies = append(policies, m.startWithSecret(t, name, data, nil).Name)
	}

	// cluster1 drains and its checks get answers through both Secrets.
	m.moveToC2(t)
	for _, name := range policies {
		f.waitForPolicy(t, m.ns, name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == trafficv1alpha1.EvaluationFail &&
				statusOf(condition(p, trafficv1alpha1.ConditionPrometheusReachable)) == metav1.ConditionTrue
		})
	}
	basic := base64.StdEncoding.EncodeToString([]byte(username + ":" + password))
	for _, header := range []string{"Bearer " + token, "Basic " + basic} {
		if !auth.saw(header) {
			t.Fatalf("Prometheus never received the credentials of a Secret: the checks did not use them")
		}
	}

	caBody := base64.StdEncoding.EncodeToString(caDER)
	caData := base64.StdEncoding.EncodeToString(caPEM)
	needles := leakNeedles{
		"the token":                          token,
		"the password":                       password,
		"the token in base64":                base64.StdEncoding.EncodeToString([]byte(token)),
		"the password in base64":             base64.StdEncoding.EncodeToString([]byte(password)),
		"the basic credentials in base64":    basic,
		"the CA certificate (PEM body)":      caBody[70:120], // within the PEM's second line
		"the CA certificate in Secret data":  caData[200:260],
		"the CA certificate's first PEM row": caBody[:64],
	}
	written := readManagerWritten(t, f)
	// The manager's log names each policy it synced (its logger's "policy" value).
	logged := true
	for _, name := range policies {
		logged = logged && strings.Contains(written.log, "/"+name+`"`)
	}
	if len(written.events.Items) == 0 || len(written.policies.Items) < len(policies) || !logged {
		t.Fatalf("nothing to search: %d events, %d policies, %d bytes of log", len(written.events.Items), len(written.policies.Items), len(written.log))
	}
	needles.wantNoneIn(t, written)

	// The search finds what is there: every needle is in the Secrets as the API
	// serves them and in their values.
	control := secretsText(t, f, m.ns, secrets) + auth.headers() // as the manager sent them: derived, never stored
	if found := needles.find(control); len(found) != len(needles) {
		t.Errorf("the search is broken: over the Secrets themselves it finds only %v of %d needles", found, len(needles))
	}
}

// authRecorder is a reverse proxy in front of Prometheus that remembers every
// Authorization header it was sent.
type authRecorder struct {
	url  string
	mu   sync.Mutex
	seen map[string]bool
}

func newAuthRecorder(t *testing.T, target string) *authRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &authRecorder{seen: map[string]bool{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen[req.Header.Get("Authorization")] = true
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// headers returns every Authorization header seen, one a line.
func (r *authRecorder) headers() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for h := range r.seen {
		out = append(out, h)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func (r *authRecorder) saw(header string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[header]
}

// startWithSecret creates the Prometheus Secret name with data and a policy,
// uses-<name>, that reads it, with a proxy Placement of its own, <name>-proxy, changed
// by edit when not nil; and waits until that proxy lists c1.
func (m *migration) startWithSecret(t *testing.T, name string, data map[string]string, edit func(*trafficv1alpha1.TrafficMigrationPolicy)) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	m.f.prometheusSecret(t, m.ns, name, data)
	p := m.policy()
	p.Name = "uses-" + name
	p.Spec.PrometheusSecret.Name = name
	p.Spec.ProxyPlacementName = name + "-proxy"
	if edit != nil {
		edit(p)
	}
	m.f.createPolicy(t, p)
	m.f.waitForClusters(t, m.ns, p.Spec.ProxyPlacementName, []string{m.c1}, 30*time.Second)
	return p
}

// leakNeedles are the credentials that a search for leaks looks for, by what each is.
type leakNeedles map[string]string

// find returns what needles haystack holds, sorted; an empty needle is not looked for.
func (n leakNeedles) find(haystack string) (found []string) {
	for name, needle := range n {
		if needle != "" && strings.Contains(haystack, needle) {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found
}

// managerWritten is what the manager writes, where no credential may be: its log, the
// hub's events of both APIs, and the policies.
type managerWritten struct {
	log        string
	events     *eventsv1.EventList
	coreEvents *corev1.EventList
	policies   *trafficv1alpha1.TrafficMigrationPolicyList
}

// readManagerWritten reads what the shared manager has written so far.
func readManagerWritten(t *testing.T, f *fleet) managerWritten {
	t.Helper()
	ctx := t.Context()
	var w managerWritten
	var err error
	if w.log, err = manager.proc.Log(); err != nil {
		t.Fatal(err)
	}
	if w.events, err = f.Kube.EventsV1().Events("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.coreEvents, err = f.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.policies, err = f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	return w
}

// wantNoneIn checks that none of the needles is in what the manager wrote.
func (n leakNeedles) wantNoneIn(t *testing.T, w managerWritten) {
	t.Helper()
	for _, h := range []struct{ name, text string }{
		{"the manager's log", w.log},
		{"the hub's events (events.k8s.io)", jsonString(t, w.events)},
		{"the hub's events (core)", jsonString(t, w.coreEvents)},
		{"the policies", jsonString(t, w.policies)},
	} {
		if found := n.find(h.text); len(found) > 0 {
			t.Errorf("%s (%d bytes) holds %s", h.name, len(h.text), strings.Join(found, ", "))
		}
	}
}

// secretsText is the Secrets of ns named in secrets, as the API serves them, and each
// of their values on a line of its own: where a search for leaks must find every needle.
func secretsText(t *testing.T, f *fleet, ns string, secrets map[string]map[string]string) string {
	t.Helper()
	var text strings.Builder
	for name := range secrets {
		s, err := f.Kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(jsonString(t, s))
		for _, v := range s.Data {
			text.Write(v)
			text.WriteString("\n")
		}
	}
	return text.String()
}

// jsonString is v in JSON.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
