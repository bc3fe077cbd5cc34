// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"math"
	"testing"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// estimateError is how far the removal estimate may be from the real removal when the
// share falls steadily: the checks run every second over a 4s rate window, so the
// share the checks read lags the traffic by a few seconds.
const estimateError = 10 * time.Second

// TestRemovalEstimate: on the bed's real Prometheus, a share that falls steadily gets
// a removal estimate close to when the cluster really leaves; a share that stays flat
// gets none ("unknown").
func TestRemovalEstimate(t *testing.T) {
	t.Parallel()
	t.Run("falling", func(t *testing.T) {
		t.Parallel()
		m := newMigration(t, "estimate-falling")
		f := m.f
		p := m.start(t, nil)

		// cluster1's share falls from 60% by 2 points a second, after the move.
		m.traffic.SetByValue(map[string]float64{m.c1: 60, m.c2: 40})
		m.moveToC2(t)
		moved := time.Now()
		stop := make(chan struct{})
		ramped := make(chan struct{})
		go func() {
			defer close(ramped)
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				share := math.Max(0, 60-2*time.Since(moved).Seconds())
				m.traffic.SetByValue(map[string]float64{m.c1: share, m.c2: 100 - share})
			}
		}()
		t.Cleanup(func() { close(stop); <-ramped })

		// Once the history holds only the steady fall (the rate window has long taken
		// in the move), the estimate is read.
		got := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.DrainStartTime != nil && time.Since(r.DrainStartTime.Time) > 16*time.Second &&
				r.EstimatedRemovalTime != nil
		})
		estimate := fixture.PolicyRow(got, m.c1).EstimatedRemovalTime.Time
		got = f.waitForPolicy(t, m.ns, p.Name, 90*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved
		})
		removed := fixture.PolicyRow(got, m.c1).RemovalTime.Time
		off := removed.Sub(estimate)
		t.Logf("removed %s after the move; estimated %s before it was (%s off)", removed.Sub(moved).Round(time.Second), removed.Sub(estimate).Round(time.Second), off)
		if off.Abs() > estimateError {
			t.Errorf("the estimate %s was %s off the removal at %s, more than %s:\n%s", estimate, off, removed, estimateError, fixture.PolicyStatus(got))
		}
	})
	t.Run("flat", func(t *testing.T) {
		t.Parallel()
		m := newMigration(t, "estimate-flat")
		f := m.f
		p := m.start(t, nil)
		m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
		m.moveToC2(t)
		// Past the move in the rate window, with a history of a flat share: no estimate.
		got := f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
			r := fixture.PolicyRow(p, m.c1)
			return r != nil && r.DrainStartTime != nil && time.Since(r.DrainStartTime.Time) > 16*time.Second &&
				len(r.History) == trafficv1alpha1.MaxCheckHistory
		})
		if r := fixture.PolicyRow(got, m.c1); r.EstimatedRemovalTime != nil {
			t.Errorf("a flat share of 50%% got an estimate:\n%s", fixture.PolicyStatus(got))
		}
	})
}
