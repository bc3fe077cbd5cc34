// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package strategies

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/benchreport"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// estimateFractions are the points of a drain, from its start to its removal, at which
// the benchmark reads the removal estimate.
var estimateFractions = []float64{0.25, 0.5, 0.75}

// estimateEvery is how often the estimate recorder reads the policies: well under the
// checks' interval, so that each estimate the manager writes is seen.
const estimateEvery = 250 * time.Millisecond

// estimateSample is cluster1's row of a policy as read at one moment: its estimate
// (zero: none, "unknown"), and its drain's start and removal once known.
type estimateSample struct {
	at, estimate, drainStart, removal time.Time
}

// estimates records, for each traffic-migration row, cluster1's estimatedRemovalTime as
// it changes through the drain, by reading the policies every estimateEvery.
type estimates struct {
	mu      sync.Mutex
	samples map[string][]estimateSample
	stop    func()
	done    sync.WaitGroup
}

// recordEstimates starts reading the policies of the rows that follow a proxy.
func recordEstimates(ctx context.Context, h *fixture.Fleet, rs []*row) *estimates {
	ctx, cancel := context.WithCancel(ctx)
	e := &estimates{samples: map[string][]estimateSample{}, stop: cancel}
	names := map[string]bool{}
	for _, r := range rs {
		if r.follows == followsProxy {
			names[r.name] = true
		}
	}
	e.done.Go(func() {
		tick := time.NewTicker(estimateEvery)
		defer tick.Stop()
		for {
			list, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).List(ctx, metav1.ListOptions{})
			if err == nil {
				now := time.Now()
				e.mu.Lock()
				for i := range list.Items {
					p := &list.Items[i]
					if !names[p.Name] {
						continue
					}
					if row := fixture.PolicyRow(p, cluster1); row != nil {
						e.samples[p.Name] = append(e.samples[p.Name], sampleOf(now, row))
					}
				}
				e.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return e
}

func sampleOf(now time.Time, row *trafficv1alpha1.ClusterStatus) estimateSample {
	s := estimateSample{at: now}
	if row.EstimatedRemovalTime != nil {
		s.estimate = row.EstimatedRemovalTime.Time
	}
	if row.DrainStartTime != nil {
		s.drainStart = row.DrainStartTime.Time
	}
	if row.RemovalTime != nil {
		s.removal = row.RemovalTime.Time
	}
	return s
}

// halt stops the recorder and waits for it.
func (e *estimates) halt() {
	e.stop()
	e.done.Wait()
}

// estimateErrors is, for one drain, the estimate's signed error at each of
// estimateFractions: the estimate as it stood then minus the real removal time, in
// seconds (positive: the estimate said later than it happened); ok false where there
// was no estimate ("unknown"). drain is the drain's length; measured is false when
// the drain's start or removal was not seen.
func errorsOf(samples []estimateSample) (drain time.Duration, errs []float64, ok []bool, measured bool) {
	var start, removal time.Time
	for _, s := range samples {
		if start.IsZero() && !s.drainStart.IsZero() {
			start = s.drainStart
		}
		if removal.IsZero() && !s.removal.IsZero() {
			removal = s.removal
		}
	}
	if start.IsZero() || removal.IsZero() || !removal.After(start) {
		return 0, nil, nil, false
	}
	drain = removal.Sub(start)
	errs, ok = make([]float64, len(estimateFractions)), make([]bool, len(estimateFractions))
	for i, f := range estimateFractions {
		point := start.Add(time.Duration(f * float64(drain)))
		// The last read at or before the point: what a user looking then saw.
		var seen *estimateSample
		for j := range samples {
			if samples[j].at.After(point) {
				break
			}
			seen = &samples[j]
		}
		if seen != nil && !seen.estimate.IsZero() {
			errs[i], ok[i] = seen.estimate.Sub(removal).Seconds(), true
		}
	}
	return drain, errs, ok, true
}

// reportEstimates adds the estimate's signed errors of every traffic-migration drain to
// the report, and their table.
func reportEstimates(rep *benchreport.Report, rs []*row, e *estimates) benchreport.Table {
	const b = "1. Removal estimate"
	tbl := benchreport.Table{
		Title: "The removal estimate during each traffic-migration drain",
		Intro: "cluster1's estimatedRemovalTime as the policy's status said it at 25%, 50% and 75% of the drain (from drainStartTime to removalTime), " +
			fmt.Sprintf("read every %s: its signed error, the estimate minus the real removal time (positive: it said later than it happened; ", estimateEvery) +
			"unknown: no estimate then).",
		Header: []string{"strategy", "drain (s)", "error at 25% (s)", "error at 50% (s)", "error at 75% (s)"},
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range rs {
		if r.follows != followsProxy {
			continue
		}
		drain, errs, ok, measured := errorsOf(e.samples[r.name])
		if !measured {
			tbl.Rows = append(tbl.Rows, []string{r.name, "not seen", "", "", ""})
			continue
		}
		rep.Add(b, r.name, "drain from drainStartTime to removalTime", drain.Seconds(), "s", "")
		cells := []string{r.name, fmt.Sprintf("%.1f", drain.Seconds())}
		for i, f := range estimateFractions {
			if !ok[i] {
				cells = append(cells, "unknown")
				continue
			}
			rep.Add(b, r.name, fmt.Sprintf("estimate's signed error at %.0f%% of the drain", 100*f), errs[i], "s", "")
			cells = append(cells, fmt.Sprintf("%+.1f", errs[i]))
		}
		tbl.Rows = append(tbl.Rows, cells)
	}
	tbl.Intro = strings.TrimSpace(tbl.Intro)
	rep.Tables = append(rep.Tables, tbl)
	return tbl
}
