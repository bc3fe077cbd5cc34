// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

const (
	testClientSecret = "cl1ent-s3cret-value"
	testHeaderValue  = "h3ader-api-key-value"
	testOAuth2Token  = "0auth2-issued-token"
)

// newMTLSPrometheus is a Prometheus behind TLS that requires a client certificate
// signed by ca, and answers a scalar.
func newMTLSPrometheus(t *testing.T, ca *pki.CA) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(scalar("0.01"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = ca.MTLSServerConfigForTest(t, "127.0.0.1")
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestRunClientCertificate(t *testing.T) {
	ca := pki.NewTestCA(t, "auth-test-ca")
	prom := newMTLSPrometheus(t, ca)
	client := ca.IssueForTest(t, "traffic-migration")
	clientCert, clientKey := client.CertPEM, client.KeyPEM
	otherCA := pki.NewTestCA(t, "auth-test-ca")
	other := otherCA.IssueForTest(t, "traffic-migration")
	otherCert, otherKey := other.CertPEM, other.KeyPEM

	refused := "if it requires a client certificate, set tls.crt and tls.key in the Prometheus Secret"
	tests := map[string]struct {
		secret  []string
		want    v1alpha1.EvaluationResult
		message string
	}{
		"the CA's client certificate": {secret: []string{KeyClientCert, string(clientCert), KeyClientKey, string(clientKey)}, want: v1alpha1.EvaluationPass, message: "meets"},
		"no client certificate":       {want: v1alpha1.EvaluationError, message: refused},
		"another CA's certificate":    {secret: []string{KeyClientCert, string(otherCert), KeyClientKey, string(otherKey)}, want: v1alpha1.EvaluationError, message: refused},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q := querierFor(t, 5*time.Second, append([]string{KeyURL, prom.URL, KeyCA, string(ca.CertPEM)}, tc.secret...)...)
			got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
			t.Logf("%s %s: %s", got.Result, got.Reason, got.Message)
			if got.Result != tc.want || !strings.Contains(got.Message, tc.message) {
				t.Errorf("want %s with a message containing %q, got %s %s: %s", tc.want, tc.message, got.Result, got.Reason, got.Message)
			}
			if strings.Contains(got.Message, "PRIVATE KEY") {
				t.Errorf("the message shows the key: %s", got.Message)
			}
		})
	}
}

// tokenEndpoint is an OAuth 2.0 token endpoint of the client credentials grant for
// one client, issuing testOAuth2Token.
type tokenEndpoint struct {
	t      *testing.T
	issued atomic.Int64
	scopes atomic.Value
}

func (e *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.Form.Get("grant_type") != "client_credentials" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"unsupported_grant_type"}`)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	if id != "traffic-migration" || secret != testClientSecret {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		// An endpoint that echoes what it got: none of it may reach a status.
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s"}`, secret)
		return
	}
	e.scopes.Store(r.Form.Get("scope"))
	e.issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": testOAuth2Token, "token_type": "Bearer", "expires_in": 3600})
}

func TestRunOAuth2(t *testing.T) {
	endpoint := &tokenEndpoint{t: t}
	tokens := httptest.NewServer(endpoint)
	t.Cleanup(tokens.Close)
	prom := newFakePrometheus(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testOAuth2Token || r.Header.Get("X-Api-Key") != testHeaderValue {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		scalar("0.01")(w, r)
	})
	secret := func(clientSecret string) []string {
		return []string{KeyURL, prom.URL, KeyOAuth2ClientID, "traffic-migration", KeyOAuth2ClientSecret, clientSecret,
			KeyOAuth2TokenURL, tokens.URL + "/token", KeyOAuth2Scopes, "read, query", KeyHeaderPrefix + "x-api-key", testHeaderValue}
	}

	q := querierFor(t, 5*time.Second, secret(testClientSecret)...)
	for range 2 {
		got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
		sameCheck(t, got, Check{Result: v1alpha1.EvaluationPass, Reason: v1alpha1.ReasonQuerySucceeded, Value: got.Value, Query: got.Query})
	}
	if n := endpoint.issued.Load(); n != 1 {
		t.Errorf("want one token issued for two queries, got %d", n)
	}
	if s, _ := endpoint.scopes.Load().(string); s != "read query" {
		t.Errorf("want the scopes \"read query\", got %q", s)
	}

	q = querierFor(t, 5*time.Second, secret("wrong-"+testClientSecret)...)
	got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
	t.Logf("%s %s: %s", got.Result, got.Reason, got.Message)
	if got.Result != v1alpha1.EvaluationError || got.Reason != v1alpha1.ReasonUnauthorized || !strings.Contains(got.Message, "OAuth2 token endpoint refused a token: HTTP 401 Unauthorized (invalid_client)") {
		t.Errorf("want the token endpoint's refusal, got %s %s: %s", got.Result, got.Reason, got.Message)
	}
	for _, s := range []string{testClientSecret, "bad secret", testHeaderValue} {
		if strings.Contains(got.Message, s) {
			t.Errorf("the message holds %q: %s", s, got.Message)
		}
	}
}

func TestRunOAuth2EndpointDown(t *testing.T) {
	tokens := httptest.NewServer(http.NotFoundHandler())
	tokenURL := tokens.URL + "/token?secret=in-the-url"
	tokens.Close()
	prom := newFakePrometheus(t, false, scalar("0.01"))
	q := querierFor(t, 5*time.Second, KeyURL, prom.URL, KeyOAuth2ClientID, "traffic-migration", KeyOAuth2ClientSecret, testClientSecret, KeyOAuth2TokenURL, tokenURL)
	got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
	t.Logf("%s %s: %s", got.Result, got.Reason, got.Message)
	if got.Reason != v1alpha1.ReasonUnreachable || !strings.Contains(got.Message, "cannot get a token from the OAuth2 token endpoint") || strings.Contains(got.Message, "in-the-url") {
		t.Errorf("want Unreachable naming the token endpoint without its URL, got %s %s: %s", got.Result, got.Reason, got.Message)
	}
	if len(prom.seen()) != 0 {
		t.Errorf("the query reached Prometheus without a token")
	}
}

func TestOAuth2TokenURLUnderTheAllowlist(t *testing.T) {
	cfg := configFor(t, KeyURL, "https://prometheus.example", KeyOAuth2ClientID, "id", KeyOAuth2ClientSecret, testClientSecret, KeyOAuth2TokenURL, "https://login.example/token")
	cfg.Allowlist = mustAllowlist(t, "prometheus.example")
	_, err := NewClient(cfg)
	var nerr *NotAllowedError
	if !errors.As(err, &nerr) {
		t.Fatalf("want a *NotAllowedError for the token URL, got %v", err)
	}
	cfg.Allowlist = mustAllowlist(t, "prometheus.example", "login.example")
	if _, err := NewClient(cfg); err != nil {
		t.Fatalf("want the client once the token endpoint is allowed, got %v", err)
	}
}

func TestConfigFromSecretAuthKeys(t *testing.T) {
	ca := pki.NewTestCA(t, "auth-test-ca")
	client := ca.IssueForTest(t, "client")
	cert, key := client.CertPEM, client.KeyPEM
	otherKey := ca.IssueForTest(t, "other").KeyPEM
	url := []string{KeyURL, "https://p.example"}
	oauth := []string{KeyOAuth2ClientID, "id", KeyOAuth2ClientSecret, testClientSecret, KeyOAuth2TokenURL, "https://login.example/token"}
	tests := map[string]struct {
		kv      []string
		wantErr string
	}{
		"client certificate":           {kv: []string{KeyClientCert, string(cert), KeyClientKey, string(key)}},
		"certificate without key":      {kv: []string{KeyClientCert, string(cert)}, wantErr: `Secret key "tls.key": tls.crt is set but tls.key is empty`},
		"key without certificate":      {kv: []string{KeyClientKey, string(key)}, wantErr: `Secret key "tls.crt": tls.key is set but tls.crt is empty`},
		"key of another certificate":   {kv: []string{KeyClientCert, string(cert), KeyClientKey, string(otherKey)}, wantErr: `Secret key "tls.key": tls.crt and tls.key are not a usable pair`},
		"key in tls.crt":               {kv: []string{KeyClientCert, string(key), KeyClientKey, string(key)}, wantErr: `Secret key "tls.crt": does not start with a PEM CERTIFICATE block`},
		"oauth2":                       {kv: oauth},
		"oauth2 without secret":        {kv: oauth[:2], wantErr: `Secret key "oauth2ClientSecret": missing or empty`},
		"oauth2 token URL not a URL":   {kv: append(oauth[:4:4], KeyOAuth2TokenURL, "login.example/token"), wantErr: `Secret key "oauth2TokenURL": not an absolute URL`},
		"oauth2 and token":             {kv: append(append([]string{}, oauth...), KeyToken, testToken), wantErr: `Secret key "oauth2ClientID": OAuth2 and token or username/password are set`},
		"scopes alone":                 {kv: []string{KeyOAuth2Scopes, "read"}, wantErr: `Secret key "oauth2Scopes": set without`},
		"misspelled oauth2 key":        {kv: []string{"oauth2ClientId", "id"}, wantErr: `did you mean "oauth2ClientID"`},
		"header":                       {kv: []string{KeyHeaderPrefix + "X-Api-Key", testHeaderValue}},
		"Authorization header":         {kv: []string{KeyHeaderPrefix + "authorization", testHeaderValue}, wantErr: `the header Authorization may not be set`},
		"tenant header":                {kv: []string{KeyHeaderPrefix + "X-Scope-OrgID", "t"}, wantErr: `set the tenant with the "X-Scope-OrgID" key`},
		"header name with a space":     {kv: []string{KeyHeaderPrefix + "X Key", "v"}, wantErr: `is not a valid HTTP header name`},
		"misspelled header prefix":     {kv: []string{"Header.X-Api-Key", "v"}, wantErr: `did you mean "header.X-Api-Key"`},
		"header value with line break": {kv: []string{KeyHeaderPrefix + "X-Api-Key", "a\nb"}, wantErr: `the value contains a control character`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := ConfigFromSecret(secretWith(append(append([]string{}, url...), tc.kv...)...))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			for _, s := range []string{testClientSecret, testHeaderValue, testToken, "PRIVATE KEY", strings.Split(string(key), "\n")[1]} {
				if err != nil && strings.Contains(err.Error(), s) {
					t.Errorf("the error holds %q: %v", s, err)
				}
				for _, verb := range []string{"%v", "%+v", "%#v"} {
					if out := fmt.Sprintf(verb, cfg); strings.Contains(out, s) {
						t.Errorf("fmt %s of the Config leaks %q: %s", verb, s, out)
					}
				}
			}
		})
	}
	cfg := configFor(t, append(append(append([]string{}, url...), oauth...), KeyClientCert, string(cert), KeyClientKey, string(key), KeyHeaderPrefix+"x-api-key", testHeaderValue)...)
	if want := "auth: oauth2 client credentials, ca.crt: system roots, client certificate: true, headers: [X-Api-Key]"; !strings.Contains(cfg.String(), want) {
		t.Errorf("want String to hold %q, got %s", want, cfg)
	}
}
