// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package strategies measures what each way of moving a Gateway costs its users, on
// real parts: a real OCM hub (placement controller, work manager for
// ManifestWorkReplicaSets, add-on manager) and two klusterlets joined with clusteradm;
// a node per cluster (kubelet, containerd, kube-proxy) on which Traefik programs the
// Gateways and serves every request, the backends answer, and a Prometheus agent
// remote-writes Traefik's counters to the hub's Prometheus; traffic-migration
// installed from manifests/ and enabled with clusteradm, its agents reporting; CoreDNS
// written by external-dns's engine from DNSEndpoints; and the clients of package
// clients, which resolve each Gateway's name through CoreDNS and count every request.
//
// By default (make test) TestStrategies runs a small case; with
// TRAFFIC_MIGRATION_BENCH=full (make bench) it runs the full size and writes
// strategies.md and strategies.json into bench/results/<date>-<commit>/.
package strategies

import (
	"os"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The spokes, and the hub's name on the test bed.
const (
	cluster1 = "cluster1"
	cluster2 = "cluster2"
	hubName  = "hub"
)

// bed is the test bed of the package.
var bed *testbed.Bed

func TestMain(m *testing.M) {
	os.Exit(testbed.RunOCMSuite(m, suite))
}

// suite is the package's set-up: the hub and both spokes with a node each, the hub's
// Prometheus receiving the spokes' metrics agents' writes, OCM's work manager.
func suite() (testbed.OCMSuite, error) {
	_, opts, err := testbed.GatewayFleetOptions(hubName, cluster1, cluster2)
	if err != nil {
		return testbed.OCMSuite{}, err
	}
	return testbed.OCMSuite{
		Options:     opts,
		WorkManager: true,
		Timeout:     15 * time.Minute,
		Tests:       []string{"TestStrategies"},
		Ready: func(b *testbed.Bed) error {
			bed = b
			return nil
		},
	}, nil
}
