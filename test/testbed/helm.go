// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// ProgramHelm is the real helm CLI (helm.sh/helm/v3/cmd/helm), built by the Makefile
// from hack/tools/helm.
var ProgramHelm = Program{Name: "helm", EnvVar: "TESTBED_HELM"}

// Helm runs the real helm CLI, as a user runs it, with its cache, configuration and
// data under dir (never the user's), and returns what it printed on stdout. With a
// kubeconfig it talks to that cluster; without one it can still lint and template.
// Its invocations and output are appended to dir/helm.log; the error carries its
// stderr.
func Helm(ctx context.Context, dir, kubeconfig string, args ...string) (string, error) {
	return helm(ctx, dir, kubeconfig, nil, args...)
}

// helm runs the real helm CLI as Helm does, with more added to its environment.
func helm(ctx context.Context, dir, kubeconfig string, more []string, args ...string) (string, error) {
	home := filepath.Join(dir, "helm-home")
	for _, d := range []string{"cache", "config", "data"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			return "", fmt.Errorf("make helm's home: %w", err)
		}
	}
	env := []string{
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
		// helm reads KUBECONFIG when it has no --kubeconfig: never the user's.
		"KUBECONFIG=" + os.DevNull,
	}
	env = append(env, more...)
	if kubeconfig != "" {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	return runCommand(ctx, ProgramHelm, dir, env, args...)
}

// HelmValues writes values as a values file in the test's temporary folder and returns
// the arguments that give it to helm (--values); nil values write none.
func HelmValues(t testing.TB, values map[string]any) []string {
	t.Helper()
	if values == nil {
		return nil
	}
	b, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--values", path}
}

// Helm runs the real helm CLI against the hub as its admin, as a fleet admin installs
// a chart on the hub; on a bed with a registry, helm trusts it (Registry.Env).
func (b *Bed) Helm(ctx context.Context, args ...string) (string, error) {
	var env []string
	if b.Registry != nil {
		env = b.Registry.Env()
	}
	return helm(ctx, b.dir, b.Hub.KubeconfigPath, env, args...)
}

// ChartAppVersion is the appVersion of the project's Helm chart, the tag of the image
// that the chart and manifests/ run by default (make release sets it to the release).
func ChartAppVersion() (string, error) {
	dir, err := ChartDir()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil || meta.AppVersion == "" {
		return "", fmt.Errorf("the chart's appVersion: %v", err)
	}
	return meta.AppVersion, nil
}

// ChartImage is the image the chart and manifests/ run by default: the chart's
// repository at its appVersion.
func ChartImage() (string, error) {
	v, err := ChartAppVersion()
	if err != nil {
		return "", err
	}
	return "quay.io/open-cluster-management/traffic-migration:" + v, nil
}

// ChartDir is the project's Helm chart, charts/traffic-migration at the root of the
// module.
func ChartDir() (string, error) {
	root, err := moduleDir("")
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "charts", "traffic-migration"), nil
}
