// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// countQuerier answers every query with count, and records the query.
type countQuerier struct {
	count model.Value
	query string
}

func (q *countQuerier) Query(_ context.Context, query string, _ time.Time) (model.Value, error) {
	q.query = query
	return q.count, nil
}

func vectorOf(v float64) model.Value {
	return model.Vector{&model.Sample{Value: model.SampleValue(v)}}
}

func TestSampleSpacing(t *testing.T) {
	spec := &v1alpha1.TrafficShare{Metric: "traefik_entrypoint_requests_total", Selector: `entrypoint="web"`, Window: "30s"}
	for name, tc := range map[string]struct {
		answer model.Value
		want   time.Duration
		ok     bool
	}{
		"scraped every 15s":   {vectorOf(20), 15 * time.Second, true},
		"scraped every 1s":    {vectorOf(300), time.Second, true},
		"one sample":          {vectorOf(1), 0, false},
		"no series":           {model.Vector{}, 0, false},
		"as a scalar":         {&model.Scalar{Value: 10}, 30 * time.Second, true},
		"several series, odd": {model.Vector{&model.Sample{Value: 1}, &model.Sample{Value: 2}}, 0, false},
	} {
		t.Run(name, func(t *testing.T) {
			q := &countQuerier{count: tc.answer}
			got, ok, err := SampleSpacing(t.Context(), q, spec, time.Time{})
			if err != nil || ok != tc.ok || got != tc.want {
				t.Errorf("SampleSpacing = %v, %v, %v; want %v, %v", got, ok, err, tc.want, tc.ok)
			}
			if want := `max(count_over_time(traefik_entrypoint_requests_total{entrypoint="web"}[5m]))`; q.query != want {
				t.Errorf("query %q, want %q", q.query, want)
			}
		})
	}
	long := &v1alpha1.TrafficShare{Metric: "m", Window: "2m"}
	if query, lookback, err := SampleSpacingQuery(long); err != nil || lookback != 16*time.Minute || query != "max(count_over_time(m[16m]))" {
		t.Errorf("a 2m window: %q over %v (%v), want 8 windows back", query, lookback, err)
	}
}

func TestWindowTooShort(t *testing.T) {
	for name, tc := range map[string]struct {
		window  string
		spacing time.Duration
		want    string // "" for no warning, else a part of it
	}{
		"4 samples":                      {"1m", 15 * time.Second, ""},
		"a sample late by a little":      {"4s", 1003 * time.Millisecond, ""},
		"2 samples":                      {"30s", 15 * time.Second, "at least 1m (4 × the sample spacing)"},
		"a 30s scrape under 1m":          {"1m", 30 * time.Second, "holds about 2 samples of each series, which Prometheus has every 30s"},
		"less than one sample":           {"10s", time.Minute, "at least 4m"},
		"nothing measured":               {"5s", 0, ""},
		"a window that does not parse":   {"five", time.Second, ""},
		"3 samples of a 1s pipeline":     {"3s", time.Second, "at least 4s"},
		"a long window of a slow scrape": {"10m", 2 * time.Minute, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := WindowTooShort(tc.window, tc.spacing)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("WindowTooShort(%s, %v) = %q, want %q", tc.window, tc.spacing, got, tc.want)
			}
		})
	}
}
