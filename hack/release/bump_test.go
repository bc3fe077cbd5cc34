// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// copyFile copies the repository's file src into dir, for bump to change.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestBumpTheRepository bumps copies of the repository's Chart.yaml and of
// manifests/' Deployments: the chart's version and appVersion become the release
// (appVersion quoted), the manager's image, and the add-on manager's image and
// --agent-image, take its tag, and nothing else of any file changes, comments and
// kubeVersion included. A second bump to the same release changes nothing.
func TestBumpTheRepository(t *testing.T) {
	dir := t.TempDir()
	chartSrc := filepath.Join("..", "..", "charts", "traffic-migration", "Chart.yaml")
	// Each manifest with how many references to the image it has.
	manifestSrcs := map[string]int{
		filepath.Join("..", "..", "manifests", "deployment.yaml"):    1,
		filepath.Join("..", "..", "manifests", "addon-manager.yaml"): 2,
	}
	chart := copyFile(t, chartSrc, dir)
	manifests := map[string]string{}
	for src := range manifestSrcs {
		manifests[src] = copyFile(t, src, dir)
	}
	copies := slices.Collect(maps.Values(manifests))

	changed, err := bump("9.8.7-rc.1", chart, testImage, copies)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 3 {
		t.Errorf("changed %v, want every file", changed)
	}
	var meta struct {
		Version     string `json:"version"`
		AppVersion  string `json:"appVersion"`
		KubeVersion string `json:"kubeVersion"`
	}
	b, _ := os.ReadFile(chart)
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Version != "9.8.7-rc.1" || meta.AppVersion != "9.8.7-rc.1" || meta.KubeVersion == "" {
		t.Errorf("the chart says %+v", meta)
	}
	if !strings.Contains(string(b), `appVersion: "9.8.7-rc.1"`) {
		t.Errorf("appVersion is not quoted:\n%s", b)
	}
	orig, _ := os.ReadFile(chartSrc)
	if got, want := otherLines(string(b), "version:", "appVersion:"), otherLines(string(orig), "version:", "appVersion:"); got != want {
		t.Errorf("bump changed other lines of Chart.yaml:\n%s\nwas\n%s", got, want)
	}
	for src, refs := range manifestSrcs {
		m, _ := os.ReadFile(manifests[src])
		if n, err := checkPinned(m, testImage, "9.8.7-rc.1"); err != nil || n != refs {
			t.Errorf("%s: %d references, %v; want %d at 9.8.7-rc.1", src, n, err, refs)
		}
		origM, _ := os.ReadFile(src)
		if n, pinned := pin(string(origM), testImage, "9.8.7-rc.1"); n != refs || pinned != string(m) {
			t.Errorf("%s changed other than its image's tag:\n%s", src, m)
		}
	}

	again, err := bump("9.8.7-rc.1", chart, testImage, copies)
	if err != nil || len(again) != 0 {
		t.Errorf("a second bump changed %v, %v; want nothing", again, err)
	}
}

// otherLines are the lines of s that start with none of prefixes.
func otherLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		keep := true
		for _, p := range prefixes {
			keep = keep && !strings.HasPrefix(l, p)
		}
		if keep {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestBumpRefuses: a chart without its version line, or with two, and a manifest that
// names no image fail, naming the file, and write nothing.
func TestBumpRefuses(t *testing.T) {
	manifestText := "kind: Deployment\nspec:\n  image: " + testImage + ":0.1.0\n"
	for name, tc := range map[string]struct {
		chart, manifest, want string
	}{
		"no appVersion":      {"apiVersion: v2\nname: c\nversion: 0.1.0\n", manifestText, "0 top-level appVersion lines"},
		"two versions":       {"version: 0.1.0\nappVersion: \"0.1.0\"\nversion: 0.2.0\n", manifestText, "2 top-level version lines"},
		"a nested version":   {"appVersion: \"0.1.0\"\nx:\n  version: 0.1.0\n", manifestText, "0 top-level version lines"},
		"no image":           {"version: 0.1.0\nappVersion: \"0.1.0\"\n", "kind: Deployment\n", "no reference to the image"},
		"another repository": {"version: 0.1.0\nappVersion: \"0.1.0\"\n", "image: example.com/traffic-migration:0.1.0\n", "no reference to the image"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			chart, manifest := filepath.Join(dir, "Chart.yaml"), filepath.Join(dir, "deployment.yaml")
			_ = os.WriteFile(chart, []byte(tc.chart), 0o644)
			_ = os.WriteFile(manifest, []byte(tc.manifest), 0o644)
			if _, err := bump("1.2.3", chart, testImage, []string{manifest}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("bump: %v, want an error saying %q", err, tc.want)
			}
			if b, _ := os.ReadFile(chart); string(b) != tc.chart {
				t.Errorf("the chart was written:\n%s", b)
			}
			if b, _ := os.ReadFile(manifest); string(b) != tc.manifest {
				t.Errorf("the manifest was written:\n%s", b)
			}
		})
	}
}
