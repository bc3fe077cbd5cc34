// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"flag"
	"testing"
)

// TestRunSelects: a suite's bed starts only when go test's -run may select one of its
// tests, by the pattern's first element.
func TestRunSelects(t *testing.T) {
	f := flag.Lookup("test.run")
	old := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(old) })
	for pattern, want := range map[string]bool{
		"":                          true,
		"^TestStrategies$":          true,
		"Strat":                     true,
		"^TestBench$/^Neighbours$":  false,
		"^TestBench$|^TestStrat":    true,
		"^TestStrategies$/^tm1dns$": true,
	} {
		if err := f.Value.Set(pattern); err != nil {
			t.Fatal(err)
		}
		if got := runSelects([]string{"TestStrategies"}); got != want {
			t.Errorf("-run %q: selects %t, want %t", pattern, got, want)
		}
	}
}
