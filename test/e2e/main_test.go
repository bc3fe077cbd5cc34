// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package e2e holds the end-to-end tests: a real OCM hub (registration controller,
// addon manager, placement controller, the add-on conversion webhook,
// kube-controller-manager signing CSRs, the work manager for ManifestWorkReplicaSets)
// and real klusterlets (registration and work agents) on spoke kube-apiservers, joined
// with the real clusteradm, and a real Prometheus, started once for the package as
// local processes of the test bed. The hub and each spoke have a real node (kubelet,
// containerd, kube-proxy), on which traffic-migration runs as pods from the image that
// 'make image' built: the manager installed with the real helm, the agents deployed by
// OCM's add-on framework. Each spoke's Gateways are programmed by a real Traefik, a pod
// on its node, and route to a backend pod there.
package e2e

import (
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The spokes of the tests, joined to the hub before any test runs, and the hub's name
// on the test bed.
const (
	cluster1 = "cluster1"
	cluster2 = "cluster2"
	hubName  = "hub"
)

// image is the traffic-migration image that 'make image' built, as the nodes know it
// ($TESTBED_IMAGE); the nodes import it from $TESTBED_IMAGES_DIR/traffic-migration.tar.
var image string

// bed is the test bed shared by the package's tests.
var bed *testbed.Bed

// hub is the hub's API as the tests use it.
var hub *fixture.HubClients

// spokes are the spokes' APIs by cluster name.
var spokes map[string]kubernetes.Interface

func TestMain(m *testing.M) {
	os.Exit(testbed.RunOCMSuite(m, suite))
}

// suite is the package's set-up. The hub's Prometheus scrapes nothing: the spokes'
// metrics agents remote-write to it. The spokes' nodes run Traefik, the Gateways'
// backends (the test image in backend mode) and the metrics agents (Prometheus in
// agent mode). The chart installs the policy CRD, as on a user's hub.
func suite() (testbed.OCMSuite, error) {
	var opts testbed.Options
	var err error
	if image, opts, err = testbed.GatewayFleetOptions(hubName, cluster1, cluster2); err != nil {
		return testbed.OCMSuite{}, err
	}
	opts.ChartInstallsCRD = true
	return testbed.OCMSuite{
		Options:     opts,
		WorkManager: true,
		Timeout:     15 * time.Minute,
		Ready: func(b *testbed.Bed) (err error) {
			bed = b
			hub, spokes, err = fixture.BedClients(b)
			return err
		},
	}, nil
}
