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

// spacingLookback is how far back the spacing is measured: long enough for several
// samples of a series scraped every minute, and for many of one scraped every second.
func spacingLookback(window time.Duration) time.Duration {
	return max(8*window, 5*time.Minute)
}

// SampleSpacingQuery is the query that measures the spacing of trafficShare's
// series: the most samples one series holds in the lookback. The densest series
// counts, so that a series that began lately, or a cluster that stopped reporting,
// does not make the pipeline look slower than it is.
func SampleSpacingQuery(spec *v1alpha1.TrafficShare) (query string, lookback time.Duration, err error) {
	ts := spec.WithDefaults()
	window, err := model.ParseDuration(ts.Window)
	if err != nil {
		return "", 0, fmt.Errorf("trafficShare.window %q is not a Prometheus duration: %w", ts.Window, err)
	}
	lookback = spacingLookback(time.Duration(window))
	series := ts.Metric
	if selector := strings.TrimSpace(ts.Selector); selector != "" {
		series += "{" + selector + "}"
	}
	return fmt.Sprintf("max(count_over_time(%s[%s]))", series, model.Duration(lookback)), lookback, nil
}

// SampleSpacing measures, in Prometheus, how far apart the samples of trafficShare's
// series are: the lookback over the most samples one series holds in it. ok is false
// when no series has two samples in it (nothing to measure; no warning).
func SampleSpacing(ctx context.Context, q Querier, spec *v1alpha1.TrafficShare, now time.Time) (spacing time.Duration, ok bool, err error) {
	query, lookback, err := SampleSpacingQuery(spec)
	if err != nil {
		return 0, false, err
	}
	value, err := q.Query(ctx, query, now)
	if err != nil {
		return 0, false, err
	}
	var ev Evaluation
	count, read := readValue(value, &ev)
	if !read || math.IsNaN(float64(count)) || count < 2 {
		return 0, false, nil
	}
	return time.Duration(float64(lookback) / float64(count)), true, nil
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
