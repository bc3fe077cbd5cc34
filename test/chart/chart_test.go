// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package chart checks the Helm chart against the plain manifests, so that the two
// ways to install traffic-migration cannot drift apart, and lints it as `helm lint` does.
package chart

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir     = "../../charts/traffic-migration"
	manifestsDir = "../../manifests"
	namespace    = "open-cluster-management-addon"
)

// objects reads every YAML document of the given texts as a map, keyed by kind,
// namespace and name.
func objects(t *testing.T, texts ...string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, text := range texts {
		dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
		for {
			doc, err := dec.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%v in:\n%s", err, doc)
			}
			if obj == nil {
				continue
			}
			meta, _ := obj["metadata"].(map[string]any)
			key := obj["kind"].(string) + "/" + str(meta["namespace"]) + "/" + str(meta["name"])
			if _, dup := out[key]; dup {
				t.Errorf("%s appears twice", key)
			}
			out[key] = obj
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func render(t *testing.T, values map[string]any) map[string]map[string]any {
	t.Helper()
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(chart, values, chartutil.ReleaseOptions{Name: "traffic-migration", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chart, vals)
	if err != nil {
		t.Fatalf("render the chart: %v", err)
	}
	var texts []string
	for name, text := range files {
		if strings.HasSuffix(name, ".yaml") {
			texts = append(texts, text)
		}
	}
	return objects(t, texts...)
}

// TestChartMatchesManifests renders the chart with its defaults and compares every
// object with manifests/ (the chart leaves the namespace to `helm install
// --create-namespace`).
func TestChartMatchesManifests(t *testing.T) {
	var texts []string
	for _, f := range []string{"rbac.yaml", "deployment.yaml", "clustermanagementaddon.yaml", "addondeploymentconfig.yaml"} {
		b, err := os.ReadFile(filepath.Join(manifestsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	want := objects(t, texts...)
	got := render(t, nil)
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("the chart does not render %s", key)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := yaml.Marshal(g)
			wb, _ := yaml.Marshal(w)
			t.Errorf("%s differs.\nchart:\n%s\nmanifests:\n%s", key, gb, wb)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("the chart renders %s, which manifests/ lacks", key)
		}
	}
}

// TestChartCRDsMatchManifests checks that the chart ships the generated CRD.
func TestChartCRDsMatchManifests(t *testing.T) {
	crds, err := filepath.Glob(filepath.Join(manifestsDir, "crd", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRD in manifests/crd: %v", err)
	}
	for _, f := range crds {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(chartDir, "crds", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("charts/traffic-migration/crds/%s differs from manifests/crd (run make manifests): %v", filepath.Base(f), err)
		}
	}
}

// TestChartValues checks that the values the chart documents reach the objects.
func TestChartValues(t *testing.T) {
	got := render(t, map[string]any{
		"image":          map[string]any{"repository": "registry.example/tm", "tag": "v9", "pullPolicy": "Always"},
		"agentImage":     "registry.example/tm-agent:v9",
		"replicas":       2,
		"leaderElection": false,
		"logLevel":       5,
		"resources":      map[string]any{"limits": map[string]any{"memory": "1Gi"}},
		"agent":          map[string]any{"metricsLabels": "region=us-east", "logLevel": 4},
	})
	deploy := got["Deployment/"+namespace+"/traffic-migration-manager"]
	spec := deploy["spec"].(map[string]any)
	container := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	checks := map[string][2]any{
		"replicas":   {spec["replicas"], float64(2)},
		"image":      {container["image"], "registry.example/tm:v9"},
		"pullPolicy": {container["imagePullPolicy"], "Always"},
		"args":       {container["args"], []any{"manager", "--leader-elect=false", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--agent-image=registry.example/tm-agent:v9", "-v=5"}},
		// Helm merges maps: the limit changes, the default requests stay.
		"resources": {container["resources"], map[string]any{"limits": map[string]any{"memory": "1Gi"}, "requests": map[string]any{"cpu": "50m", "memory": "64Mi"}}},
	}
	adc := got["AddOnDeploymentConfig/"+namespace+"/traffic-migration"]
	checks["metrics labels"] = [2]any{adc["spec"].(map[string]any)["customizedVariables"], []any{
		map[string]any{"name": "LOG_LEVEL", "value": "4"},
		map[string]any{"name": "METRICS_LABELS", "value": "region=us-east"},
	}}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %#v, want %#v", name, c[0], c[1])
		}
	}
}

// TestChartLint lints the chart as `helm lint` does: no errors and no warnings.
func TestChartLint(t *testing.T) {
	result := lint.All(chartDir, nil, namespace, false)
	for _, m := range result.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
}
