// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The release that an upgrade test starts from, as 'make image-upgrade-from' builds
// it: UpgradeFromDirEnv names its directory (the commit's source tree in src/, with its
// chart, and its image's OCI archive traffic-migration.tar), UpgradeFromImageEnv the
// reference the image carries.
const (
	UpgradeFromDirEnv   = "TESTBED_UPGRADE_FROM_DIR"
	UpgradeFromImageEnv = "TESTBED_UPGRADE_FROM_IMAGE"
)

// The release under test, as 'make release' packages it: ReleaseDirEnv names its
// directory (bin/release/<version>), ReleaseVersionEnv its version and ReleaseImageEnv
// the reference its image archive carries. make test-e2e builds it for this machine at
// the chart's appVersion (make test-release).
const (
	ReleaseDirEnv     = "TESTBED_RELEASE_DIR"
	ReleaseVersionEnv = "TESTBED_RELEASE_VERSION"
	ReleaseImageEnv   = "TESTBED_RELEASE_IMAGE"
)

// Release is a release of traffic-migration: its chart and its image.
type Release struct {
	// Chart is the release's Helm chart: a directory, or the packaged chart's .tgz.
	Chart string
	// Archive is the release's image as an OCI archive, for NodeOptions.Images.
	Archive string
	// Image is the reference the archive's image carries.
	Image string
	// Version is the chart's version, which helm needs (--version) for a chart in a
	// registry (an oci:// Chart); helm ignores it for a directory or a .tgz.
	Version string
}

// UpgradeFrom is the release that 'make image-upgrade-from' built, from the
// environment the Makefile sets; the error says how to get it.
func UpgradeFrom() (Release, error) {
	dir, image := Getenv(UpgradeFromDirEnv), Getenv(UpgradeFromImageEnv)
	if dir == "" || image == "" {
		return Release{}, fmt.Errorf("%s and %s are not set: run the tests through 'make test-e2e', which builds the release to upgrade from ('make image-upgrade-from')", UpgradeFromDirEnv, UpgradeFromImageEnv)
	}
	r := Release{
		Chart:   filepath.Join(dir, "src", "charts", "traffic-migration"),
		Archive: filepath.Join(dir, "traffic-migration.tar"),
		Image:   image,
	}
	for _, p := range []string{r.Chart, r.Archive} {
		if _, err := os.Stat(p); err != nil {
			return Release{}, errors.Join(fmt.Errorf("the release to upgrade from is incomplete: run 'make image-upgrade-from'"), err)
		}
	}
	return r, nil
}

// ThisRelease is the release of this tree that 'make release' packaged: its packaged
// chart and its image's OCI archive, as a user installs them; the error says how to
// get it.
func ThisRelease() (Release, error) {
	dir, version, image := Getenv(ReleaseDirEnv), Getenv(ReleaseVersionEnv), Getenv(ReleaseImageEnv)
	if dir == "" || version == "" || image == "" {
		return Release{}, fmt.Errorf("%s, %s and %s are not set: run the tests through 'make test-e2e', which packages the release ('make test-release')", ReleaseDirEnv, ReleaseVersionEnv, ReleaseImageEnv)
	}
	r := Release{
		Chart:   filepath.Join(dir, "traffic-migration-"+version+".tgz"),
		Archive: filepath.Join(dir, "traffic-migration-image-"+version+".tar"),
		Image:   image,
		Version: version,
	}
	for _, p := range []string{r.Chart, r.Archive} {
		if _, err := os.Stat(p); err != nil {
			return Release{}, errors.Join(fmt.Errorf("the release is incomplete: run 'make test-release'"), err)
		}
	}
	return r, nil
}

// SplitImage splits an image reference into the repository and the tag, as a chart's
// image.repository and image.tag take it.
func SplitImage(ref string) (repository, tag string, err error) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return "", "", fmt.Errorf("image %q has no tag", ref)
	}
	return ref[:i], ref[i+1:], nil
}
