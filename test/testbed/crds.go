// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ocmAPIModule is the module that ships OCM's CRDs; the project depends on it, so its
// files are in the module cache.
const ocmAPIModule = "open-cluster-management.io/api"

// Hub and spoke CRDs of OCM, relative to the api module. The add-on CRDs come from
// addon/v1beta1, which serves v1alpha1 and v1beta1.
var (
	hubOCMCRDs = []string{
		"cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml",
		"cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml",
		"cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml",
		"cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml",
		"cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml",
		"cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml",
		"work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml",
		"work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml",
		"addon/v1beta1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml",
		"addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml",
		"addon/v1beta1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml",
		"addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml",
	}
	spokeOCMCRDs = []string{
		"cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
		"work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml",
	}
)

// moduleDir returns the directory of a module of the build, or of the main module for "".
func moduleDir(module string) (string, error) {
	args := []string{"list", "-m", "-f", "{{.Dir}}"}
	if module != "" {
		args = append(args, module)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded: run 'go mod download'", module)
	}
	return dir, nil
}

// hubCRDFiles lists the CRDs installed on the hub: OCM's, and this project's if own.
func hubCRDFiles(own bool) ([]string, error) {
	files, err := ocmCRDFiles(hubOCMCRDs)
	if err != nil || !own {
		return files, err
	}
	root, err := moduleDir("")
	if err != nil {
		return nil, err
	}
	ours, err := filepath.Glob(filepath.Join(root, "manifests", "crd", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(ours) == 0 {
		return nil, fmt.Errorf("no CRD in %s: run 'make manifests'", filepath.Join(root, "manifests", "crd"))
	}
	return append(files, ours...), nil
}

func ocmCRDFiles(rel []string) ([]string, error) {
	dir, err := moduleDir(ocmAPIModule)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(rel))
	for _, r := range rel {
		files = append(files, filepath.Join(dir, r))
	}
	return files, nil
}

// InstallCRDs creates (or updates) the CRDs in the YAML files and waits until the API
// server serves them.
func InstallCRDs(ctx context.Context, cfg *rest.Config, files ...string) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read CRD: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return fmt.Errorf("decode CRD %s: %w", f, err)
		}
		existing, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		case err == nil:
			crd.ResourceVersion = existing.ResourceVersion
			_, err = client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return nil
}
