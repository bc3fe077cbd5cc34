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
// two Deployments (the policy controllers, and the add-on manager that deploys the
// agents), and the agent's, all from the image manifests/ names (the managers' own
// image and the add-on manager's --agent-image): the chart's at its appVersion
// (testbed.ChartImage; test/chart keeps the two the same, and make release sets both).
const (
	managerNamespace       = "open-cluster-management-addon"
	managerDeployment      = "traffic-migration-manager"
	addonManagerDeployment = "traffic-migration-addon-manager"
	agentDeployment        = "traffic-migration-agent"
)

// image is the product's image as make image saved it, which each node imports.
type image struct {
	ref, archive string
}

// productImage finds the image that make image built, and checks that it is the one
// manifests/ runs: the nodes pull nothing, so a pod of another image would never start.
func productImage() (image, error) {
	dir, ref := testbed.Getenv(testbed.ImagesDirEnv), testbed.Getenv(testbed.ImageEnv)
	if dir == "" || ref == "" {
		return image{}, fmt.Errorf("%s and %s are not set: run the demo with 'make demo', which builds the image ('make image')", testbed.ImagesDirEnv, testbed.ImageEnv)
	}
	manifestsImage, err := testbed.ChartImage()
	if err != nil {
		return image{}, err
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

// images are the OCI archives the nodes import, and the references they carry.
type images struct {
	refs, archives []string
}

// nodeImages finds every image the demo's nodes run, as make built them: the
// product's, Traefik's, the test image (the spokes' backends) and Prometheus's (the
// spokes' metrics agents).
func nodeImages() (images, error) {
	product, err := productImage()
	if err != nil {
		return images{}, err
	}
	out := images{refs: []string{product.ref}, archives: []string{product.archive}}
	traefikRef, traefikArchive, err := testbed.TraefikImageArchive()
	if err != nil {
		return images{}, err
	}
	out.refs, out.archives = append(out.refs, traefikRef), append(out.archives, traefikArchive)
	dir := testbed.Getenv(testbed.ImagesDirEnv)
	for _, other := range []struct{ env, archive, target string }{
		{testbed.InclusterImageEnv, "incluster.tar", "testbed-node-images"},
		{testbed.PrometheusImageEnv, "prometheus.tar", "prometheus-image"},
	} {
		ref, archive := testbed.Getenv(other.env), filepath.Join(dir, other.archive)
		if ref == "" {
			return images{}, fmt.Errorf("%s is not set: run the demo with 'make demo', which builds the image ('make %s')", other.env, other.target)
		}
		if _, err := os.Stat(archive); err != nil {
			return images{}, fmt.Errorf("the image's archive: %w ('make %s' builds it)", err, other.target)
		}
		out.refs, out.archives = append(out.refs, ref), append(out.archives, archive)
	}
	return out, nil
}
