// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// newOAuth2RoundTripper sends each query with a token of the OAuth 2.0 client
// credentials grant, fetched from the token endpoint and kept until it expires, as
// prometheus/common/config's oauth2 round tripper does. That round tripper is not
// used itself: in prometheus/common v0.66 its token requests take a dialer of their
// own, so the allowlist's CIDRs would not bound them. Here the token endpoint is
// checked against the allowlist like the url, and reached through a transport of
// the same settings (ca.crt beside the system roots, no client certificate).
func newOAuth2RoundTripper(cfg Config, o *oauth2Creds, next http.RoundTripper) (http.RoundTripper, error) {
	tlsConfig, err := tlsConfigOf(cfg, true)
	if err != nil {
		return nil, err
	}
	tokenTransport, err := transportTo(cfg, o.tokenURL, tlsConfig)
	if err != nil {
		return nil, err
	}
	tokenClient := &http.Client{
		Transport: tokenTransport,
		// The client secret only ever goes to the token URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       cfg.timeout(),
	}
	cc := &clientcredentials.Config{
		ClientID:     o.clientID,
		ClientSecret: o.clientSecret,
		TokenURL:     o.tokenURL,
		Scopes:       o.scopes,
	}
	// TokenSource keeps a token until it is about to expire.
	source := cc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient))
	return &oauth2RoundTripper{source: source, next: next}, nil
}

// oauth2RoundTripper sends each request with the token of source. The token
// endpoint's failures become an *OAuth2Error, which holds no part of its answer.
type oauth2RoundTripper struct {
	source oauth2.TokenSource
	next   http.RoundTripper
}

// RoundTrip sends a copy of req with the token, leaving req untouched.
func (rt *oauth2RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := rt.source.Token()
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, newOAuth2Error(err)
	}
	req = req.Clone(req.Context())
	token.SetAuthHeader(req)
	return rt.next.RoundTrip(req)
}

// OAuth2Error is a failure to get a token from the OAuth2 token endpoint.
type OAuth2Error struct {
	// StatusCode is the HTTP status of the token endpoint's answer; 0 when there was
	// none.
	StatusCode int
	// ErrorCode is the RFC 6749 error code of the answer, such as invalid_client,
	// when it is one of the standard codes.
	ErrorCode string
	// Err is why there was no answer (StatusCode 0).
	Err error
}

func newOAuth2Error(err error) *OAuth2Error {
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		e := &OAuth2Error{ErrorCode: oauth2ErrorCode(rerr.ErrorCode)}
		if rerr.Response != nil {
			e.StatusCode = rerr.Response.StatusCode
		}
		return e
	}
	// The request's *url.Error quotes the token URL: keep its cause only.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return &OAuth2Error{Err: err}
}

// Error names the status and the error code, or why the endpoint did not answer.
func (e *OAuth2Error) Error() string {
	if e.StatusCode == 0 {
		var opErr *net.OpError
		cause := "no answer"
		switch {
		case errors.As(e.Err, &opErr):
			cause = describeOpError(opErr)
		case e.Err != nil:
			cause = truncate(errText(e.Err))
		}
		return "cannot get a token from the OAuth2 token endpoint: " + cause
	}
	s := fmt.Sprintf("the OAuth2 token endpoint refused a token: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.ErrorCode != "" {
		s += " (" + e.ErrorCode + ")"
	}
	return s
}

// Unwrap returns why the endpoint did not answer.
func (e *OAuth2Error) Unwrap() error { return e.Err }

// oauth2ErrorCode returns code when it is one of RFC 6749's, so that an answer's
// text never reaches a status.
func oauth2ErrorCode(code string) string {
	switch code {
	case "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
		"unsupported_grant_type", "invalid_scope":
		return code
	}
	return ""
}

// timeout is the bound of one query, DefaultQueryTimeout when Timeout is zero.
func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultQueryTimeout
	}
	return c.Timeout
}
