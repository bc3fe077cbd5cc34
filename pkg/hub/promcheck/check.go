// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// maxDetail bounds the text of Prometheus or Go errors quoted in a message.
const maxDetail = 200

// Check is the outcome of one check of a draining cluster, ready for its status
// row (lastResult, lastValue, resolvedQuery, message) and the PrometheusReachable
// condition (Reason).
type Check struct {
	// Result is Pass or Fail when a value was read and compared, NoData when the
	// query returned nothing or NaN, and Error otherwise.
	Result v1alpha1.EvaluationResult
	// Value is the value read, as Prometheus formatted it ("0.0312", "NaN", "+Inf");
	// empty when none was read.
	Value string
	// Query is the resolved query; empty only when it could not be resolved.
	Query string
	// Reason is a reason of the PrometheusReachable condition: ReasonQuerySucceeded
	// on Pass and Fail, ReasonNoData or ReasonTrafficTooLow on NoData, and on Error what went wrong
	// (ReasonTemplateFailed, ReasonURLNotAllowed, ReasonUnreachable,
	// ReasonUnauthorized, ReasonTimeout, ReasonQueryFailed, ReasonAnswerTooLarge,
	// ReasonUnexpectedResult), or ReasonInvalidQuery when the spec's
	// expectedMetricsResult does not parse (the API's validation prevents it).
	Reason string
	// Message says what happened and, on anything but Pass, what to check. It holds
	// no secret, no time and no value (see Value), so it changes only when the
	// outcome does.
	Message string
}

// Run runs the check of spec for the cluster in data at now: it resolves the
// query, runs it and compares its value with spec.Expectation(). It never returns
// Pass unless a single number was read and met the expectation.
//
// NoData is returned as such: the caller applies noDataPolicy. A canceled ctx gives
// an Error with ReasonTimeout; a caller that is shutting down should drop it.
func Run(ctx context.Context, q Querier, spec *v1alpha1.TrafficMigrationPolicySpec, data QueryData, now time.Time) Check {
	if spec == nil {
		return Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonInvalidQuery, Message: "the policy has no spec"}
	}
	expect, err := spec.Expectation()
	if err != nil {
		return Check{
			Result:  v1alpha1.EvaluationError,
			Reason:  v1alpha1.ReasonInvalidQuery,
			Message: fmt.Sprintf("expectedMetricsResult: %v; set it to an operator and a number, for example '<= 0.05'", err),
		}
	}
	query, err := ResolveQuery(spec, data)
	if err != nil {
		// The sandbox's own errors are bounded and end with what to do: keep them whole.
		var te *templateError
		detail := err.Error()
		if !errors.As(err, &te) {
			detail = truncate(detail)
		}
		return Check{
			Result:  v1alpha1.EvaluationError,
			Reason:  v1alpha1.ReasonTemplateFailed,
			Message: fmt.Sprintf("the query could not be resolved for cluster %q: %s", data.Cluster.Name, detail),
		}
	}
	ev := Check{Query: query}
	value, err := q.Query(ctx, query, now)
	if err != nil {
		ev.Result = v1alpha1.EvaluationError
		ev.Reason, ev.Message = classify(err)
		return ev
	}
	v, ok := readValue(value, &ev)
	if !ok {
		if ev.Result == v1alpha1.EvaluationNoData {
			explainLowTraffic(ctx, q, spec.TrafficShare, now, &ev)
		}
		return ev
	}
	ev.Value = v.String()
	if math.IsNaN(float64(v)) {
		ev.Result = v1alpha1.EvaluationNoData
		ev.Reason = v1alpha1.ReasonNoData
		ev.Message = "the query returned NaN, as a ratio does when there is no traffic at all; noDataPolicy decides how it counts"
		return ev
	}
	ev.Reason = v1alpha1.ReasonQuerySucceeded
	if expect.Met(float64(v)) {
		ev.Result = v1alpha1.EvaluationPass
		ev.Message = fmt.Sprintf("the query's value meets %s", expect)
	} else {
		ev.Result = v1alpha1.EvaluationFail
		ev.Message = fmt.Sprintf("the query's value does not meet %s yet", expect)
	}
	return ev
}

// explainLowTraffic tells a trafficShare check that had no data because the traffic
// was under minRequestsPerSecond (ReasonTrafficTooLow) from one whose series are
// missing: it reads the total once more. Whatever goes wrong with that second query,
// the check stays NoData as it was.
func explainLowTraffic(ctx context.Context, q Querier, ts *v1alpha1.TrafficShare, now time.Time, ev *Check) {
	if ts == nil || ts.MinRequestsPerSecond <= 0 {
		return
	}
	value, err := q.Query(ctx, trafficShareTotalQuery(ts), now)
	if err != nil {
		return
	}
	var total Check
	v, ok := readValue(value, &total)
	if !ok || math.IsNaN(float64(v)) || float64(v) >= ts.MinRequestsPerSecond {
		return
	}
	ev.Reason = v1alpha1.ReasonTrafficTooLow
	ev.Message = fmt.Sprintf("the Gateway's traffic in all is under trafficShare.minRequestsPerSecond (%s/s): too little to judge a share; noDataPolicy decides how it counts",
		strconv.FormatFloat(ts.MinRequestsPerSecond, 'g', -1, 64))
}

// readValue reads the single number of a query result. When there is none it fills
// in ev's Result, Reason and Message and returns false.
func readValue(value model.Value, ev *Check) (model.SampleValue, bool) {
	const hint = "the query must return a scalar or a single series"
	fail := func(reason, msg string) (model.SampleValue, bool) {
		ev.Result, ev.Reason, ev.Message = v1alpha1.EvaluationError, reason, msg
		return 0, false
	}
	switch v := value.(type) {
	case *model.Scalar:
		if v == nil {
			return fail(v1alpha1.ReasonUnexpectedResult, "the query returned no result at all; "+hint)
		}
		return v.Value, true
	case model.Vector:
		switch len(v) {
		case 0:
			ev.Result, ev.Reason = v1alpha1.EvaluationNoData, v1alpha1.ReasonNoData
			ev.Message = "the query returned no series: the metric or its labels may be wrong, or there is no traffic; noDataPolicy decides how it counts"
			return 0, false
		case 1:
			return v[0].Value, true
		}
		// Only the count: the series' labels are not the status's to show.
		return fail(v1alpha1.ReasonUnexpectedResult, fmt.Sprintf(
			"the query returned %d series; %s: aggregate it, for example with sum(...)", len(v), hint))
	case model.Matrix:
		return fail(v1alpha1.ReasonUnexpectedResult, fmt.Sprintf(
			"the query returned a range vector (matrix) of %d series; %s: drop the range selector such as [5m], or wrap it in a function such as rate()", len(v), hint))
	case *model.String:
		return fail(v1alpha1.ReasonUnexpectedResult, "the query returned a string; "+hint)
	}
	if value == nil {
		return fail(v1alpha1.ReasonUnexpectedResult, "the query returned no result at all; "+hint)
	}
	return fail(v1alpha1.ReasonUnexpectedResult, fmt.Sprintf("the query returned a %s; %s", value.Type(), hint))
}

// classify turns a query error into a reason of the PrometheusReachable condition
// and a message that says what to check. It reads the error types of client_golang,
// net/http, crypto/tls and net; it matches no strings.
func classify(err error) (reason, message string) {
	var (
		notAllowed *NotAllowedError
		tooLarge   *AnswerTooLargeError
		timeoutErr *TimeoutError
		oauth2Err  *OAuth2Error
		statusErr  *HTTPStatusError
		resultErr  *ResultError
		apiErr     *promv1.Error
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		verifyErr  *tls.CertificateVerificationError
		recordErr  tls.RecordHeaderError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		urlErr     *url.Error
		netErr     net.Error
	)
	switch {
	case errors.As(err, &notAllowed):
		return v1alpha1.ReasonURLNotAllowed, notAllowed.Error()
	case errors.As(err, &tooLarge):
		return v1alpha1.ReasonAnswerTooLarge, tooLarge.Error() + "; a check needs one series: aggregate the query, for example with sum(...)"
	case errors.As(err, &oauth2Err):
		if oauth2Err.StatusCode == 0 {
			if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
				return v1alpha1.ReasonTimeout, oauth2Err.Error() + "; check oauth2TokenURL in the Prometheus Secret"
			}
			return v1alpha1.ReasonUnreachable, oauth2Err.Error() + "; check oauth2TokenURL in the Prometheus Secret"
		}
		if c := oauth2Err.StatusCode; c == http.StatusBadRequest || c == http.StatusUnauthorized || c == http.StatusForbidden {
			return v1alpha1.ReasonUnauthorized, oauth2Err.Error() + "; check oauth2ClientID, oauth2ClientSecret and oauth2Scopes in the Prometheus Secret"
		}
		return v1alpha1.ReasonUnreachable, oauth2Err.Error() + "; check oauth2TokenURL in the Prometheus Secret"
	case errors.As(err, &timeoutErr):
		return v1alpha1.ReasonTimeout, fmt.Sprintf("Prometheus did not answer within %s; check that it is up and that the query is not too expensive", timeoutErr.Timeout)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return v1alpha1.ReasonTimeout, "Prometheus did not answer in time; check that it is up and that the query is not too expensive"
	case errors.Is(err, context.Canceled):
		return v1alpha1.ReasonTimeout, "the query was canceled before Prometheus answered"

	case errors.As(err, &statusErr):
		return classifyStatus(statusErr)
	case errors.As(err, &resultErr):
		if resultErr.Err == nil {
			return v1alpha1.ReasonUnexpectedResult, fmt.Sprintf("the query returned a %s; the query must return a scalar or a single series", truncate(resultErr.ResultType))
		}
		return v1alpha1.ReasonUnexpectedResult, fmt.Sprintf("the query's %s result could not be read: %s", truncate(resultErr.ResultType), truncate(resultErr.Err.Error()))
	case errors.As(err, &apiErr):
		return classifyAPIError(string(apiErr.Type), apiErr.Msg)

	case errors.As(err, &unknownCA):
		return v1alpha1.ReasonUnreachable, "TLS: Prometheus's certificate is signed by an unknown authority; set ca.crt in the Prometheus Secret to the certificate of the CA that signs it"
	case errors.As(err, &hostErr):
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("TLS: %s; use a host name in url that the certificate lists", truncate(hostErr.Error()))
	case errors.As(err, &invalidErr):
		if invalidErr.Reason == x509.Expired {
			// Its text holds the current time: keep it out of the message.
			return v1alpha1.ReasonUnreachable, "TLS: Prometheus's certificate, or one that signs it, has expired or is not yet valid; renew it, or check ca.crt in the Prometheus Secret"
		}
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("TLS: %s; check Prometheus's certificate and ca.crt in the Prometheus Secret", truncate(invalidErr.Error()))
	case errors.As(err, &verifyErr):
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("TLS: Prometheus's certificate could not be verified: %s; check ca.crt in the Prometheus Secret", truncate(errText(verifyErr.Err)))
	case errors.As(err, &opErr) && opErr.Op == "remote error" && clientCertAlert(opErr.Err):
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("TLS: Prometheus refused the handshake (%s); if it requires a client certificate, set tls.crt and tls.key in the Prometheus Secret to one that its CA signed", opErr.Err.Error())
	case errors.As(err, &recordErr):
		return v1alpha1.ReasonUnreachable, "TLS: the server did not answer with TLS; use an http:// url if Prometheus serves plain HTTP"
	case errors.As(err, &dnsErr):
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("cannot resolve the host %q of url: %s; check the url in the Prometheus Secret", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &opErr):
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("cannot connect to Prometheus: %s; check the url in the Prometheus Secret and that Prometheus is up", describeOpError(opErr))
	case errors.As(err, &urlErr):
		// Other failures of the HTTP exchange; their texts carry no addresses.
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("the request to Prometheus failed: %s", truncate(errText(urlErr.Err)))
	}
	return v1alpha1.ReasonQueryFailed, fmt.Sprintf("the query failed: %s", truncate(err.Error()))
}

// classifyStatus reads an HTTP status that is not a Prometheus API error.
func classifyStatus(e *HTTPStatusError) (reason, message string) {
	status := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	switch code := e.StatusCode; {
	case code == http.StatusUnauthorized:
		return v1alpha1.ReasonUnauthorized, fmt.Sprintf("Prometheus rejected the credentials (%s); check token, or username and password, in the Prometheus Secret, and X-Scope-OrgID for a multi-tenant store", status)
	case code == http.StatusForbidden:
		return v1alpha1.ReasonUnauthorized, fmt.Sprintf("Prometheus refused the query (%s); give the identity of the token, of username or of the SigV4 access key the right to query metrics (on OpenShift the cluster-monitoring-view role, on Amazon Managed Service for Prometheus aps:QueryMetrics), check sigv4Region and sigv4SecretKey (a wrong signature is refused so too), or check X-Scope-OrgID", status)
	case e.APIErrorType != "":
		reason, message = classifyAPIError(e.APIErrorType, e.APIError)
		return reason, fmt.Sprintf("%s (%s)", message, status)
	case code == http.StatusNotFound:
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("no Prometheus query API at url (%s); check the url's path: it is the address without /api/v1 (some stores, such as Mimir, serve under a prefix like /prometheus)", status)
	case code/100 == 3:
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("Prometheus answered with a redirect (%s), which is not followed; set url to the final address of the API (a redirect to a login page means the credentials are missing)", status)
	case code/100 == 5:
		return v1alpha1.ReasonUnreachable, fmt.Sprintf("Prometheus, or a proxy in front of it, failed (%s); check that Prometheus is up", status)
	}
	return v1alpha1.ReasonQueryFailed, fmt.Sprintf("Prometheus refused the query (%s)", status)
}

// classifyAPIError reads an error of the Prometheus API by its errorType.
func classifyAPIError(errorType, msg string) (reason, message string) {
	switch promv1.ErrorType(errorType) {
	case promv1.ErrTimeout, promv1.ErrCanceled:
		return v1alpha1.ReasonTimeout, fmt.Sprintf("Prometheus gave up on the query (%s: %s); make the query cheaper or raise Prometheus's query timeout", errorType, truncate(msg))
	case promv1.ErrBadData:
		return v1alpha1.ReasonQueryFailed, fmt.Sprintf("Prometheus rejected the query: %s; fix the PromQL", truncate(msg))
	case promv1.ErrExec:
		return v1alpha1.ReasonQueryFailed, fmt.Sprintf("Prometheus could not run the query: %s", truncate(msg))
	case promv1.ErrBadResponse:
		// msg quotes the body, which is not worth showing.
		return v1alpha1.ReasonUnexpectedResult, "the answer is not a Prometheus API response; check that url points at the Prometheus HTTP API and not at a web page or a login page"
	}
	return v1alpha1.ReasonQueryFailed, fmt.Sprintf("Prometheus could not run the query (%s: %s)", errorType, truncate(msg))
}

// describeOpError describes a network error by its operation, remote address and
// cause, leaving out the local address, whose port changes at each attempt.
func describeOpError(e *net.OpError) string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Net != "" {
		b.WriteString(" " + e.Net)
	}
	if e.Addr != nil {
		b.WriteString(" " + e.Addr.String())
	}
	cause := e.Err
	var sysErr *os.SyscallError
	if errors.As(cause, &sysErr) {
		cause = sysErr.Err
	}
	b.WriteString(": " + errText(cause))
	return b.String()
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// truncate bounds a quoted error text so that a message stays readable in a status.
func truncate(s string) string {
	if len(s) <= maxDetail {
		return s
	}
	cut := maxDetail
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// clientCertAlert says whether err, a TLS alert the server sent, is about the
// client's certificate (crypto/tls does not export the alert type of a TCP
// connection; its texts are fixed).
func clientCertAlert(err error) bool {
	switch err.Error() {
	case "tls: certificate required", "tls: bad certificate", "tls: unknown certificate authority",
		"tls: unsupported certificate", "tls: expired certificate", "tls: revoked certificate":
		return true
	}
	return false
}
