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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"

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
var hub struct {
	kube    kubernetes.Interface
	cluster clusterclient.Interface
	work    workclient.Interface
	addon   addonclient.Interface
}

// spokes are the spokes' APIs by cluster name.
var spokes = map[string]kubernetes.Interface{}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	if msg := testbed.Unconfigured(); msg != "" {
		fmt.Println(msg)
		return 0
	}
	image = os.Getenv(testbed.ImageEnv)
	imagesDir := os.Getenv(testbed.ImagesDirEnv)
	if image == "" || imagesDir == "" {
		fmt.Fprintf(os.Stderr, "%s and %s are not set: run the tests through 'make test-e2e', which builds the image ('make image')\n", testbed.ImageEnv, testbed.ImagesDirEnv)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	_, traefikArchive, err := testbed.TraefikImageArchive()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v: run the tests through 'make test-e2e'\n", err)
		return 1
	}
	// The hub's Prometheus scrapes nothing: the spokes' metrics agents remote-write to
	// it. The spokes' nodes run Traefik, the Gateways' backends (the test image in
	// backend mode) and the metrics agents (Prometheus in agent mode).
	// The chart installs the policy CRD, as on a user's hub.
	bed, err = testbed.New(ctx, testbed.Options{
		Spokes:           []string{cluster1, cluster2},
		ChartInstallsCRD: true,
		Prometheus:       &testbed.PrometheusOptions{RemoteWriteReceiver: true},
		Nodes: &testbed.NodeOptions{
			Clusters: []string{hubName, cluster1, cluster2},
			Images: []string{
				filepath.Join(imagesDir, "traffic-migration.tar"),
				filepath.Join(imagesDir, "incluster.tar"),
				filepath.Join(imagesDir, "prometheus.tar"),
				traefikArchive,
			},
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the test bed: %v\n", err)
		return 1
	}
	defer bed.Stop()
	// Whatever fails, in set-up or in a test, the programs' logs say why.
	defer func() {
		if code != 0 {
			bed.DumpLogs(os.Stderr, 16384)
		}
	}()
	if err := bed.StartOCMControlPlane(ctx, true); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hubReady := time.Since(start)
	if err := newClients(); err != nil {
		fmt.Fprintf(os.Stderr, "make the clients: %v\n", err)
		return 1
	}
	if _, err := bed.JoinSpokes(ctx, cluster1, cluster2); err != nil {
		fmt.Fprintf(os.Stderr, "join the spokes: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "test bed ready in %s (OCM hub after %s): hub %s, spokes %s and %s joined, Prometheus %s\n",
		time.Since(start).Round(time.Millisecond), hubReady.Round(time.Millisecond), bed.Hub.URL, cluster1, cluster2, bed.Prometheus.URL)
	return m.Run()
}

func newClients() error {
	cfg := bed.Hub.Config
	var err error
	if hub.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if hub.cluster, err = clusterclient.NewForConfig(cfg); err != nil {
		return err
	}
	if hub.work, err = workclient.NewForConfig(cfg); err != nil {
		return err
	}
	if hub.addon, err = addonclient.NewForConfig(cfg); err != nil {
		return err
	}
	for name, spoke := range bed.Spokes {
		if spokes[name], err = kubernetes.NewForConfig(spoke.Config); err != nil {
			return err
		}
	}
	return nil
}
