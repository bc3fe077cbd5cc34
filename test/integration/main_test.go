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

// TestMain starts the package's bed (see testbed.RunPlacementSuite) and, on it, the
// manager the tests share.
func TestMain(m *testing.M) {
	start := time.Now()
	os.Exit(testbed.RunPlacementSuite(m, func(ctx context.Context, b *testbed.Bed, _ *testbed.Process) (err error) {
		bed = b
		if manager, err = startManager(ctx); err != nil {
			return fmt.Errorf("start the traffic-migration manager: %w", err)
		}
		fmt.Fprintf(os.Stderr, "test bed ready in %s: hub %s, Prometheus %s\n", time.Since(start).Round(time.Millisecond), bed.Hub.URL, bed.Prometheus.URL)
		return nil
	}))
}
