// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package shortlist

import "testing"

func TestJoin(t *testing.T) {
	tests := map[string]struct {
		items []string
		limit int
		want  string
	}{
		"none":         {limit: 3, want: ""},
		"under":        {items: []string{"a", "b"}, limit: 3, want: "a, b"},
		"at the limit": {items: []string{"a", "b", "c"}, limit: 3, want: "a, b, c"},
		"over":         {items: []string{"a", "b", "c", "d", "e"}, limit: 2, want: "a, b and 3 more"},
		"zero limit":   {items: []string{"a", "b"}, limit: 0, want: "a and 1 more"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Join(tc.items, tc.limit); got != tc.want {
				t.Errorf("Join(%q, %d) = %q, want %q", tc.items, tc.limit, got, tc.want)
			}
		})
	}
}
