// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// MinSamplesPerWindow is how many samples of each series a trafficShare window must
// hold: with fewer, rate() over the window has one or two samples to work with, and
// a share jumps, or vanishes when a sample comes late (remote write, a slow scrape).
const MinSamplesPerWindow = 4

// SpacingInterval is how often a policy's sample spacing is measured again: the
// pipeline that feeds Prometheus rarely changes.
const SpacingInterval = 10 * time.Minute

// SpacingLookbacks are the ranges the spacing of a window's series is measured over,
// the shorter first: 8 windows, which hold 8 samples or more when a sample comes at
// least once per window; else a longer range, to measure a spacing longer than that.
func SpacingLookbacks(window time.Duration) []time.Duration {
	return []time.Duration{8 * window, max(64*window, SpacingInterval)}
}

// SampleSpacingQuery is the query that measures the spacing of trafficShare's series
// over lookback: the most samples one series holds in it, of the series that already
// had samples a lookback earlier. A series younger than the lookback would look
// sparser than its pipeline is; the densest series counts, so that one that stopped
// reporting does not either.
func SampleSpacingQuery(spec *v1alpha1.TrafficShare, lookback time.Duration) string {
	ts := spec.WithDefaults()
	series := ts.Metric
	if selector := strings.TrimSpace(ts.Selector); selector != "" {
		series += "{" + selector + "}"
	}
	l := model.Duration(lookback)
	return fmt.Sprintf("max(count_over_time(%s[%s]) and count_over_time(%s[%s] offset %s))", series, l, series, l, l)
}

// SampleSpacing measures, in Prometheus, how far apart the samples of trafficShare's
// series are: a lookback over the most samples one series holds in it, over the first
// of SpacingLookbacks that holds at least 2 × MinSamplesPerWindow of them, or else at
// least 2 in the longest. ok is false when nothing could be measured: no series is old
// enough, or its samples are too sparse even so (no warning then).
func SampleSpacing(ctx context.Context, q Querier, spec *v1alpha1.TrafficShare, now time.Time) (spacing time.Duration, ok bool, err error) {
	window, err := model.ParseDuration(spec.WithDefaults().Window)
	if err != nil {
		return 0, false, fmt.Errorf("trafficShare.window %q is not a Prometheus duration: %w", spec.WithDefaults().Window, err)
	}
	lookbacks := SpacingLookbacks(time.Duration(window))
	for i, lookback := range lookbacks {
		value, err := q.Query(ctx, SampleSpacingQuery(spec, lookback), now)
		if err != nil {
			return 0, false, err
		}
		var ev Check
		count, read := readValue(value, &ev)
		if !read || math.IsNaN(float64(count)) {
			continue
		}
		enough := 2 * MinSamplesPerWindow
		if i == len(lookbacks)-1 {
			enough = 2
		}
		if int(count) >= enough {
			return time.Duration(float64(lookback) / float64(count)), true, nil
		}
	}
	return 0, false, nil
}

// WindowTooShort says, for a trafficShare window and the spacing of its series'
// samples, why the window is too short and what to set instead; "" when it holds
// about MinSamplesPerWindow samples or more.
func WindowTooShort(window string, spacing time.Duration) string {
	w, err := model.ParseDuration(window)
	if err != nil || spacing <= 0 {
		return ""
	}
	samples := math.Round(float64(w) / float64(spacing))
	if samples >= MinSamplesPerWindow {
		return ""
	}
	spacing = spacing.Round(time.Second)
	want := model.Duration(max(MinSamplesPerWindow*spacing, time.Second))
	return fmt.Sprintf("trafficShare.window %s holds about %.0f samples of each series, which Prometheus has every %s: shares jump or vanish between checks. "+
		"Set the window to at least %s (%d × the sample spacing); a drain then ends up to one window after its traffic does",
		window, samples, model.Duration(spacing), want, MinSamplesPerWindow)
}
