// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package shortlist writes lists for people to read in messages, conditions and
// events, bounded so that a fleet's worth of names cannot make one huge: "a, b, c and
// 7 more".
package shortlist

import (
	"fmt"
	"strings"
)

// Join joins the first limit items with ", " and says how many more there are:
// Join([a b c d], 2) is "a, b and 2 more". It lists at least one item.
func Join(items []string, limit int) string {
	limit = min(len(items), max(limit, 1))
	s := strings.Join(items[:limit], ", ")
	if more := len(items) - limit; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
