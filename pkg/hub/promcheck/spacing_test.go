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

// countQuerier answers each lookback's query with its count, and records the queries.
type countQuerier struct {
	counts  map[time.Duration]model.Value
	queries []string
}

func (q *countQuerier) Query(_ context.Context, query string, _ time.Time) (model.Value, error) {
	q.queries = append(q.queries, query)
	for lookback, v := range q.counts {
		if strings.Contains(query, "["+model.Duration(lookback).String()+"]") {
			return v, nil
		}
	}
	return model.Vector{}, nil
}

func vectorOf(v float64) model.Value {
	return model.Vector{&model.Sample{Value: model.SampleValue(v)}}
}

func TestSampleSpacing(t *testing.T) {
	spec := &v1alpha1.TrafficShare{Metric: "traefik_entrypoint_requests_total", Selector: `entrypoint="web"`, Window: "30s"}
	short, long := 4*time.Minute, 32*time.Minute // 8 and 64 windows
	for name, tc := range map[string]struct {
		counts  map[time.Duration]model.Value
		want    time.Duration
		ok      bool
		queries int
	}{
		"scraped every 15s":                         {map[time.Duration]model.Value{short: vectorOf(16)}, 15 * time.Second, true, 1},
		"scraped every 1s":                          {map[time.Duration]model.Value{short: vectorOf(240)}, time.Second, true, 1},
		"scraped every minute: measured over more":  {map[time.Duration]model.Value{short: vectorOf(4), long: vectorOf(32)}, time.Minute, true, 2},
		"once in 10 minutes":                        {map[time.Duration]model.Value{long: vectorOf(3)}, 32 * time.Minute / 3, true, 2},
		"one sample in the longest":                 {map[time.Duration]model.Value{short: vectorOf(1), long: vectorOf(1)}, 0, false, 2},
		"no series old enough":                      {nil, 0, false, 2},
		"as a scalar":                               {map[time.Duration]model.Value{short: &model.Scalar{Value: 24}}, 10 * time.Second, true, 1},
		"several series, odd: the longer one tried": {map[time.Duration]model.Value{short: model.Vector{&model.Sample{Value: 1}, &model.Sample{Value: 2}}}, 0, false, 2},
	} {
		t.Run(name, func(t *testing.T) {
			q := &countQuerier{counts: tc.counts}
			got, ok, err := SampleSpacing(t.Context(), q, spec, time.Time{})
			if err != nil || ok != tc.ok || got != tc.want {
				t.Errorf("SampleSpacing = %v, %v, %v; want %v, %v", got, ok, err, tc.want, tc.ok)
			}
			if len(q.queries) != tc.queries {
				t.Errorf("%d queries, want %d: %q", len(q.queries), tc.queries, q.queries)
			}
			const want = `max(count_over_time(traefik_entrypoint_requests_total{entrypoint="web"}[4m]) and count_over_time(traefik_entrypoint_requests_total{entrypoint="web"}[4m] offset 4m))`
			if q.queries[0] != want {
				t.Errorf("query %q, want %q", q.queries[0], want)
			}
		})
	}
	if got := SpacingLookbacks(2 * time.Second); got[0] != 16*time.Second || got[1] != SpacingInterval {
		t.Errorf("a 2s window is measured over %v, want 16s, then %v", got, SpacingInterval)
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
