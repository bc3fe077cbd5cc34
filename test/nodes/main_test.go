// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package nodes

import (
	"fmt"
	"os"
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestMain skips the package, saying how to run it, when the test bed's programs are
// not configured (plain 'go test ./...' instead of 'make test').
func TestMain(m *testing.M) {
	if msg := testbed.Unconfigured(); msg != "" {
		fmt.Println(msg)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
