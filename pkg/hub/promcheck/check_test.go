// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed/pki"
)

// evalTime is the evaluation time of the tests; Prometheus gets it as "1700000000.5".
var evalTime = time.Unix(1700000000, 500000000)

const testQuery = `sum(rate(requests_total{cluster="{{ .Cluster.Name }}"}[5m]))`

// querySpec is a spec with metricsQuery testQuery and the given expectation.
func querySpec(expect string) *v1alpha1.TrafficMigrationPolicySpec {
	return &v1alpha1.TrafficMigrationPolicySpec{MetricsQuery: testQuery, ExpectedMetricsResult: expect}
}

// querierFor builds the Querier of a Secret with the given keys.
func querierFor(t *testing.T, timeout time.Duration, kv ...string) Querier {
	t.Helper()
	cfg, err := ConfigFromSecret(secretWith(kv...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = timeout
	q, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// sameCheck compares got with want; want.Message is a part the message must hold.
func sameCheck(t *testing.T, got, want Check) {
	t.Helper()
	t.Logf("%s %s %q: %s", got.Result, got.Reason, got.Value, got.Message)
	if got.Result != want.Result || got.Reason != want.Reason || got.Value != want.Value || got.Query != want.Query {
		t.Errorf("want result %s, reason %s, value %q, query %q;\ngot  result %s, reason %s, value %q, query %q (message %q)",
			want.Result, want.Reason, want.Value, want.Query, got.Result, got.Reason, got.Value, got.Query, got.Message)
	}
	if !strings.Contains(got.Message, want.Message) {
		t.Errorf("want a message containing %q, got %q", want.Message, got.Message)
	}
}

func TestRun(t *testing.T) {
	const resolved = `sum(rate(requests_total{cluster="cluster1"}[5m]))`
	labelSets := []string{`{"cluster":"d"}`, `{"cluster":"a","zone":"x"}`, `{"cluster":"c"}`, `{"cluster":"b"}`}
	// answered is the check of a query Prometheus answered with value, which has result.
	answered := func(result v1alpha1.EvaluationResult, value, message string) Check {
		return Check{Result: result, Value: value, Query: resolved, Reason: v1alpha1.ReasonQuerySucceeded, Message: message}
	}
	// failed is the check of a query that gave no result, for reason.
	failed := func(reason, message string) Check {
		return Check{Result: v1alpha1.EvaluationError, Query: resolved, Reason: reason, Message: message}
	}

	tests := map[string]struct {
		answer http.HandlerFunc
		spec   *v1alpha1.TrafficMigrationPolicySpec
		// want.Message is a part the message must hold.
		want Check
		// noRequest says that Prometheus must not be asked at all.
		noRequest bool
	}{
		"scalar that passes": {
			answer: scalar("0.0312"),
			want:   answered(v1alpha1.EvaluationPass, "0.0312", "the query's value meets <= 0.05"),
		},
		"scalar that fails": {
			answer: scalar("0.2"),
			want:   answered(v1alpha1.EvaluationFail, "0.2", "does not meet <= 0.05"),
		},
		"scalar that is exactly the threshold": {
			answer: scalar("0.05"),
			want:   answered(v1alpha1.EvaluationPass, "0.05", ""),
		},
		"infinite scalar": {
			answer: scalar("+Inf"),
			want:   answered(v1alpha1.EvaluationFail, "+Inf", ""),
		},
		"single series that passes": {
			answer: vector("0.01", `{"cluster":"cluster1"}`),
			want:   answered(v1alpha1.EvaluationPass, "0.01", ""),
		},
		"single series that fails a >= expectation": {
			answer: vector("3", `{}`),
			spec:   querySpec(">= 10"),
			want:   answered(v1alpha1.EvaluationFail, "3", "does not meet >= 10"),
		},
		"empty vector": {
			answer: vector("0"),
			want: Check{Result: v1alpha1.EvaluationNoData, Query: resolved,
				Reason: v1alpha1.ReasonNoData, Message: "returned no series"},
		},
		"NaN series": {
			answer: vector("NaN", `{}`),
			want: Check{Result: v1alpha1.EvaluationNoData, Value: "NaN", Query: resolved,
				Reason: v1alpha1.ReasonNoData, Message: "returned NaN"},
		},
		"NaN scalar": {
			answer: scalar("NaN"),
			want: Check{Result: v1alpha1.EvaluationNoData, Value: "NaN", Query: resolved,
				Reason: v1alpha1.ReasonNoData, Message: "returned NaN"},
		},
		"several series": {
			answer: vector("0.01", labelSets...),
			want: failed(v1alpha1.ReasonUnexpectedResult,
				`the query returned 4 series; the query must return a scalar or a single series: aggregate it, for example with sum(...)`),
		},
		"matrix": {
			answer: success("matrix", `[{"metric":{"cluster":"a"},"values":[[1700000000,"1"],[1700000030,"2"]]}]`),
			want:   failed(v1alpha1.ReasonUnexpectedResult, "the query returned a range vector (matrix) of 1 series"),
		},
		"string": {
			answer: success("string", `[1700000000,"hello"]`),
			want: failed(v1alpha1.ReasonUnexpectedResult,
				"the query returned a string; the query must return a scalar or a single series"),
		},
		"vector with an unreadable value": {
			answer: vector("many", `{}`),
			want: failed(v1alpha1.ReasonUnexpectedResult,
				`the query's vector result could not be read: strconv.ParseFloat: parsing "many": invalid syntax`),
		},
		"bad PromQL": {
			answer: failure(http.StatusBadRequest, "bad_data", `invalid parameter "query": 1:10: parse error: unexpected "}"`),
			want: failed(v1alpha1.ReasonQueryFailed,
				`Prometheus rejected the query: invalid parameter "query": 1:10: parse error: unexpected "}"; fix the PromQL`),
		},
		"execution error": {
			answer: failure(http.StatusUnprocessableEntity, "execution", "many-to-many matching not allowed"),
			want: failed(v1alpha1.ReasonQueryFailed,
				"Prometheus could not run the query: many-to-many matching not allowed"),
		},
		"timeout in Prometheus": {
			answer: failure(http.StatusServiceUnavailable, "timeout", "query timed out in expression evaluation"),
			want: failed(v1alpha1.ReasonTimeout,
				"Prometheus gave up on the query (timeout: query timed out in expression evaluation)"),
		},
		"401": {
			answer: reply(http.StatusUnauthorized, "Unauthorized"),
			want: failed(v1alpha1.ReasonUnauthorized,
				"Prometheus rejected the credentials (HTTP 401 Unauthorized); check token, or username and password"),
		},
		"403": {
			answer: reply(http.StatusForbidden, "Forbidden"),
			want:   failed(v1alpha1.ReasonUnauthorized, "Prometheus refused the query (HTTP 403 Forbidden)"),
		},
		"404": {
			answer: reply(http.StatusNotFound, "<html>not here</html>"),
			want: failed(v1alpha1.ReasonUnreachable,
				"no Prometheus query API at url (HTTP 404 Not Found); check the url's path"),
		},
		"502 from a proxy": {
			answer: reply(http.StatusBadGateway, "<html>bad gateway</html>"),
			want:   failed(v1alpha1.ReasonUnreachable, "failed (HTTP 502 Bad Gateway)"),
		},
		"redirect is not followed": {
			answer: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/login", http.StatusFound) },
			want: failed(v1alpha1.ReasonUnreachable,
				"answered with a redirect (HTTP 302 Found), which is not followed"),
		},
		"HTML page instead of the API": {
			answer: reply(http.StatusOK, "<html>login</html>"),
			want: failed(v1alpha1.ReasonUnexpectedResult,
				"the answer is not a Prometheus API response; check that url points at the Prometheus HTTP API"),
		},
		"template failure": {
			answer: scalar("0"),
			spec:   &v1alpha1.TrafficMigrationPolicySpec{MetricsQuery: `up{c="{{ index .Cluster.Labels "nope" }}"}`, ExpectedMetricsResult: "0"},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonTemplateFailed,
				Message: `the query could not be resolved for cluster "cluster1": template: metricsQuery:1:9: executing "metricsQuery" at <index .Cluster.Labels "nope">: error calling index: no key "nope"`},
			noRequest: true,
		},
		"trafficShare": {
			answer: scalar("4.5"),
			spec: &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
				Metric: "istio_requests_total", ClusterLabel: "cluster", ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`, Window: "5m", MaxPercent: 5,
			}},
			want: Check{Result: v1alpha1.EvaluationPass, Value: "4.5", Reason: v1alpha1.ReasonQuerySucceeded,
				Query:   `100 * sum(rate(istio_requests_total{cluster="us-east-1"}[5m])) / sum(rate(istio_requests_total[5m]))`,
				Message: "the query's value meets <= 5"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			prom := newFakePrometheus(t, false, tc.answer)
			q := querierFor(t, 0, KeyURL, prom.URL)
			spec := tc.spec
			if spec == nil {
				spec = querySpec("<= 0.05")
			}
			got := Run(context.Background(), q, spec, testData(), evalTime)
			sameCheck(t, got, tc.want)

			seen := prom.seen()
			if tc.noRequest {
				if len(seen) != 0 {
					t.Errorf("want no request to Prometheus, got %d", len(seen))
				}
				return
			}
			if len(seen) != 1 {
				t.Fatalf("want one request to Prometheus, got %d", len(seen))
			}
			if seen[0].query != got.Query || seen[0].time != "1700000000.5" {
				t.Errorf("Prometheus got query %q at %q, want %q at 1700000000.5", seen[0].query, seen[0].time, got.Query)
			}
			if again := Run(context.Background(), q, spec, testData(), evalTime.Add(time.Minute)); again != got {
				t.Errorf("a second evaluation differs:\n%+v\n%+v", got, again)
			}
		})
	}
}

func TestRunAuthentication(t *testing.T) {
	tests := map[string]struct {
		secret []string
		// require are the headers the server demands; it answers deny otherwise.
		require http.Header
		deny    int
		// absent are headers that must not be sent.
		absent []string
		want   Check
	}{
		"bearer token": {
			secret:  []string{KeyToken, testToken},
			require: http.Header{"Authorization": {"Bearer " + testToken}},
			want:    Check{Result: v1alpha1.EvaluationPass, Reason: v1alpha1.ReasonQuerySucceeded},
		},
		"wrong bearer token": {
			secret:  []string{KeyToken, "other-" + testToken},
			require: http.Header{"Authorization": {"Bearer " + testToken}},
			deny:    http.StatusUnauthorized,
			want:    Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnauthorized, Message: "HTTP 401 Unauthorized"},
		},
		"basic auth": {
			secret:  []string{KeyUsername, "admin", KeyPassword, testPassword},
			require: http.Header{"Authorization": {"Basic YWRtaW46cGE1NXcwcmQtdmFsdWU="}},
			want:    Check{Result: v1alpha1.EvaluationPass, Reason: v1alpha1.ReasonQuerySucceeded},
		},
		"tenant and token": {
			secret:  []string{KeyToken, testToken, KeyTenant, "team-a"},
			require: http.Header{"Authorization": {"Bearer " + testToken}, "X-Scope-Orgid": {"team-a"}},
			want:    Check{Result: v1alpha1.EvaluationPass, Reason: v1alpha1.ReasonQuerySucceeded},
		},
		"missing tenant": {
			require: http.Header{"X-Scope-Orgid": {"team-a"}},
			deny:    http.StatusUnauthorized,
			absent:  []string{"Authorization", "X-Scope-Orgid"},
			want:    Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnauthorized, Message: "X-Scope-OrgID"},
		},
		"token without the right to query": {
			secret:  []string{KeyToken, testToken},
			require: http.Header{"Authorization": {"Bearer admin-token"}},
			deny:    http.StatusForbidden,
			want:    Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnauthorized, Message: "HTTP 403 Forbidden"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			answer := func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.require {
					if r.Header.Get(k) != v[0] {
						// Echo what was sent, as some servers do: it must not reach the message.
						http.Error(w, fmt.Sprintf("bad %s %q", k, r.Header.Get(k)), tc.deny)
						return
					}
				}
				scalar("0.01")(w, r)
			}
			prom := newFakePrometheus(t, false, answer)
			q := querierFor(t, 0, append([]string{KeyURL, prom.URL}, tc.secret...)...)
			got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
			tc.want.Query = got.Query
			if got.Result == v1alpha1.EvaluationPass {
				tc.want.Value = "0.01"
			}
			sameCheck(t, got, tc.want)
			for _, s := range secretParts(nil) {
				if strings.Contains(got.Message, s) {
					t.Errorf("message %q leaks %q", got.Message, s)
				}
			}
			for _, req := range prom.seen() {
				for _, h := range tc.absent {
					if v := req.header.Values(h); len(v) > 0 {
						t.Errorf("header %s sent: %q", h, v)
					}
				}
			}
			if out := fmt.Sprintf("%v %+v %s %#v", q, q, q, q); strings.Contains(out, testToken) || strings.Contains(out, testPassword) {
				t.Errorf("printing the querier leaks a credential: %s", out)
			}
		})
	}
}

func TestRunTLS(t *testing.T) {
	prom := newFakePrometheus(t, true, scalar("0.01"))
	plain := newFakePrometheus(t, false, scalar("0.01"))
	rightCA := string(certPEM(prom.Certificate()))
	wrongCA := pki.NewTestCA(t, "wrong-ca").CertPEM
	u, err := url.Parse(prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	byName := "https://localhost:" + u.Port()

	tests := map[string]struct {
		secret []string
		want   Check
	}{
		"right CA": {
			secret: []string{KeyURL, prom.URL, KeyCA, rightCA},
			want:   Check{Result: v1alpha1.EvaluationPass, Value: "0.01", Reason: v1alpha1.ReasonQuerySucceeded},
		},
		"wrong CA": {
			secret: []string{KeyURL, prom.URL, KeyCA, string(wrongCA)},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: "TLS: Prometheus's certificate is signed by an unknown authority; set ca.crt"},
		},
		"system roots": {
			secret: []string{KeyURL, prom.URL},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: "TLS: Prometheus's certificate is signed by an unknown authority"},
		},
		"insecureSkipVerify": {
			secret: []string{KeyURL, prom.URL, KeyInsecureSkipVerify, "true"},
			want:   Check{Result: v1alpha1.EvaluationPass, Value: "0.01", Reason: v1alpha1.ReasonQuerySucceeded},
		},
		"host name not in the certificate": {
			secret: []string{KeyURL, byName, KeyCA, rightCA},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: "TLS: x509: certificate is valid for example.com, *.example.com, not localhost; use a host name in url that the certificate lists"},
		},
		"https to a plain HTTP server": {
			secret: []string{KeyURL, strings.Replace(plain.URL, "http://", "https://", 1)},
			want:   Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q := querierFor(t, 0, tc.secret...)
			got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
			tc.want.Query = got.Query
			sameCheck(t, got, tc.want)
			if got.Query == "" {
				t.Error("want the resolved query also on errors")
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	release := make(chan struct{})
	// Blocks until the client gives up (its connection closes) or the test ends.
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	prom := newFakePrometheus(t, false, slow)
	t.Cleanup(func() { close(release) }) // runs before the server's Close

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := map[string]struct {
		ctx     func(t *testing.T) context.Context
		timeout time.Duration
		want    Check
	}{
		"query timeout": {
			ctx:     func(*testing.T) context.Context { return context.Background() },
			timeout: 100 * time.Millisecond,
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonTimeout,
				Message: "Prometheus did not answer within 100ms"},
		},
		"caller's deadline": {
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			timeout: time.Hour,
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonTimeout,
				Message: "Prometheus did not answer in time"},
		},
		"caller canceled": {
			ctx:     func(*testing.T) context.Context { return canceled },
			timeout: time.Hour,
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonTimeout,
				Message: "the query was canceled"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q := querierFor(t, tc.timeout, KeyURL, prom.URL)
			got := Run(tc.ctx(t), q, querySpec("<= 0.05"), testData(), evalTime)
			tc.want.Query = got.Query
			sameCheck(t, got, tc.want)
		})
	}
}

func TestRunConnectionRefused(t *testing.T) {
	prom := newFakePrometheus(t, false, scalar("0"))
	addr := prom.Listener.Addr().String()
	prom.Close()

	q := querierFor(t, 0, KeyURL, "http://"+addr)
	got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
	sameCheck(t, got, Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
		Query:   `sum(rate(requests_total{cluster="cluster1"}[5m]))`,
		Message: "cannot connect to Prometheus: dial tcp " + addr + ": connection refused; check the url"})
}

// querierFunc is a Querier made of a function.
type querierFunc func(ctx context.Context, query string, ts time.Time) (model.Value, error)

func (f querierFunc) Query(ctx context.Context, query string, ts time.Time) (model.Value, error) {
	return f(ctx, query, ts)
}

// TestEvaluateResults covers results and errors that a real server hardly produces.
func TestRunResults(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 43210}
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 9090}

	tests := map[string]struct {
		value model.Value
		err   error
		spec  *v1alpha1.TrafficMigrationPolicySpec
		want  Check
	}{
		"nil value": {
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnexpectedResult, Message: "returned no result at all"},
		},
		"string from another querier": {
			value: &model.String{Value: "hello"},
			want:  Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnexpectedResult, Message: "the query returned a string"},
		},
		"nil scalar": {
			value: (*model.Scalar)(nil),
			want:  Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnexpectedResult, Message: "returned no result at all"},
		},
		"negative zero scalar": {
			value: &model.Scalar{Value: 0},
			spec:  querySpec("0"),
			want:  Check{Result: v1alpha1.EvaluationPass, Value: "0", Reason: v1alpha1.ReasonQuerySucceeded, Message: "meets <= 0"},
		},
		"unparsable expectation": {
			spec: querySpec("about 5"),
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonInvalidQuery, Message: "expectedMetricsResult"},
		},
		"DNS failure": {
			err: &url.Error{Op: "Post", URL: "http://prometheus.invalid/api/v1/query",
				Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "prometheus.invalid", Err: "no such host", Server: "10.96.0.10:53", IsNotFound: true}}},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: `cannot resolve the host "prometheus.invalid" of url: no such host; check the url`},
		},
		"reset connection, without its local port": {
			err: &url.Error{Op: "Post", URL: "http://10.0.0.2:9090/api/v1/query",
				Err: &net.OpError{Op: "read", Net: "tcp", Source: local, Addr: remote, Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: "cannot connect to Prometheus: read tcp 10.0.0.2:9090: connection reset by peer;"},
		},
		"expired certificate, without the time": {
			err: &url.Error{Op: "Post", URL: "https://p/api/v1/query",
				Err: x509.CertificateInvalidError{Reason: x509.Expired, Detail: "current time 2030-01-01T00:00:00Z is after 2029-01-01T00:00:00Z"}},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable,
				Message: "TLS: Prometheus's certificate, or one that signs it, has expired or is not yet valid"},
		},
		"other transport failure": {
			err:  &url.Error{Op: "Post", URL: "http://p/api/v1/query", Err: io.ErrUnexpectedEOF},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnreachable, Message: "the request to Prometheus failed: unexpected EOF"},
		},
		"unknown error": {
			err:  errors.New("something odd"),
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonQueryFailed, Message: "the query failed: something odd"},
		},
		"long error is truncated": {
			err:  errors.New(strings.Repeat("é", 500)),
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonQueryFailed, Message: "the query failed: " + strings.Repeat("é", 100) + "..."},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec == nil {
				spec = querySpec("<= 0.05")
			}
			q := querierFunc(func(context.Context, string, time.Time) (model.Value, error) { return tc.value, tc.err })
			got := Run(context.Background(), q, spec, testData(), evalTime)
			if tc.want.Reason != v1alpha1.ReasonInvalidQuery {
				tc.want.Query = `sum(rate(requests_total{cluster="cluster1"}[5m]))`
			}
			sameCheck(t, got, tc.want)
			if strings.Contains(got.Message, "43210") || strings.Contains(got.Message, "2030") || len(got.Message) > 400 {
				t.Errorf("message holds a live detail or is too long: %q", got.Message)
			}
		})
	}
}

// TestEvaluateLowTraffic: with trafficShare.minRequestsPerSecond, a share over too
// little traffic has no data, and the reason says the traffic was too low only when the
// total, read once more, is under the minimum.
func TestRunLowTraffic(t *testing.T) {
	const (
		share = `100 * sum(rate(requests_total{cluster="cluster1"}[5m])) / (sum(rate(requests_total[5m])) >= 0.5)`
		total = `sum(rate(requests_total[5m]))`
	)
	spec := &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
		Metric: "requests_total", ClusterLabel: "cluster", Window: "5m", MaxPercent: 5, MinRequestsPerSecond: 0.5,
	}}
	empty := vector("0")
	tests := map[string]struct {
		shareAnswer, totalAnswer http.HandlerFunc
		want                     Check
		// queries are the queries Prometheus must get, in order.
		queries []string
	}{
		"enough traffic": {
			shareAnswer: vector("1.5", `{}`),
			want:        Check{Result: v1alpha1.EvaluationPass, Value: "1.5", Query: share, Reason: v1alpha1.ReasonQuerySucceeded},
			queries:     []string{share},
		},
		"too little traffic": {
			shareAnswer: empty, totalAnswer: vector("0.2", `{}`),
			want: Check{Result: v1alpha1.EvaluationNoData, Query: share, Reason: v1alpha1.ReasonTrafficTooLow,
				Message: "the Gateway's traffic in all is under trafficShare.minRequestsPerSecond (0.5/s): too little to judge a share; noDataPolicy decides"},
			queries: []string{share, total},
		},
		"no traffic at all": {
			shareAnswer: empty, totalAnswer: vector("0", `{}`),
			want:    Check{Result: v1alpha1.EvaluationNoData, Query: share, Reason: v1alpha1.ReasonTrafficTooLow},
			queries: []string{share, total},
		},
		"traffic enough but the cluster's series missing": {
			shareAnswer: empty, totalAnswer: vector("3", `{}`),
			want:    Check{Result: v1alpha1.EvaluationNoData, Query: share, Reason: v1alpha1.ReasonNoData, Message: "returned no series"},
			queries: []string{share, total},
		},
		"the metric missing altogether": {
			shareAnswer: empty, totalAnswer: empty,
			want:    Check{Result: v1alpha1.EvaluationNoData, Query: share, Reason: v1alpha1.ReasonNoData, Message: "returned no series"},
			queries: []string{share, total},
		},
		"the total cannot be read": {
			shareAnswer: empty, totalAnswer: failure(http.StatusServiceUnavailable, "unavailable", "down"),
			want:    Check{Result: v1alpha1.EvaluationNoData, Query: share, Reason: v1alpha1.ReasonNoData, Message: "returned no series"},
			queries: []string{share, total},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			prom := newFakePrometheus(t, false, func(w http.ResponseWriter, r *http.Request) {
				if r.Form.Get("query") == total && tc.totalAnswer != nil {
					tc.totalAnswer(w, r)
					return
				}
				tc.shareAnswer(w, r)
			})
			got := Run(t.Context(), querierFor(t, 0, KeyURL, prom.URL), spec, testData(), evalTime)
			sameCheck(t, got, tc.want)
			var queries []string
			for _, s := range prom.seen() {
				queries = append(queries, s.query)
			}
			if strings.Join(queries, "\n") != strings.Join(tc.queries, "\n") {
				t.Errorf("Prometheus got the queries\n%s\nwant\n%s", strings.Join(queries, "\n"), strings.Join(tc.queries, "\n"))
			}
		})
	}
}
