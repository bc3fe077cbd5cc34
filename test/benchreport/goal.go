// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Goal is a bound a figure must meet, as a report writes it: "< 256 MiB", "≤ 1.2",
// "≤ 3 s (floor + 1 s)" (what follows the number is its unit and an explanation).
type Goal struct {
	// Op is one of <, ≤, > and ≥.
	Op    string
	Bound float64
}

// ParseGoal reads a goal; ok is false for an empty goal or one that is not a bound
// (a goal in words), which nothing checks.
func ParseGoal(s string) (g Goal, ok bool) {
	s = strings.TrimSpace(s)
	for _, op := range []struct{ text, op string }{{"<=", "≤"}, {">=", "≥"}, {"≤", "≤"}, {"≥", "≥"}, {"<", "<"}, {">", ">"}} {
		rest, found := strings.CutPrefix(s, op.text)
		if !found {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return Goal{}, false
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(fields[0], ",", ""), 64)
		if err != nil {
			return Goal{}, false
		}
		return Goal{Op: op.op, Bound: v}, true
	}
	return Goal{}, false
}

// Margin is how far v is inside the bound: positive when v meets the goal, negative
// when it misses it (zero at the bound meets ≤ and ≥, and misses < and >).
func (g Goal) Margin(v float64) float64 {
	if g.Op == "<" || g.Op == "≤" {
		return g.Bound - v
	}
	return v - g.Bound
}

// Met reports whether v meets the goal.
func (g Goal) Met(v float64) bool {
	m := g.Margin(v)
	if math.IsNaN(m) {
		return false
	}
	if g.Op == "≤" || g.Op == "≥" {
		return m >= 0
	}
	return m > 0
}

// Verdict says whether the result meets its goal and by how much: "met, 0.4 s to
// spare" or "missed by 12 MiB"; "" when its goal is not a bound.
func (r Result) Verdict() string {
	g, ok := ParseGoal(r.Goal)
	if !ok {
		return ""
	}
	if r.Unmeasured {
		return "missed: not measured"
	}
	m := g.Margin(r.Value)
	unit := ""
	if r.Unit != "" {
		unit = " " + r.Unit
	}
	if g.Met(r.Value) {
		return fmt.Sprintf("met, %s%s to spare", Format(m), unit)
	}
	return fmt.Sprintf("missed by %s%s", Format(math.Abs(m)), unit)
}

// Missed reports whether the result has a goal that is a bound and misses it.
func (r Result) Missed() bool {
	g, ok := ParseGoal(r.Goal)
	return ok && (r.Unmeasured || !g.Met(r.Value))
}
