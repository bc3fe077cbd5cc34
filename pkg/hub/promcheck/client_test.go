// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// configFor builds the Config of a Secret with the given keys.
func configFor(t *testing.T, kv ...string) Config {
	t.Helper()
	cfg, err := ConfigFromSecret(secretWith(kv...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// An answer larger than MaxAnswerBytes fails the check with ReasonAnswerTooLarge,
// and the client reads no more of it than the bound, however much the server sends.
func TestRunBoundsTheAnswerBytes(t *testing.T) {
	const limit, stream = 1 << 20, 64 << 20
	var served atomic.Int64
	handlerDone := make(chan struct{})
	huge := func(w http.ResponseWriter, _ *http.Request) {
		defer close(handlerDone)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000.5,"0.01"]},"padding":"`)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for served.Load() < stream {
			n, err := w.Write(chunk)
			served.Add(int64(n))
			if err != nil {
				return // the client closed the connection
			}
		}
		fmt.Fprint(w, `"}`)
	}
	prom := newFakePrometheus(t, false, huge)
	cfg := configFor(t, KeyURL, prom.URL)
	cfg.MaxAnswerBytes = limit

	transport, err := newTransport(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Int64
	dial := transport.DialContext
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, read: &read}, nil
	}
	q, err := promQuerierOn(cfg, transport)
	if err != nil {
		t.Fatal(err)
	}
	got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
	sameCheck(t, got, Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonAnswerTooLarge, Query: got.Query,
		Message: "the answer is larger than 1048576 bytes, the manager's limit; a check needs one series: aggregate the query"})

	// Headers and the transport's read buffer (4 KiB) on top of the bound, and what
	// net/http's client discards of an unread body when it is closed, to reuse the
	// connection (since Go 1.27: at most 256 KiB, for at most 50 ms). That is read
	// and thrown away, never held: the bound is on what the manager keeps.
	if n := read.Load(); n > limit+64<<10+256<<10 {
		t.Errorf("the client read %d bytes of the connection, want at most the bound (%d) and a little", n, limit)
	}
	<-handlerDone
	if n := served.Load(); n >= stream {
		t.Errorf("the server wrote all of its %d bytes: the client read on past the bound", n)
	}

	// A small answer is read as ever.
	prom = newFakePrometheus(t, false, scalar("0.01"))
	small := querierFor(t, 0, KeyURL, prom.URL)
	if got := Run(context.Background(), small, querySpec("<= 0.05"), testData(), evalTime); got.Result != v1alpha1.EvaluationPass {
		t.Errorf("a small answer: %s %q, want Pass", got.Result, got.Message)
	}
}

// MaxSeries is sent to Prometheus as the query's limit (one more, to tell a truncated
// answer), and an answer of more series fails the check with ReasonAnswerTooLarge.
func TestRunBoundsTheSeries(t *testing.T) {
	var limit atomic.Value
	answer := func(w http.ResponseWriter, r *http.Request) {
		limit.Store(r.Form.Get("limit"))
		vector("1", `{"a":"1"}`, `{"a":"2"}`, `{"a":"3"}`)(w, r)
	}
	prom := newFakePrometheus(t, false, answer)
	tests := map[string]struct {
		maxSeries int
		wantLimit string
		want      Check
	}{
		"over the limit": {
			maxSeries: 2, wantLimit: "3",
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonAnswerTooLarge,
				Message: "the answer has more than 2 series, the manager's limit; a check needs one series"},
		},
		"default limit": {
			wantLimit: "101",
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonUnexpectedResult,
				Message: "the query returned 3 series;"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := configFor(t, KeyURL, prom.URL)
			cfg.MaxSeries = tc.maxSeries
			q, err := NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
			tc.want.Query = got.Query
			sameCheck(t, got, tc.want)
			if l := limit.Load(); l != tc.wantLimit {
				t.Errorf("Prometheus got limit %q, want %q", l, tc.wantLimit)
			}
		})
	}
}

// The RangeQuerier of the dashboard has the same limits.
func TestRangeQuerierLimits(t *testing.T) {
	matrix := `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"a":"1"},"values":[[1700000000,"1"]]},{"metric":{"a":"2"},"values":[[1700000000,"2"]]}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, matrix)
	}))
	t.Cleanup(srv.Close)
	r := promv1.Range{Start: evalTime.Add(-time.Minute), End: evalTime, Step: 30 * time.Second}

	tests := map[string]struct {
		maxBytes  int64
		maxSeries int
		want      *AnswerTooLargeError // nil: the matrix is read
	}{
		"within the limits":   {},
		"too many series":     {maxSeries: 1, want: &AnswerTooLargeError{MaxSeries: 1}},
		"too many bytes":      {maxBytes: 64, want: &AnswerTooLargeError{MaxBytes: 64}},
		"exactly the bytes":   {maxBytes: int64(len(matrix))},
		"exactly the series":  {maxSeries: 2},
		"one byte too little": {maxBytes: int64(len(matrix)) - 1, want: &AnswerTooLargeError{MaxBytes: int64(len(matrix)) - 1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := configFor(t, KeyURL, srv.URL)
			cfg.MaxAnswerBytes, cfg.MaxSeries = tc.maxBytes, tc.maxSeries
			q, err := NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			v, err := q.QueryRange(context.Background(), "up", r)
			var tooLarge *AnswerTooLargeError
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("want the matrix, got %v", err)
			case tc.want == nil:
				if m, ok := v.(model.Matrix); !ok || len(m) != 2 {
					t.Errorf("want a matrix of 2 series, got %v", v)
				}
			case !errors.As(err, &tooLarge) || *tooLarge != *tc.want:
				t.Errorf("want %#v, got %v", tc.want, err)
			}
		})
	}
}
