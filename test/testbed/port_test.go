// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import "testing"

// TestFreePortBelowEphemeralRange checks that the test bed's ports lie outside the
// range the kernel gives outgoing connections, are free, and are never handed out
// twice.
func TestFreePortBelowEphemeralRange(t *testing.T) {
	low, high := portsBelowEphemeral()
	seen := map[int]bool{}
	for range 50 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < low || port >= high {
			t.Fatalf("freePort gave %d, outside [%d, %d)", port, low, high)
		}
		if seen[port] {
			t.Fatalf("freePort gave %d twice", port)
		}
		seen[port] = true
		if !portFree(port) {
			t.Fatalf("freePort gave %d, which is taken", port)
		}
	}
}
