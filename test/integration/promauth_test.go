// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

// TestPrometheusAuthSchemes: the bed's real Prometheus behind a TLS server that
// requires a client certificate, and behind a proxy that admits only the tokens a
// real OAuth2 token endpoint issued for the client credentials grant, with a custom
// header and the tenant header. A policy using each Secret, and the check command on it, query through
// them; the same fronts refuse a Secret without the certificate and one with a wrong
// client secret, and the status says what to fix. No client key, client secret,
// issued token or header value appears in the manager's log at -v=10, in an Event or
// in a policy.
// Rules: none; docs/prometheus-auth.md (the Prometheus Secret's keys).
func TestPrometheusAuthSchemes(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "promauth")
	f := m.f

	ca := pki.NewTestCA(t, "promauth CA "+rand.String(8))
	client := ca.IssueForTest(t, "traffic-migration")
	clientCert, clientKey := client.CertPEM, client.KeyPEM
	mtls := newMTLSFront(t, ca)

	clientSecret := "cs" + rand.String(32)
	headerValue := "hv" + rand.String(32)
	tokens := newTokenEndpoint(t, "traffic-migration", clientSecret)
	oauth := newPromFront(t, false, func(w http.ResponseWriter, r *http.Request) bool {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && tokens.issued(bearer) && r.Header.Get("X-Api-Key") == headerValue && r.Header.Get("X-Scope-OrgID") == "team-a" {
			return true
		}
		w.WriteHeader(http.StatusUnauthorized)
		return false
	})

	// Amazon Managed Service for Prometheus's way: a front that admits only requests
	// with a valid SigV4 signature of its access key.
	sigv4Secret := "sk" + rand.String(36)
	sigv4 := newPromFront(t, false, sigv4Only("AKIDTRAFFICMIGRATION", sigv4Secret, "eu-west-1"))

	secrets := map[string]map[string]string{
		"prometheus-sigv4": {
			promcheck.KeyURL: sigv4.URL, promcheck.KeySigV4Region: "eu-west-1",
			promcheck.KeySigV4AccessKey: "AKIDTRAFFICMIGRATION", promcheck.KeySigV4SecretKey: sigv4Secret,
		},
		"prometheus-sigv4-wrong-key": {
			promcheck.KeyURL: sigv4.URL, promcheck.KeySigV4Region: "eu-west-1",
			promcheck.KeySigV4AccessKey: "AKIDTRAFFICMIGRATION", promcheck.KeySigV4SecretKey: "wrong" + sigv4Secret,
		},
		"prometheus-mtls": {
			promcheck.KeyURL: mtls.URL, promcheck.KeyCA: string(ca.CertPEM),
			promcheck.KeyClientCert: string(clientCert), promcheck.KeyClientKey: string(clientKey),
		},
		"prometheus-oauth2": {
			promcheck.KeyURL: oauth.URL, promcheck.KeyOAuth2ClientID: "traffic-migration", promcheck.KeyOAuth2ClientSecret: clientSecret,
			promcheck.KeyOAuth2TokenURL: tokens.URL + "/oauth2/token", promcheck.KeyOAuth2Scopes: "metrics:read",
			promcheck.KeyHeaderPrefix + "X-Api-Key": headerValue, promcheck.KeyTenant: "team-a",
		},
		"prometheus-no-cert": {promcheck.KeyURL: mtls.URL, promcheck.KeyCA: string(ca.CertPEM)},
		"prometheus-wrong-secret": {
			promcheck.KeyURL: oauth.URL, promcheck.KeyOAuth2ClientID: "traffic-migration", promcheck.KeyOAuth2ClientSecret: "wrong-" + clientSecret,
			promcheck.KeyOAuth2TokenURL: tokens.URL + "/oauth2/token", promcheck.KeyHeaderPrefix + "X-Api-Key": headerValue,
		},
	}
	for name, data := range secrets {
		m.startWithSecret(t, name, data, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
			p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute} // c1 drains throughout
		})
	}

	m.moveToC2(t)
	// The two good Secrets: the queries are answered (the check fails or passes on
	// the share, never errs) and PrometheusReachable is True.
	for _, name := range []string{"prometheus-mtls", "prometheus-oauth2", "prometheus-sigv4"} {
		f.waitForPolicy(t, m.ns, "uses-"+name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastEvaluationTime != nil &&
				r.LastResult != trafficv1alpha1.EvaluationError &&
				statusOf(condition(p, trafficv1alpha1.ConditionPrometheusReachable)) == metav1.ConditionTrue
		})
	}
	// The bad ones: fail closed, saying what to fix.
	for name, want := range map[string]struct{ reason, message string }{
		"prometheus-no-cert":         {trafficv1alpha1.ReasonUnreachable, "set tls.crt and tls.key in the Prometheus Secret"},
		"prometheus-wrong-secret":    {trafficv1alpha1.ReasonUnauthorized, "the OAuth2 token endpoint refused a token: HTTP 401 Unauthorized (invalid_client)"},
		"prometheus-sigv4-wrong-key": {trafficv1alpha1.ReasonUnauthorized, "HTTP 403 Forbidden); give the identity of the token, of username or of the SigV4 access key"},
	} {
		f.waitForPolicy(t, m.ns, "uses-"+name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.LastResult == trafficv1alpha1.EvaluationError && statusOf(c) == metav1.ConditionFalse &&
				c.Reason == want.reason && strings.Contains(c.Message, want.message)
		})
	}
	if mtls.handshakes.Load() == 0 || mtls.forwarded.Load() == 0 {
		t.Errorf("the mTLS front forwarded %d queries after %d verified handshakes", mtls.forwarded.Load(), mtls.handshakes.Load())
	}
	// The wrong client secret gets no token, so its queries never reach the front.
	if oauth.forwarded.Load() == 0 || oauth.forwarded.Load() != oauth.requests.Load() {
		t.Errorf("the OAuth2 front let %d of %d queries through; want all, and some", oauth.forwarded.Load(), oauth.requests.Load())
	}

	if sigv4.forwarded.Load() == 0 || sigv4.forwarded.Load() == sigv4.requests.Load() {
		t.Errorf("the SigV4 front let %d of %d queries through; want the good key's, and not the wrong one's", sigv4.forwarded.Load(), sigv4.requests.Load())
	}

	// The check command reads the same Secrets and queries through them.
	for _, name := range []string{"prometheus-mtls", "prometheus-oauth2", "prometheus-sigv4"} {
		r := runCheckJSON(t, bed.Hub.KubeconfigPath, "check", "uses-"+name, "-n", m.ns)
		if c1 := reportRow(t, r, m.c1); c1.Result == trafficv1alpha1.EvaluationError {
			t.Errorf("check through %s: cluster1's query failed: %+v", name, c1)
		}
	}

	// No credential anywhere the manager writes.
	keyBlock, _ := pem.Decode(clientKey)
	keyBody := base64.StdEncoding.EncodeToString(keyBlock.Bytes)
	needles := leakNeedles{
		"the client key (PEM body)":         keyBody[10:60],
		"the client key in Secret data":     base64.StdEncoding.EncodeToString(clientKey)[80:140],
		"the client secret":                 clientSecret,
		"the client secret in base64":       base64.StdEncoding.EncodeToString([]byte(clientSecret)),
		"the header value":                  headerValue,
		"the header value in base64":        base64.StdEncoding.EncodeToString([]byte(headerValue)),
		"a token the token endpoint issued": tokens.first(),
		"the client credentials (basic)":    base64.StdEncoding.EncodeToString([]byte("traffic-migration:" + url.QueryEscape(clientSecret))),
		"the SigV4 secret key":              sigv4Secret,
		"the SigV4 secret key in base64":    base64.StdEncoding.EncodeToString([]byte(sigv4Secret)),
	}
	written := readManagerWritten(t, f)
	if !strings.Contains(written.log, "/uses-prometheus-oauth2\"") {
		t.Fatalf("nothing to search: the manager's log (%d bytes) does not name the policies", len(written.log))
	}
	needles.wantNoneIn(t, written)
	// The search finds what is there.
	control := secretsText(t, f, m.ns, secrets)
	control += tokens.first() + "\n" + tokens.basicSeen()
	if found := needles.find(control); len(found) != len(needles) {
		t.Errorf("the search is broken: over the Secrets and what the endpoints got it finds only %v of %d needles", found, len(needles))
	}
}

// mtlsFront is a TLS server in front of the bed's Prometheus that requires a client
// certificate the CA signed, as a Thanos or a kube-rbac-proxy set up for mTLS does.
type mtlsFront struct {
	*httptest.Server
	handshakes, forwarded atomic.Int64
}

func newMTLSFront(t *testing.T, ca *pki.CA) *mtlsFront {
	t.Helper()
	target, err := url.Parse(bed.Prometheus.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := &mtlsFront{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	front.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "no verified client certificate", http.StatusForbidden)
			return
		}
		front.forwarded.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	front.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are on purpose
	front.TLS = ca.MTLSServerConfigForTest(t, "127.0.0.1")
	front.TLS.VerifyConnection = func(cs tls.ConnectionState) error {
		front.handshakes.Add(1)
		return nil
	}
	front.StartTLS()
	t.Cleanup(func() {
		front.CloseClientConnections()
		front.Close()
	})
	return front
}

// tokenEndpoint is an OAuth 2.0 token endpoint (RFC 6749 section 4.4) for one
// client: it issues a fresh random token to each valid request, for an hour.
type tokenEndpoint struct {
	*httptest.Server
	firstTok atomic.Value
	basic    atomic.Value
	issuedM  map[string]bool
	mu       chan struct{}
}

func newTokenEndpoint(t *testing.T, clientID, clientSecret string) *tokenEndpoint {
	t.Helper()
	e := &tokenEndpoint{issuedM: map[string]bool{}, mu: make(chan struct{}, 1)}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth2/token" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		} else {
			// RFC 6749 section 2.3.1: the credentials are form-encoded in the header.
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		}
		if id != clientID || secret != clientSecret {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "client authentication failed"})
			return
		}
		if basic {
			e.basic.Store(r.Header.Get("Authorization"))
		}
		token := "at" + rand.String(40)
		e.mu <- struct{}{}
		e.issuedM[token] = true
		<-e.mu
		e.firstTok.CompareAndSwap(nil, token)
		writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": r.PostForm.Get("scope")})
	}))
	t.Cleanup(e.Close)
	return e
}

// issued says whether the endpoint issued token.
func (e *tokenEndpoint) issued(token string) bool {
	e.mu <- struct{}{}
	defer func() { <-e.mu }()
	return e.issuedM[token]
}

// first is the first token issued, "" when none was.
func (e *tokenEndpoint) first() string {
	s, _ := e.firstTok.Load().(string)
	return s
}

// basicSeen is the Authorization header of the last request whose client
// credentials were right: a policy whose Secret holds a wrong client secret asks too,
// and its header is not the needle the test searches for.
func (e *tokenEndpoint) basicSeen() string {
	s, _ := e.basic.Load().(string)
	return strings.TrimPrefix(s, "Basic ")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprintf("encode: %v", err))
	}
}

// sigv4Only admits the requests that carry a valid AWS Signature Version 4 of service
// aps in region by accessKey, as Amazon Managed Service for Prometheus checks them, and
// answers the others 403: the request, restricted to the headers it says it signed, is
// signed again at its X-Amz-Date with the AWS SDK's signer and secretKey, and the two
// signatures must be the same; the date must be within 5 minutes.
func sigv4Only(accessKey, secretKey, region string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if sigv4Valid(r, accessKey, secretKey, region) {
			return true
		}
		w.WriteHeader(http.StatusForbidden)
		return false
	}
}

func sigv4Valid(r *http.Request, accessKey, secretKey, region string) bool {
	auth := r.Header.Get("Authorization")
	fields, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return false
	}
	parts := map[string]string{}
	for _, f := range strings.Split(fields, ", ") {
		if k, v, ok := strings.Cut(f, "="); ok {
			parts[k] = v
		}
	}
	if !strings.HasPrefix(parts["Credential"], accessKey+"/") || !strings.HasSuffix(parts["Credential"], "/"+region+"/aps/aws4_request") {
		return false
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || time.Since(at).Abs() > 5*time.Minute {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	again, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, h := range strings.Split(parts["SignedHeaders"], ";") {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, again, hex.EncodeToString(sum[:]), "aps", region, at); err != nil {
		return false
	}
	return again.Header.Get("Authorization") == auth
}
