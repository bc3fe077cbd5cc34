// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// failClosedEvaluations is how many intervals of failed checks a case waits for after
// the drain starts. A gate that passed would have removed the cluster after
// consecutiveSuccesses (2) checks, one interval apart, so three intervals of checks
// that kept it prove the failure kept it.
const failClosedEvaluations = 3

// failClosedCase is one way the removal gate cannot be evaluated, or one control in
// which it can.
type failClosedCase struct {
	// setup, when not nil, brings in the case's fault: it may start a server in front
	// of the test bed's Prometheus, point the policy at a Secret of its own or change
	// its query. It may return a check of what that server saw, run once the outcome
	// is seen.
	setup func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(t *testing.T)
	// idle stops all traffic before the move, so that a share of it is 0/0. Otherwise
	// all of it goes to the second cluster, and the first's share of it falls to 0.
	idle bool

	// removed is true for the controls, in which the gate passes and removes the
	// draining cluster; then result is its last check's result.
	removed bool
	// result is the draining cluster's lastResult.
	result trafficv1alpha1.EvaluationResult
	// reason is the reason of the PrometheusReachable condition.
	reason string
	// message lists texts that the row's message and the condition's message must
	// both hold: what went wrong and what to check.
	message []string
	// query is the resolved query the row must show, nil when not checked.
	query func(m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) string
	// timeout bounds the wait for the outcome after the move; 30s when zero.
	timeout time.Duration
}

// TestFailClosed proves that every way of failing to evaluate the removal gate keeps
// the draining cluster in the proxy: its run of successes stays 0, and the
// PrometheusReachable condition, the cluster's row and an event say why, in words a
// user can act on. Each policy asks for only two passing checks a second apart and
// no minimum drain, so a gate that passed would remove the cluster within seconds; the
// controls show that it does when the fault is taken away.
// Rules: 2, 3, 4.
func TestFailClosed(t *testing.T) {
	t.Parallel()
	cases := map[string]failClosedCase{
		"unreachable": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				port, err := testbed.FreePort()
				if err != nil {
					t.Fatal(err)
				}
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: fmt.Sprintf("http://127.0.0.1:%d", port)})
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonUnreachable,
			message: []string{"cannot connect to Prometheus", "connection refused", "check the url in the Prometheus Secret"},
			query:   c1ShareQuery,
		},
		"slow": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				// The Secret cannot lower the manager's query timeout: hold each query
				// past it.
				front := newPromFront(t, false, holdFor(promcheck.DefaultQueryTimeout+5*time.Second))
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL})
				return func(t *testing.T) {
					// Checks run apart from syncs, one round at a time: by the time the
					// first timed-out check is in the status, at least that one query came.
					if got := front.requests.Load(); got < 1 {
						t.Errorf("the slow Prometheus got %d queries, want at least 1", got)
					}
					if got := front.forwarded.Load(); got != 0 {
						t.Errorf("%d queries waited long enough to be answered: the manager's timeout is longer than %s", got, promcheck.DefaultQueryTimeout+5*time.Second)
					}
				}
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonTimeout,
			message: []string{fmt.Sprintf("did not answer within %s", promcheck.DefaultQueryTimeout), "check that it is up"},
			query:   c1ShareQuery,
			// Each check takes the whole timeout; the third interval is passed at the
			// second check, which ends two timeouts after the drain starts.
			timeout: 2*promcheck.DefaultQueryTimeout + 25*time.Second,
		},
		"wrong-token": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				front := newPromFront(t, false, bearerOnly("the-right-token"))
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL, promcheck.KeyToken: "a-wrong-token"})
				return func(t *testing.T) {
					if front.requests.Load() < 2 || front.forwarded.Load() != 0 {
						t.Errorf("the oauth proxy got %d queries and let %d through; want at least 2, none through", front.requests.Load(), front.forwarded.Load())
					}
				}
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonUnauthorized,
			message: []string{"rejected the credentials", "HTTP 401", "check token"},
			query:   c1ShareQuery,
		},
		"right-token": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				front := newPromFront(t, false, bearerOnly("the-right-token"))
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL, promcheck.KeyToken: "the-right-token"})
				return func(t *testing.T) {
					if front.forwarded.Load() < 2 || front.forwarded.Load() != front.requests.Load() {
						t.Errorf("the oauth proxy got %d queries and let %d through; want at least 2, all through", front.requests.Load(), front.forwarded.Load())
					}
				}
			},
			removed: true,
			result:  trafficv1alpha1.EvaluationPass,
		},
		"wrong-ca": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				front := newPromFront(t, true, nil)
				// The hub's CA is a real CA, but not the one that signs the front's
				// certificate.
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL, promcheck.KeyCA: string(bed.Hub.CA.CertPEM)})
				return func(t *testing.T) {
					if got := front.requests.Load(); got != 0 {
						t.Errorf("%d queries got past the TLS handshake with the wrong CA", got)
					}
				}
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonUnreachable,
			message: []string{"TLS: ", "certificate", "ca.crt"},
			query:   c1ShareQuery,
		},
		"right-ca": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				front := newPromFront(t, true, nil)
				// httptest's certificate is its own CA.
				ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: front.URL, promcheck.KeyCA: string(ca)})
				return func(t *testing.T) {
					if got := front.forwarded.Load(); got < 2 {
						t.Errorf("the TLS front answered %d queries, want at least 2", got)
					}
				}
			},
			removed: true,
			result:  trafficv1alpha1.EvaluationPass,
		},
		"missing-secret": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				p.Spec.PrometheusSecret.Name = "no-such-secret"
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonSecretNotFound,
			message: []string{"Secret no-such-secret not found in namespace"},
		},
		"url-without-scheme": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: "prometheus:9090"})
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonSecretInvalid,
			message: []string{`Secret key "url"`, "use https:// or http://"},
		},
		"url-unparsable": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: "://nope"})
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonSecretInvalid,
			message: []string{`Secret key "url"`, "not a valid URL", "https://prometheus.example:9090"},
		},
		"invalid-promql": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, "sum(rate(", "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonQueryFailed,
			message: []string{"Prometheus rejected the query", "fix the PromQL"},
			query:   c1MetricsQuery,
		},
		"template-fails": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster="{{ index .Cluster.Labels "no-such-label" }}"}[4s]))`, m.traffic.job), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonTemplateFailed,
			message: []string{"could not be resolved", `no key "no-such-label"`, "cluster_name"},
			// No half-filled query is shown.
			query: func(*migration, *trafficv1alpha1.TrafficMigrationPolicy) string { return "" },
		},
		"template-refused": {
			// Admitted by the API server (its rules refuse what they can see), refused
			// by the manager's parser.
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster="{{ $c := .Cluster.Name }}{{ $c }}"}[4s]))`, m.traffic.job), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonTemplateFailed,
			message: []string{"could not be resolved", "not allowed"},
			query:   func(*migration, *trafficv1alpha1.TrafficMigrationPolicy) string { return "" },
		},
		"injected-label-raw": {
			// The spoke reports a label value that, pasted into the query as it is,
			// would end the selector and make the query return 0: a pass.
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				m.f.reportAgent(t, m.c1, gatewayNamespace, gatewayName, true, map[string]string{"cluster": injectedLabel})
				useQuery(p, fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster="{{ index .Cluster.Labels "cluster" }}"}[4s]))`, m.traffic.job), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonTemplateFailed,
			message: []string{"cannot be used unquoted", "quote"},
			query:   func(*migration, *trafficv1alpha1.TrafficMigrationPolicy) string { return "" },
		},
		"injected-label-quoted": {
			// Quoted, the same value is only a value: no series has it.
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				m.f.reportAgent(t, m.c1, gatewayNamespace, gatewayName, true, map[string]string{"cluster": injectedLabel})
				useQuery(p, fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster={{ index .Cluster.Labels "cluster" | quote }}}[4s]))`, m.traffic.job), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationNoData,
			reason:  trafficv1alpha1.ReasonNoData,
			message: []string{"returned no series"},
			query: func(m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) string {
				return fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster=%q}[4s]))`, m.traffic.job, injectedLabel)
			},
		},
		"answer-too-large": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				endless := newEndlessProm(t)
				m.useSecret(t, p, map[string]string{promcheck.KeyURL: endless.URL})
				return func(t *testing.T) {
					// The bound, and what the kernel's socket buffers hold on loopback.
					if sent, most := endless.most.Load(), int64(promcheck.DefaultMaxAnswerBytes+16<<20); sent > most {
						t.Errorf("the manager read %d bytes of one answer before it stopped, more than %d", sent, most)
					}
				}
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonAnswerTooLarge,
			message: []string{"larger than", "sent to Prometheus for"}, // the manager backs off, and says so
			query:   c1ShareQuery,
		},
		"several-series": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, fmt.Sprintf(`test_gateway_requests_total{job=%q}`, m.traffic.job), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationError,
			reason:  trafficv1alpha1.ReasonUnexpectedResult,
			message: []string{"returned 2 series", "aggregate it"},
			query:   c1MetricsQuery,
		},
		"nan": {
			// The traffic-share query over no traffic at all: 0/0.
			idle:    true,
			result:  trafficv1alpha1.EvaluationNoData,
			reason:  trafficv1alpha1.ReasonNoData,
			message: []string{"NaN", "noDataPolicy"},
			query:   c1ShareQuery,
		},
		"no-data-hold": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, noSuchMetric(m), "<= 5")
				return nil
			},
			result:  trafficv1alpha1.EvaluationNoData,
			reason:  trafficv1alpha1.ReasonNoData,
			message: []string{"returned no series", "noDataPolicy"},
			query:   c1MetricsQuery,
		},
		"no-data-pass": {
			setup: func(t *testing.T, m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) func(*testing.T) {
				useQuery(p, noSuchMetric(m), "<= 5")
				p.Spec.NoDataPolicy = trafficv1alpha1.NoDataPass
				return nil
			},
			removed: true,
			result:  trafficv1alpha1.EvaluationNoData,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runFailClosed(t, "fc-"+name, tc)
		})
	}
}

// runFailClosed runs one case in a migration of its own: the real Placement moves
// from the first cluster to the second, and the first drains behind the case's fault.
func runFailClosed(t *testing.T, prefix string, tc failClosedCase) {
	m := newMigration(t, prefix)
	f := m.f
	if tc.idle {
		m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 0})
	} else {
		m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	}
	p := m.policy()
	p.Spec.ConsecutiveSuccesses = 2
	p.Spec.MinDrainDuration = &metav1.Duration{}
	interval := p.Spec.Interval.Duration
	var check func(*testing.T)
	if tc.setup != nil {
		check = tc.setup(t, m, p)
	}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)

	// A control waits until Prometheus itself says the first cluster's share of the
	// traffic is under 5%, so that its gate passes from the first check after the
	// move; the NaN case waits for the share to be 0/0. A case with a fault needs no
	// such wait: its row's result, Error and not Fail, shows that no check got as far
	// as comparing a value.
	if p.Spec.TrafficShare != nil && (tc.removed || tc.idle) {
		if tc.idle {
			waitForPromValue(t, c1ShareQuery(m, p), func(v float64) bool { return math.IsNaN(v) })
		} else {
			waitForPromValue(t, c1ShareQuery(m, p), func(v float64) bool { return v <= 5 })
		}
	}

	m.moveToC2(t)
	moved := time.Now()
	timeout := tc.timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}

	if tc.removed {
		f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, timeout)
		// The manager writes the proxy's decisions first, then the status.
		got := f.waitForPolicy(t, m.ns, p.Name, 10*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
		})
		r := fixture.PolicyRow(got, m.c1)
		if r.LastResult != tc.result || r.ConsecutiveSuccesses < p.Spec.ConsecutiveSuccesses || !strings.Contains(r.Message, "removal gate passed") {
			t.Errorf("want cluster %s removed by its gate after %d checks with result %s:\n%s", m.c1, p.Spec.ConsecutiveSuccesses, tc.result, fixture.PolicyStatus(got))
		}
		if check != nil {
			check(t)
		}
		t.Logf("removed %s after the move", time.Since(moved).Round(time.Millisecond))
		return
	}

	// Wait until the checks have failed for several intervals, watching the run of
	// successes at every poll.
	var maxSuccesses int32
	got := f.waitForPolicy(t, m.ns, p.Name, timeout, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		if r == nil {
			return false
		}
		maxSuccesses = max(maxSuccesses, r.ConsecutiveSuccesses)
		c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
		return r.Phase == trafficv1alpha1.ClusterDraining && r.LastResult == tc.result &&
			c != nil && c.Reason == tc.reason &&
			r.DrainStartTime != nil && r.LastEvaluationTime != nil &&
			r.LastEvaluationTime.Sub(r.DrainStartTime.Time) >= failClosedEvaluations*interval
	})
	// A removed cluster would not come back, since the real Placement no longer
	// selects it: finding it in the proxy now shows that it never left.
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, time.Second)

	r := fixture.PolicyRow(got, m.c1)
	if maxSuccesses != 0 || r.ConsecutiveSuccesses != 0 {
		t.Errorf("cluster %s counted successes (at most %d seen) although no check could pass:\n%s", m.c1, maxSuccesses, fixture.PolicyStatus(got))
	}
	if want := "waiting for 2 more passing checks"; !strings.Contains(r.Message, want) {
		t.Errorf("row of %s: message %q does not say %q", m.c1, r.Message, want)
	}
	c := condition(got, trafficv1alpha1.ConditionPrometheusReachable)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, m.c1) {
		t.Errorf("PrometheusReachable should be False and name cluster %s: %+v", m.c1, c)
	}
	for _, want := range tc.message {
		if !strings.Contains(r.Message, want) {
			t.Errorf("row of %s: message %q does not say %q", m.c1, r.Message, want)
		}
		if !strings.Contains(c.Message, want) {
			t.Errorf("PrometheusReachable: message %q does not say %q", c.Message, want)
		}
	}
	if tc.query != nil {
		if want := tc.query(m, p); r.ResolvedQuery != want {
			t.Errorf("row of %s: resolved query %q, want %q", m.c1, r.ResolvedQuery, want)
		}
	}
	if d := f.waitForWarning(t, m.ns, p.Name, tc.reason, 10*time.Second); !strings.Contains(d.Note, m.c1) {
		t.Errorf("event %s does not name cluster %s: %q", tc.reason, m.c1, d.Note)
	}
	if check != nil {
		check(t)
	}
	t.Logf("kept through checks from %s to %s (%s after the move): %s",
		r.DrainStartTime.Format(time.TimeOnly), r.LastEvaluationTime.Format(time.TimeOnly), time.Since(moved).Round(time.Millisecond), r.Message)
}

// injectedLabel is a label value a hostile spoke reports: pasted unquoted into
// cluster="...", it would close the selector, turn the rest of the query into a
// comment and add "or vector(0)", a value that passes any "<= x" check.
const injectedLabel = `x"}[4s])) or vector(0) #`

// endlessProm answers every query with a vector that never ends, as a hostile or
// broken server could. most is the largest number of bytes one answer got out before
// the client stopped reading.
type endlessProm struct {
	*httptest.Server
	most atomic.Int64
}

func newEndlessProm(t *testing.T) *endlessProm {
	t.Helper()
	e := &endlessProm{}
	series := []byte(`{"metric":{"cluster":"` + strings.Repeat("x", 1000) + `"},"value":[1,"1"]},`)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		n, _ := io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		sent := int64(n)
		// Up to 1 GiB, so a client that never stops does not write forever.
		for sent < 1<<30 {
			n, err := w.Write(series)
			sent += int64(n)
			if err != nil {
				break
			}
		}
		for {
			old := e.most.Load()
			if sent <= old || e.most.CompareAndSwap(old, sent) {
				break
			}
		}
	}))
	t.Cleanup(func() {
		e.CloseClientConnections()
		e.Close()
	})
	return e
}

// useSecret writes a Prometheus Secret of the case's own and points the policy at it.
func (m *migration) useSecret(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, data map[string]string) {
	t.Helper()
	const name = "prometheus-case"
	m.f.prometheusSecret(t, m.ns, name, data)
	p.Spec.PrometheusSecret.Name = name
}

// useQuery replaces the policy's traffic share with a query of its own.
func useQuery(p *trafficv1alpha1.TrafficMigrationPolicy, query, expect string) {
	p.Spec.TrafficShare = nil
	p.Spec.MetricsQuery = query
	p.Spec.ExpectedMetricsResult = expect
}

// c1ShareQuery is the query the manager builds from the policy's trafficShare for the
// first cluster, as docs/design.md spells it.
func c1ShareQuery(m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) string {
	ts := p.Spec.TrafficShare
	return fmt.Sprintf("100 * sum(rate(%s{cluster=%q,%s}[%s])) / sum(rate(%s{%s}[%s]))",
		ts.Metric, m.c1, ts.Selector, ts.Window, ts.Metric, ts.Selector, ts.Window)
}

// c1MetricsQuery is the policy's metricsQuery for the first cluster, when its template
// holds nothing but .Cluster.Name.
func c1MetricsQuery(m *migration, p *trafficv1alpha1.TrafficMigrationPolicy) string {
	return strings.ReplaceAll(p.Spec.MetricsQuery, "{{ .Cluster.Name }}", m.c1)
}

// noSuchMetric is a query for a metric nobody serves: Prometheus answers with no
// series.
func noSuchMetric(m *migration) string {
	return fmt.Sprintf(`sum(rate(test_gateway_requests_missing_total{job=%q,cluster="{{ .Cluster.Name }}"}[4s]))`, m.traffic.job)
}

// waitForPromValue asks the test bed's Prometheus until query returns a single value
// that ok accepts.
func waitForPromValue(t *testing.T, query string, ok func(float64) bool) {
	t.Helper()
	waitForPromValueAt(t, query, time.Now, ok)
}

// waitForPromValueAt asks the test bed's Prometheus, at the time at gives, until query
// returns a single value that ok accepts.
func waitForPromValueAt(t *testing.T, query string, at func() time.Time, ok func(float64) bool) {
	t.Helper()
	client, err := api.NewClient(api.Config{Address: bed.Prometheus.URL})
	if err != nil {
		t.Fatal(err)
	}
	prom := promv1.NewAPI(client)
	var last model.Value
	var lastErr error
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last, _, lastErr = prom.Query(ctx, query, at())
		vec, isVector := last.(model.Vector)
		return lastErr == nil && isVector && len(vec) == 1 && ok(float64(vec[0].Value)), nil
	})
	if err != nil {
		t.Fatalf("Prometheus: %s never gave the value wanted; last answer %v, error %v", query, last, lastErr)
	}
}

// waitForWarning waits for a Warning event on the policy with the given reason.
func (f *fleet) waitForWarning(t *testing.T, ns, policy, reason string, timeout time.Duration) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	var seen []string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := f.Kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for i := range list.Items {
			e := &list.Items[i]
			seen = append(seen, e.Type+" "+e.Reason)
			if e.Regarding.Name == policy && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Warning event %s on policy %s/%s; events seen: %v", reason, ns, policy, seen)
	}
	return found
}

// promFront is a server in front of the test bed's Prometheus, as an oauth-proxy
// stands in front of Thanos on OpenShift. It counts the queries that reach it and
// those it passes on.
type promFront struct {
	*httptest.Server
	requests, forwarded atomic.Int32
}

// newPromFront starts a front, with httptest's self-signed certificate when useTLS.
// admit, when not nil, decides whether a request is passed on; when it is not, admit
// has answered it. The front closes its connections when the test ends, which ends
// any request it is holding.
func newPromFront(t *testing.T, useTLS bool, admit func(w http.ResponseWriter, r *http.Request) bool) *promFront {
	t.Helper()
	target, err := url.Parse(bed.Prometheus.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	pf := &promFront{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pf.requests.Add(1)
		if admit != nil && !admit(w, r) {
			return
		}
		pf.forwarded.Add(1)
		proxy.ServeHTTP(w, r)
	})
	if useTLS {
		pf.Server = httptest.NewTLSServer(handler)
	} else {
		pf.Server = httptest.NewServer(handler)
	}
	t.Cleanup(func() {
		pf.CloseClientConnections()
		pf.Close()
	})
	return pf
}

// bearerOnly admits the requests that carry the token, as an oauth-proxy does, and
// answers the others 401.
func bearerOnly(token string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") == "Bearer "+token {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="prometheus"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return false
	}
}

// holdFor holds each request for d before passing it on; a client that gives up
// first gets nothing.
func holdFor(d time.Duration) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		// The server notices that the client went away only once the request's body
		// is read, and the gate's queries are POSTs: read it, and keep it to pass on.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
}
