// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package bench measures the manager on the test bed: a real etcd, kube-apiserver,
// Prometheus, OCM placement controller and the manager binary. Benchmarks report
// numbers and never fail on a slow machine; they fail only when the harness breaks.
//
// By default (make test-integration) TestBench runs a small, fast case of each
// benchmark so that the harness cannot rot. With TRAFFIC_MIGRATION_BENCH=full
// (make bench) it runs the full sizes and writes report.md and results.json into
// bench/results/<date>-<commit>/ (benchreport.RunDir).
package bench

import (
	"context"
	"os"
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// bed is the test bed shared by the package's benchmarks.
var (
	bed *testbed.Bed
	// placementController is OCM's placement controller, which caches the same
	// ManagedClusters as the manager: the fleet benchmark compares their costs.
	placementController *testbed.Process
)

func TestMain(m *testing.M) {
	os.Exit(testbed.RunPlacementSuite(m, func(_ context.Context, b *testbed.Bed, placement *testbed.Process) error {
		bed, placementController = b, placement
		return nil
	}))
}
