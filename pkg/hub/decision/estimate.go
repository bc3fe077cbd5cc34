// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"math"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// minEstimatePoints is how many checks with a value the trend needs.
const minEstimatePoints = 3

// estimateRemoval is when d's removal gate is expected to pass: the first check on
// the policy's schedule at which the trend of its history (a least-squares line
// through the checks with a value) meets the threshold, plus the passing checks in a
// row that still follow, and never before its minimum drain (with the TTL when DNS is
// followed) ends. It is nil, "unknown", when the history holds fewer than three
// values, when the expectation has no direction (== or !=, or none that parses), when
// the trend does not move toward the threshold, when DNS still publishes the cluster,
// when the drain is stalled (its traffic does not follow DNS, so no trend says when
// it ends), or when the crossing is further away than the checks in the history span
// again ten times over: a guess that far out says nothing.
//
// It reads only the row and the policy, which change with a check or a phase, so the
// estimate is written with the check's own status write and never makes one.
func (pl *plan) estimateRemoval(d *drainRow) *metav1.Time {
	c := pl.policy.Expectation
	if c == nil || d.row.LastEvaluationTime == nil || pl.stalled(d) {
		return nil
	}
	falling := c.Operator == "<" || c.Operator == "<="
	if !falling && c.Operator != ">" && c.Operator != ">=" {
		return nil
	}
	clock := pl.drainClock(d)
	if clock == nil {
		return nil
	}
	var ts, vs []float64
	var first time.Time
	for _, r := range d.row.History {
		v, err := strconv.ParseFloat(r.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if first.IsZero() {
			first = r.Time.Time
		}
		ts = append(ts, r.Time.Sub(first).Seconds())
		vs = append(vs, v)
	}
	if len(vs) < minEstimatePoints {
		return nil
	}
	last := d.row.LastEvaluationTime.Time
	interval := pl.policy.Interval
	passesLeft := pl.policy.ConsecutiveSuccesses
	var firstPass time.Time
	if c.Met(vs[len(vs)-1]) {
		// Met already: the run goes on from the last check.
		passesLeft -= max(d.row.ConsecutiveSuccesses, 1)
		firstPass = last
	} else {
		slope, intercept := leastSquares(ts, vs)
		if (falling && slope >= 0) || (!falling && slope <= 0) {
			return nil
		}
		at := (c.Threshold - intercept) / slope // seconds after first
		span := ts[len(ts)-1]
		if at > ts[len(ts)-1]+10*max(span, interval.Seconds()) {
			return nil
		}
		crossing := first.Add(time.Duration(at * float64(time.Second)))
		// The first scheduled check at or after the crossing, and never the one done.
		k := max(int64(math.Ceil(crossing.Sub(last).Seconds()/interval.Seconds())), 1)
		firstPass = last.Add(time.Duration(k) * interval)
		passesLeft--
	}
	at := firstPass.Add(time.Duration(max(passesLeft, 0)) * interval)
	if floor := clock.Add(pl.policy.minDrain(pl.followDNS())); at.Before(floor) {
		at = floor
	}
	t := metav1.NewTime(at.Truncate(time.Second).UTC())
	return &t
}

// leastSquares fits v = intercept + slope·t.
func leastSquares(ts, vs []float64) (slope, intercept float64) {
	n := float64(len(ts))
	var st, sv, stt, stv float64
	for i := range ts {
		st += ts[i]
		sv += vs[i]
		stt += ts[i] * ts[i]
		stv += ts[i] * vs[i]
	}
	den := n*stt - st*st
	if den == 0 {
		return 0, sv / n
	}
	slope = (n*stv - st*sv) / den
	return slope, (sv - slope*st) / n
}
