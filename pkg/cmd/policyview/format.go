// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// The formatting rules of the views, one per idea. Every command that shows these
// facts to a person writes them with these functions.

// None is what an empty cell of a text table shows.
const None = "-"

// OrNone shows an empty value as None.
func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// Duration writes a configured duration (an interval, a minimum or maximum drain, a
// TTL) exactly, as a policy's fields are usually written: "2m", "1h30m", not "2m0s".
// Elapsed time is written by Since, which rounds.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Since is the time from t to now as kubectl writes ages: "3m10s", "25h", "3d";
// "<unknown>" for a zero t.
func Since(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// Until says when something is due, a check or an estimated removal: "in 12s", or
// "due" once its time has come.
func Until(at, now time.Time) string {
	if !at.After(now) {
		return "due"
	}
	return "in " + duration.HumanDuration(at.Sub(now))
}

// Value shortens a value as Prometheus formats it to at most six significant digits;
// anything that is not a number is shown as it is.
func Value(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return Number(f)
}

// Number writes a value with at most six significant digits.
func Number(f float64) string {
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// CheckValue is what a check read: its value, "error" or "no data" when it read
// none, and "" when nothing is known.
func CheckValue(value string, result trafficv1alpha1.EvaluationResult) string {
	switch {
	case value != "":
		return Value(value)
	case result == trafficv1alpha1.EvaluationError:
		return "error"
	case result == trafficv1alpha1.EvaluationNoData:
		return "no data"
	}
	return ""
}

// Successes shows a run of passed checks against the run a removal needs: "2/3", and
// "3/3 met" once the run is long enough, however long it has grown since (never
// "19/3"): the removal waits for something else then, and the row's message says what.
func Successes(run, needed int32) string {
	if needed > 0 && run >= needed {
		return fmt.Sprintf("%d/%d met", needed, needed)
	}
	return fmt.Sprintf("%d/%d", run, needed)
}

// OneLine collapses a multi-line text, a query or a message, into one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
