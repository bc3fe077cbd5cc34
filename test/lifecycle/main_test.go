// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package lifecycle tests what a platform team does with the add-on over the years, on
// a test bed with nodes: a real OCM hub and klusterlets, the hub and cluster1 with a
// real node each, the chart installed, upgraded and uninstalled with the real helm,
// the add-on enabled by Placement and disabled with the real clusteradm. It upgrades
// from the release that 'make image-upgrade-from' built (its chart, whose CRD came from
// crds/, and its image) while a cluster drains, and checks what each uninstall step
// leaves against the list in docs/upgrading-and-uninstalling.md.
package lifecycle

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The clusters of the bed: cluster1 has a node, so the agent runs there as a pod;
// cluster2 has none and only ever drains.
const (
	cluster1 = "cluster1"
	cluster2 = "cluster2"
	hubName  = "hub"
)

// current is this tree's release as make release packaged it (its chart's .tgz and
// its image's archive), image its image, previous the release the upgrade starts from;
// once pushed to the bed's registry, their charts and images are the registry's.
var (
	current  testbed.Release
	image    string
	previous testbed.Release
)

// bed is the test bed shared by the package's tests.
var bed *testbed.Bed

// hub is the hub's API as the tests use it.
var hub *fixture.HubClients

// spoke1 is cluster1's API.
var spoke1 kubernetes.Interface

func TestMain(m *testing.M) {
	os.Exit(testbed.RunOCMSuite(m, suite))
}

// suite is the package's set-up: cluster1 and the hub have nodes, which pull this
// release's image and the previous one's from the bed's registry (TestLifecycle pushes
// them there first, as the README tells users).
func suite() (testbed.OCMSuite, error) {
	var err error
	if current, err = testbed.ThisRelease(); err != nil {
		return testbed.OCMSuite{}, err
	}
	image = current.Image
	if previous, err = testbed.UpgradeFrom(); err != nil {
		return testbed.OCMSuite{}, err
	}
	return testbed.OCMSuite{
		Options: testbed.Options{
			Spokes:     []string{cluster1, cluster2},
			Prometheus: &testbed.PrometheusOptions{},
			Nodes: &testbed.NodeOptions{
				Clusters: []string{hubName, cluster1},
			},
			Registry: true,
		},
		Timeout: 10 * time.Minute,
		Ready: func(b *testbed.Bed) error {
			bed = b
			var spokes map[string]kubernetes.Interface
			var err error
			hub, spokes, err = fixture.BedClients(b)
			spoke1 = spokes[cluster1]
			return err
		},
	}, nil
}

// pollTimeout bounds every wait for the OCM programs, helm's release or the manager
// to act.
const pollTimeout = 2 * time.Minute

// eventually polls check until it returns nil, and fails the test with check's last
// error if that takes longer than pollTimeout.
func eventually(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	testbed.Eventually(t, pollTimeout, what, check)
}
