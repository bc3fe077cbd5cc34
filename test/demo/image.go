// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// What manifests/ installs on the hub and the add-on puts on each spoke: the manager's
// Deployment, and the agent's, both from the image manifests/deployment.yaml names
// (the manager's own image and its --agent-image).
const (
	managerNamespace  = "open-cluster-management-addon"
	managerDeployment = "traffic-migration-manager"
	agentDeployment   = "traffic-migration-agent"
	manifestsImage    = "quay.io/open-cluster-management/traffic-migration:latest"
)

// image is the product's image as make image saved it, which each node imports.
type image struct {
	ref, archive string
}

// productImage finds the image that make image built, and checks that it is the one
// manifests/ runs: the nodes pull nothing, so a pod of another image would never start.
func productImage() (image, error) {
	dir, ref := os.Getenv(testbed.ImagesDirEnv), os.Getenv(testbed.ImageEnv)
	if dir == "" || ref == "" {
		return image{}, fmt.Errorf("%s and %s are not set: run the demo with 'make demo', which builds the image ('make image')", testbed.ImagesDirEnv, testbed.ImageEnv)
	}
	if ref != manifestsImage {
		return image{}, fmt.Errorf("the image is %s, but manifests/ runs %s: the nodes pull nothing, so run 'make demo' with IMAGE=%s", ref, manifestsImage, manifestsImage)
	}
	archive := filepath.Join(dir, "traffic-migration.tar")
	if _, err := os.Stat(archive); err != nil {
		return image{}, fmt.Errorf("the image's archive: %w ('make image' builds it)", err)
	}
	return image{ref: ref, archive: archive}, nil
}
