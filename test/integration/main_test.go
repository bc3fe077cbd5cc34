// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package integration holds the tests that run on the test bed: a real etcd,
// kube-apiserver, Prometheus and OCM placement controller, started once for the package.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// bed is the test bed shared by the package's tests. Each test works in a namespace
// of its own.
var bed *testbed.Bed

// manager is the traffic-migration manager shared by the package's tests: the real
// binary, run as a process against the hub.
var manager *managerProcess

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
	start := time.Now()
	var err error
	bed, err = testbed.New(ctx, testbed.Options{Prometheus: &testbed.PrometheusOptions{}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the test bed: %v\n", err)
		return 1
	}
	defer bed.Stop()
	if _, err := bed.StartPlacementController(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "start OCM's placement controller: %v\n", err)
		return 1
	}
	if manager, err = startManager(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "start the traffic-migration manager: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "test bed ready in %s: hub %s, Prometheus %s\n", time.Since(start).Round(time.Millisecond), bed.Hub.URL, bed.Prometheus.URL)
	code := m.Run()
	if code != 0 {
		bed.DumpLogs(os.Stderr, 8192)
	}
	return code
}
