// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Querier runs an instant query. It is the one call of the Prometheus API that the
// check needs, so tests and callers can stand in for Prometheus with a few lines.
type Querier interface {
	// Query evaluates query at ts (the server's time when ts is zero).
	Query(ctx context.Context, query string, ts time.Time) (model.Value, error)
}

// RangeQuerier runs range queries: the values of a query over a time span, which
// the dashboard charts.
type RangeQuerier interface {
	// QueryRange evaluates query at every step of r.
	QueryRange(ctx context.Context, query string, r promv1.Range) (model.Value, error)
}

// Client runs a policy's queries against its Prometheus: the instant queries of the
// checks and the range queries of the dashboard's charts.
type Client interface {
	Querier
	RangeQuerier
}

// NewClient builds a Client for cfg on the client_golang Prometheus API client.
// Each query is bounded by cfg.Timeout (DefaultQueryTimeout when zero) on top of the
// caller's context, and its answer by cfg.MaxAnswerBytes and cfg.MaxSeries. Redirects
// are not followed, so that the credentials only ever go to cfg.URL. A URL that
// cfg.Allowlist does not allow is refused with a *NotAllowedError.
//
// The Client holds a connection pool: keep one per version of the Secret (Clients
// does) rather than one per query.
func NewClient(cfg Config) (Client, error) {
	return newPromQuerier(cfg)
}

// newPromQuerier builds the client of NewClient.
func newPromQuerier(cfg Config) (*promQuerier, error) {
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	return promQuerierOn(cfg, transport)
}

// newTransport builds the HTTP transport to cfg.URL: its TLS settings (ca.crt, the
// client certificate) and, when the allowlist allows cfg.URL only through its
// CIDRs, a dialer that connects only to addresses in them.
func newTransport(cfg Config) (*http.Transport, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("build Prometheus client: no URL; build the Config with ConfigFromSecret")
	}
	tlsConfig, err := tlsConfigOf(cfg, false)
	if err != nil {
		return nil, err
	}
	tlsConfig.Certificates = nil
	if cert := cfg.creds().clientCert; cert != nil {
		tlsConfig.Certificates = []tls.Certificate{*cert}
	}
	return transportTo(cfg, cfg.URL, tlsConfig)
}

// tlsConfigOf is the TLS configuration of cfg's connections: ca.crt's authorities
// instead of the system's roots, or, withSystemRoots, beside them (for an OAuth2
// token endpoint, often a public identity provider).
func tlsConfigOf(cfg Config, withSystemRoots bool) (*tls.Config, error) {
	tlsConfig := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: cfg.InsecureSkipVerify, //nolint:gosec // the user asked for it in the Secret
	}
	if caPEM := cfg.creds().caPEM; len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if withSystemRoots {
			if sys, err := x509.SystemCertPool(); err == nil {
				pool = sys
			}
		}
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("build Prometheus client: %w", keyError(KeyCA, "holds no usable certificate"))
		}
		tlsConfig.RootCAs = pool
	}
	return tlsConfig, nil
}

// transportTo builds a transport to rawURL under cfg's allowlist: refused with a
// *NotAllowedError when the allowlist does not allow rawURL, and connecting only to
// the allowlist's CIDRs when it allows it only through them.
func transportTo(cfg Config, rawURL string, tlsConfig *tls.Config) (*http.Transport, error) {
	control, err := cfg.Allowlist.check(rawURL)
	if err != nil {
		return nil, err
	}
	// The settings of http.DefaultTransport, with our TLS configuration.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	if cfg.Allowlist.hasCIDRs() {
		// The CIDRs bound the addresses connected to, and a proxy's address is not
		// Prometheus's: connect directly.
		transport.Proxy = nil
	}
	if control != nil {
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: control}
		transport.DialContext = dialer.DialContext
	}
	return transport, nil
}

// promQuerierOn builds the client of cfg on transport.
func promQuerierOn(cfg Config, transport http.RoundTripper) (*promQuerier, error) {
	maxBytes := cfg.MaxAnswerBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxAnswerBytes
	}
	// The custom headers go first, so that the manager's own (credentials, tenant)
	// are set last and cannot be overridden.
	if cfg.creds().sigv4 != nil {
		transport = newSigV4RoundTripper(cfg, transport)
	}
	var rt http.RoundTripper = &authRoundTripper{next: transport, cfg: cfg, maxBytes: maxBytes}
	if o := cfg.creds().oauth2; o != nil {
		var err error
		if rt, err = newOAuth2RoundTripper(cfg, o, rt); err != nil {
			return nil, err
		}
	}
	if h := cfg.creds().headers; len(h) > 0 {
		headers := &promconfig.Headers{Headers: map[string]promconfig.Header{}}
		for name, v := range h {
			headers.Headers[name] = promconfig.Header{Secrets: []promconfig.Secret{promconfig.Secret(v)}}
		}
		rt = promconfig.NewHeadersRoundTripper(headers, rt)
	}
	client, err := api.NewClient(api.Config{
		Address: cfg.URL,
		Client: &http.Client{
			Transport: rt,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("build Prometheus client: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	maxSeries := cfg.MaxSeries
	if maxSeries <= 0 {
		maxSeries = DefaultMaxSeries
	}
	return &promQuerier{api: promv1.NewAPI(statusClient{Client: client}), timeout: timeout, maxSeries: maxSeries}, nil
}

// promQuerier is the Client of NewClient.
type promQuerier struct {
	api       promv1.API
	timeout   time.Duration
	maxSeries int
}

// Query runs the instant query within the querier's timeout. Prometheus's warnings
// are dropped: the gate only needs the value.
func (p *promQuerier) Query(ctx context.Context, query string, ts time.Time) (model.Value, error) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	v, _, err := p.api.Query(qctx, query, ts, p.limit())
	return p.checkSeries(v, p.timedOut(ctx, qctx, err))
}

// QueryRange runs the range query within the querier's timeout, like Query.
func (p *promQuerier) QueryRange(ctx context.Context, query string, r promv1.Range) (model.Value, error) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	v, _, err := p.api.QueryRange(qctx, query, r, p.limit())
	return p.checkSeries(v, p.timedOut(ctx, qctx, err))
}

// limit asks Prometheus for one series more than maxSeries: a Prometheus that
// applies it (3.x does; others ignore it) truncates a larger answer there, and the
// series over maxSeries still tell checkSeries that it was larger.
func (p *promQuerier) limit() promv1.Option {
	return promv1.WithLimit(uint64(p.maxSeries) + 1)
}

// checkSeries fails an answer of more than maxSeries series.
func (p *promQuerier) checkSeries(v model.Value, err error) (model.Value, error) {
	if err != nil {
		return v, err
	}
	n := 0
	switch v := v.(type) {
	case model.Vector:
		n = len(v)
	case model.Matrix:
		n = len(v)
	}
	if n > p.maxSeries {
		return nil, &AnswerTooLargeError{MaxSeries: p.maxSeries}
	}
	return v, nil
}

// timedOut turns err into a *TimeoutError when the querier's own deadline (qctx's)
// passed, not the caller's (ctx's), whatever error it surfaced as: a dial can report
// it as an i/o timeout.
func (p *promQuerier) timedOut(ctx, qctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(qctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Timeout: p.timeout, Err: err}
	}
	return err
}

// TimeoutError is returned by a Client of NewClient when Prometheus did not answer
// within the query timeout.
type TimeoutError struct {
	// Timeout is how long the query was given.
	Timeout time.Duration
	// Err is the error the query failed with once the timeout had passed.
	Err error
}

// Error says that the query timed out and after how long.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("Prometheus did not answer within %s: %v", e.Timeout, e.Err)
}

// Unwrap returns the error the query failed with.
func (e *TimeoutError) Unwrap() error { return e.Err }

// authRoundTripper adds the credentials and the tenant header to each request. It
// keeps the Config, whose credentials no fmt verb prints, rather than a copy of them.
// (prometheus/common/config has round trippers for a bearer token, basic auth and
// headers; using them takes an adaptor per credential to keep that property, and two
// more modules, for the same ten lines.)
type authRoundTripper struct {
	next     http.RoundTripper
	cfg      Config
	maxBytes int64
}

// RoundTrip sends a copy of req with the authentication headers set, leaving req
// untouched as http.RoundTripper requires.
func (rt *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	switch creds := rt.cfg.creds(); {
	case creds.token != "":
		req.Header.Set("Authorization", "Bearer "+creds.token)
	case creds.username != "":
		req.SetBasicAuth(creds.username, creds.password)
	}
	if rt.cfg.Tenant != "" {
		req.Header.Set(KeyTenant, rt.cfg.Tenant)
	}
	resp, err := rt.next.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, max: rt.maxBytes, left: rt.maxBytes}
	}
	return resp, err
}

// Default limits of an answer, for a Config that sets none. A check needs one sample,
// and a dashboard's range a few thousand (about 100 KB), while the URL of a policy's
// Secret may point at anything that answers without end: a larger answer fails the
// query, and so the check (fail closed).
const (
	// DefaultMaxAnswerBytes bounds what is read of one answer. Each query in flight
	// may hold twice as much while it is read (the noisy-neighbour benchmark: at 8 MiB,
	// hostile answers at the bound took the manager's RSS from 74 to 369 MiB).
	DefaultMaxAnswerBytes = 1 << 20
	// DefaultMaxSeries bounds the series of one answer.
	DefaultMaxSeries = 100
)

// AnswerTooLargeError is an answer over a limit of the Config: larger than
// MaxAnswerBytes (MaxBytes is set) or of more series than MaxSeries (MaxSeries is set).
// Run reports it with ReasonAnswerTooLarge.
type AnswerTooLargeError struct {
	// MaxBytes is the bound on bytes the answer passed; 0 when it passed MaxSeries.
	MaxBytes int64
	// MaxSeries is the bound on series the answer passed; 0 when it passed MaxBytes.
	MaxSeries int
}

// Error names the limit the answer passed.
func (e *AnswerTooLargeError) Error() string {
	if e.MaxSeries > 0 {
		return fmt.Sprintf("the answer has more than %d series, the manager's limit", e.MaxSeries)
	}
	return fmt.Sprintf("the answer is larger than %d bytes, the manager's limit", e.MaxBytes)
}

// boundedBody reads at most left more bytes of a body of at most max, then fails
// with an *AnswerTooLargeError, without reading the rest.
type boundedBody struct {
	io.ReadCloser
	max, left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the bound from a larger one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, &AnswerTooLargeError{MaxBytes: b.max}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// HTTPStatusError is a response of Prometheus (or of a proxy in front of it) whose
// status is neither a success nor one of the statuses of the Prometheus API's own
// errors (400, 422), such as 401, 403, 404 or 503. promv1 reports those with the
// status only in its message; this keeps the code, so Run can tell a rejected
// credential from a wrong URL without matching strings.
type HTTPStatusError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// APIErrorType and APIError are the errorType and error of a Prometheus API
	// error body, when the body is one (Prometheus answers 503 to a query that
	// timed out on its side, for example).
	APIErrorType string
	APIError     string
}

// Error names the status and, when the body was a Prometheus API error, its type.
func (e *HTTPStatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.APIErrorType != "" {
		s += fmt.Sprintf(" (%s: %s)", e.APIErrorType, e.APIError)
	}
	return s
}

// statusClient turns responses with a status that promv1 does not read as an API
// error into an *HTTPStatusError, and successful answers whose result promv1 cannot
// read into a *ResultError. It still returns the response, which promv1 needs to
// fall back from POST to GET on 405 and 501.
type statusClient struct {
	api.Client
}

// Do runs the request and checks the response's status.
func (c statusClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := c.Client.Do(ctx, req)
	if err != nil || resp == nil {
		return resp, body, err
	}
	code := resp.StatusCode
	if code/100 == 2 {
		return resp, body, checkResult(body)
	}
	if code == http.StatusBadRequest || code == http.StatusUnprocessableEntity {
		return resp, body, nil
	}
	serr := &HTTPStatusError{StatusCode: code}
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		// Only a Prometheus API error body is read; anything else (an HTML page of
		// a proxy, say) is not worth showing and could echo the request.
		var apiErr struct {
			Status    string `json:"status"`
			ErrorType string `json:"errorType"`
			Error     string `json:"error"`
		}
		if json.Unmarshal(body, &apiErr) == nil && apiErr.Status == "error" {
			serr.APIErrorType, serr.APIError = apiErr.ErrorType, apiErr.Error
		}
	}
	return resp, body, serr
}

// ResultError is a successful answer whose result cannot be read: a type other than
// scalar, vector and matrix (such as "string"), or a result that does not decode as
// its type says. promv1 reports both with the details only in the text of its
// message; this keeps them apart, so that Run can name the type without
// matching strings and without quoting the body.
type ResultError struct {
	// ResultType is the resultType of the answer.
	ResultType string
	// Err is why the result does not decode; nil when its type is not supported.
	Err error
}

// Error names the result type and what is wrong with it.
func (e *ResultError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("unsupported result type %q", e.ResultType)
	}
	return fmt.Sprintf("read %s result: %v", e.ResultType, e.Err)
}

// Unwrap returns why the result does not decode.
func (e *ResultError) Unwrap() error { return e.Err }

// checkResult returns a *ResultError when body is a successful query answer whose
// result promv1 could not read. It leaves anything else, such as a body that is not
// JSON at all, to promv1, which reports it as a bad_response.
func checkResult(body []byte) error {
	var answer struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &answer) != nil || answer.Status != "success" {
		return nil
	}
	var err error
	switch t := answer.Data.ResultType; t {
	case model.ValScalar.String():
		err = json.Unmarshal(answer.Data.Result, &model.Scalar{})
	case model.ValVector.String():
		err = json.Unmarshal(answer.Data.Result, &model.Vector{})
	case model.ValMatrix.String():
		err = json.Unmarshal(answer.Data.Result, &model.Matrix{})
	default:
		return &ResultError{ResultType: t}
	}
	if err != nil {
		return &ResultError{ResultType: answer.Data.ResultType, Err: err}
	}
	return nil
}
