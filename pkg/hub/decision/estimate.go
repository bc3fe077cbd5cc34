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
// the policy's schedule at which the trend of its history (fitTrend) meets the
// threshold, plus the passing checks in a
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
	floor := pl.policy.MinDrainEnd(&d.row, pl.followDNS())
	if floor.IsZero() {
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
		at, ok := fitTrend(ts, vs).crossing(c.Threshold, falling) // seconds after first
		span := ts[len(ts)-1]
		if !ok || at > ts[len(ts)-1]+10*max(span, interval.Seconds()) {
			return nil
		}
		crossing := first.Add(time.Duration(at * float64(time.Second)))
		// The first scheduled check at or after the crossing, and never the one done.
		k := max(int64(math.Ceil(crossing.Sub(last).Seconds()/interval.Seconds())), 1)
		firstPass = last.Add(time.Duration(k) * interval)
		passesLeft--
	}
	at := firstPass.Add(time.Duration(max(passesLeft, 0)) * interval)
	if at.Before(floor) {
		at = floor
	}
	t := metav1.NewTime(at.Truncate(time.Second).UTC())
	return &t
}

// trend is a fitted course of a check's value over time: a line v = a + b·t, or,
// when exponential, v = e^(a + b·t).
type trend struct {
	a, b        float64
	exponential bool
}

// crossing is when, in seconds on the fit's clock, the trend reaches threshold moving
// the way the expectation wants (falling or rising); ok is false when it never does.
func (tr trend) crossing(threshold float64, falling bool) (float64, bool) {
	if (falling && tr.b >= 0) || (!falling && tr.b <= 0) {
		return 0, false
	}
	if !tr.exponential {
		return (threshold - tr.a) / tr.b, true
	}
	if threshold <= 0 {
		return 0, false // an exponential decay never reaches zero
	}
	return (math.Log(threshold) - tr.a) / tr.b, true
}

// value is the trend's value at t.
func (tr trend) value(t float64) float64 {
	if tr.exponential {
		return math.Exp(tr.a + tr.b*t)
	}
	return tr.a + tr.b*t
}

// fitTrend fits the recent part of a history (its last half, and at least
// minEstimatePoints checks): the drains that DNS makes are convex, a fast drop as
// most clients follow the new records, then a tail of the slow ones, so the early
// drop says little about the tail. Of a straight line and an exponential decay (a
// straight line through the logarithms, when every value is positive), it keeps the
// one whose values lie closer to the checks': a share that falls by the same points
// each check is a line, one that falls by the same fraction a decay.
func fitTrend(ts, vs []float64) trend {
	from := max(len(ts)-max(minEstimatePoints, (len(ts)+1)/2), 0)
	ts, vs = ts[from:], vs[from:]
	b, a := leastSquares(ts, vs)
	best := trend{a: a, b: b}
	logs := make([]float64, len(vs))
	for i, v := range vs {
		if v <= 0 {
			return best
		}
		logs[i] = math.Log(v)
	}
	b, a = leastSquares(ts, logs)
	if decay := (trend{a: a, b: b, exponential: true}); squaredError(decay, ts, vs) < squaredError(best, ts, vs) {
		return decay
	}
	return best
}

// squaredError is the sum of the squared differences between the trend and the
// values.
func squaredError(tr trend, ts, vs []float64) float64 {
	var sum float64
	for i := range ts {
		d := tr.value(ts[i]) - vs[i]
		sum += d * d
	}
	return sum
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
