// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command registry is distribution's OCI registry (the program of
// github.com/distribution/distribution/v3/cmd/registry), built with only the storage
// driver the test bed uses: the filesystem, under the bed's directory. The upstream
// main imports every storage driver (Azure, GCS, S3 and CloudFront), whose cloud SDKs
// are most of what a cold build compiles; a driver is compiled in by importing its
// package, which registers it. The lifecycle test pushes the release's image and
// chart to it and the nodes pull from it, as users do with their own registry.
package main

import (
	"github.com/distribution/distribution/v3/registry"

	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	// RootCmd exits with a non-zero status itself when its command fails.
	_ = registry.RootCmd.Execute()
}
