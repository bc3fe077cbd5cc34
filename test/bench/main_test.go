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
	"fmt"
	"os"
	"testing"
	"time"

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
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if msg := testbed.Unconfigured(); msg != "" {
		fmt.Println(msg)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	bed, err = testbed.New(ctx, testbed.Options{Prometheus: &testbed.PrometheusOptions{}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the test bed: %v\n", err)
		return 1
	}
	defer bed.Stop()
	if placementController, err = bed.StartPlacementController(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "start OCM's placement controller: %v\n", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		bed.DumpLogs(os.Stderr, 8192)
	}
	return code
}
