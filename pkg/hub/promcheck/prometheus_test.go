// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakePrometheus speaks enough of the Prometheus HTTP API for the gate: it answers
// /api/v1/query with what answer writes and records the requests it got.
type fakePrometheus struct {
	*httptest.Server

	t      *testing.T
	answer http.HandlerFunc

	mu       sync.Mutex
	requests []seenRequest
}

// seenRequest is what the fake Prometheus saw of one query.
type seenRequest struct {
	query, time string
	header      http.Header
}

func newFakePrometheus(t *testing.T, tls bool, answer http.HandlerFunc) *fakePrometheus {
	t.Helper()
	p := &fakePrometheus{t: t, answer: answer}
	p.Server = httptest.NewUnstartedServer(p)
	// The TLS tests fail handshakes on purpose: keep the server's log of them quiet.
	p.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		p.StartTLS()
	} else {
		p.Start()
	}
	t.Cleanup(p.Close)
	return p
}

func (p *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		p.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		p.t.Errorf("parse form: %v", err)
	}
	p.mu.Lock()
	p.requests = append(p.requests, seenRequest{query: r.Form.Get("query"), time: r.Form.Get("time"), header: r.Header.Clone()})
	p.mu.Unlock()
	p.answer(w, r)
}

// seen returns the requests the fake got so far.
func (p *fakePrometheus) seen() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.requests...)
}

// reply answers with a Prometheus API body and status.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// success answers with a result of the given type.
func success(resultType, result string) http.HandlerFunc {
	return reply(http.StatusOK, fmt.Sprintf(`{"status":"success","data":{"resultType":%q,"result":%s}}`, resultType, result))
}

// failure answers with a Prometheus API error.
func failure(status int, errorType, msg string) http.HandlerFunc {
	return reply(status, fmt.Sprintf(`{"status":"error","errorType":%q,"error":%q}`, errorType, msg))
}

// scalar answers with a scalar of the given value.
func scalar(value string) http.HandlerFunc {
	return success("scalar", fmt.Sprintf(`[1700000000.5,%q]`, value))
}

// vector answers with one sample per label set, each label set given as JSON.
func vector(value string, labelSets ...string) http.HandlerFunc {
	samples := make([]string, 0, len(labelSets))
	for _, ls := range labelSets {
		samples = append(samples, fmt.Sprintf(`{"metric":%s,"value":[1700000000.5,%q]}`, ls, value))
	}
	return success("vector", "["+strings.Join(samples, ",")+"]")
}
