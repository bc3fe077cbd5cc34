// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package nodes

import (
	"os"
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestMain skips the package, saying how to run it, when the test bed's programs are
// not configured (plain 'go test ./...' instead of 'make test').
func TestMain(m *testing.M) {
	os.Exit(testbed.RunIfConfigured(m))
}
