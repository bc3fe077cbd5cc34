// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// OCMSuite is the set-up of a test package that runs on a real OCM fleet (test/e2e,
// test/lifecycle): the bed of Options, an OCM hub on its hub, and Options.Spokes
// joined to it with clusteradm, all before the package's first test.
type OCMSuite struct {
	// Options are the bed's. Its spokes are joined to the hub.
	Options Options
	// WorkManager also starts OCM's work manager (ManifestWorkReplicaSets).
	WorkManager bool
	// Timeout bounds the whole set-up.
	Timeout time.Duration
	// Ready runs once the spokes have joined, before the first test: the package keeps
	// the bed and makes its clients.
	Ready func(*Bed) error
	// Tests, when set, are the package's top-level tests: when go test's -run selects
	// none of them (make bench running another package's benchmark), the bed is not
	// started.
	Tests []string
}

// RunOCMSuite is the TestMain of an OCM suite. It skips the package, saying how to run
// it, when the test bed is not configured (see Unconfigured); otherwise it asks suite
// for its set-up (which fails with an error saying what is missing), starts it, runs
// the tests, dumps the programs' logs when set-up or a test failed, and stops the bed.
func RunOCMSuite(m *testing.M, suite func() (OCMSuite, error)) (code int) {
	if msg := Unconfigured(); msg != "" {
		fmt.Println(msg)
		return 0
	}
	s, err := suite()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(s.Tests) > 0 && !runSelects(s.Tests) {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	start := time.Now()
	bed, err := New(ctx, s.Options)
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
	if err := bed.StartOCMControlPlane(ctx, s.WorkManager); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hubReady := time.Since(start)
	if _, err := bed.JoinSpokes(ctx, s.Options.Spokes...); err != nil {
		fmt.Fprintf(os.Stderr, "join the spokes: %v\n", err)
		return 1
	}
	if s.Ready != nil {
		if err := s.Ready(bed); err != nil {
			fmt.Fprintf(os.Stderr, "set up the tests: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "test bed ready in %s (OCM hub after %s): hub %s, spokes %s joined, Prometheus %s\n",
		time.Since(start).Round(time.Millisecond), hubReady.Round(time.Millisecond), bed.Hub.URL,
		strings.Join(s.Options.Spokes, ", "), bed.Prometheus.URL)
	return m.Run()
}

// RunPlacementSuite is the TestMain of a package that runs on a hub with OCM's
// placement controller and no more of OCM (test/integration, test/bench). It skips the
// package, saying how to run it, when the test bed is not configured (see
// Unconfigured); otherwise it starts a bed with a Prometheus and the placement
// controller, hands them to ready, which finishes the package's set-up within the same
// five minutes, runs the tests, dumps the programs' logs when a test failed, and stops
// the bed.
func RunPlacementSuite(m *testing.M, ready func(ctx context.Context, b *Bed, placementController *Process) error) int {
	if msg := Unconfigured(); msg != "" {
		fmt.Println(msg)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bed, err := New(ctx, Options{Prometheus: &PrometheusOptions{}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the test bed: %v\n", err)
		return 1
	}
	defer bed.Stop()
	placementController, err := bed.StartPlacementController(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start OCM's placement controller: %v\n", err)
		return 1
	}
	if err := ready(ctx, bed, placementController); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		bed.DumpLogs(os.Stderr, 8192)
	}
	return code
}

// SuiteImages returns the image that 'make image' built, as the nodes know it
// ($TESTBED_IMAGE), and the folder of the images' archives ($TESTBED_IMAGES_DIR), or an
// error that says how to set them.
func SuiteImages() (image, dir string, err error) {
	image, dir = Getenv(ImageEnv), Getenv(ImagesDirEnv)
	if image == "" || dir == "" {
		return "", "", fmt.Errorf("%s and %s are not set: run the tests through 'make test-e2e', which builds the image ('make image')", ImageEnv, ImagesDirEnv)
	}
	return image, dir, nil
}

// GatewayFleetOptions are the options of a bed whose spokes run Gateways as users'
// clusters do: the hub and every spoke with a node that imports the images of the
// project (traffic-migration, the test image for the backends, Prometheus for the
// metrics agents) and Traefik's, and the hub's Prometheus receiving the spokes' metrics
// agents' writes. It fails, saying how to build them, when an image is missing. It
// returns the project's image, as the nodes know it, with the options.
func GatewayFleetOptions(hub string, spokes ...string) (image string, _ Options, _ error) {
	image, imagesDir, err := SuiteImages()
	if err != nil {
		return "", Options{}, err
	}
	_, traefikArchive, err := TraefikImageArchive()
	if err != nil {
		return "", Options{}, fmt.Errorf("%w: run the tests through 'make test-e2e'", err)
	}
	return image, Options{
		Spokes:     spokes,
		Prometheus: &PrometheusOptions{RemoteWriteReceiver: true},
		Nodes: &NodeOptions{
			Clusters: append([]string{hub}, spokes...),
			Images: []string{
				filepath.Join(imagesDir, "traffic-migration.tar"),
				filepath.Join(imagesDir, "incluster.tar"),
				filepath.Join(imagesDir, "prometheus.tar"),
				traefikArchive,
			},
		},
	}, nil
}

// Eventually polls check until it returns nil, and fails the test with check's last
// error if that takes longer than timeout. A try that the deadline cut short does not
// hide the error of the try before it, which says more.
func Eventually(t testing.TB, timeout time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := check(ctx)
		if err != nil && ctx.Err() != nil && last != nil {
			return false, nil
		}
		last = err
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

// EventuallyTrue polls cond every 10ms until it holds, and fails the test if that
// takes longer than timeout.
func EventuallyTrue(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s", what, timeout)
	}
}

// runSelects reports whether go test's -run pattern may select one of tests, by its
// first element (go test splits a pattern at each slash, one element a level). An
// unset or unreadable pattern selects them all.
func runSelects(tests []string) bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	re, err := regexp.Compile(strings.SplitN(f.Value.String(), "/", 2)[0])
	if err != nil {
		return true
	}
	return slices.ContainsFunc(tests, re.MatchString)
}
