// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	// pluginName is the plugin's name in krew's index, what `kubectl krew install`
	// takes. krew installs its bin as kubectl-<name> with each - written _, so that
	// kubectl runs it as `kubectl traffic-migration`.
	pluginName = "traffic-migration"
	// pluginBin is the binary in the plugin's archives (make install-kubectl-plugin
	// installs the same name).
	pluginBin = "kubectl-traffic_migration"
	// licenseFile is the license each archive carries beside the binary.
	licenseFile = "LICENSE"
	// completionShim is the plugin's shell completion for kubectl (1.26 and later),
	// which completes "kubectl traffic-migration ..." by running it from PATH: the
	// script hack/kubectl_complete-traffic_migration, which asks the plugin
	// (kubectl-traffic_migration __complete ...). Each archive carries it beside the
	// binary; make install-kubectl-plugin installs it beside the plugin.
	completionShim = "kubectl_complete-traffic_migration"

	defaultHomepage = "https://github.com/open-cluster-management-io/traffic-migration"

	krewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	krewKind       = "Plugin"

	shortDescription = "Watch and steer OCM Gateway traffic migrations"
	description      = `The command line of traffic-migration, the Open Cluster Management add-on that
keeps a cluster in a proxy Placement until Prometheus shows that little traffic
still reaches its Gateway, so that moving a Gateway between the clusters of a
fleet drops none of the requests that DNS caches still send to the old one.

On the hub: status (per cluster: phase, value against threshold, check
history), check (a dry run of a policy's Prometheus check), dashboard (a live
chart per drain in a browser), wait, suspend, resume and force-remove.
`
	caveats = `The plugin works on an OCM hub where the traffic-migration add-on is installed
(its CRD and manager): see the install section of
https://github.com/open-cluster-management-io/traffic-migration.

Shell completion of "kubectl traffic-migration ..." (kubectl 1.26 and later, with
kubectl's own completion loaded): krew installs kubectl_complete-traffic_migration
beside the plugin but not on PATH; link it onto PATH, for example
  ln -s ~/.krew/store/traffic-migration/*/kubectl_complete-traffic_migration ~/.krew/bin/
`
)

// krewPlugin is a krew plugin manifest (apiVersion
// krew.googlecontainertools.github.com/v1alpha2, kind Plugin), the fields it uses.
type krewPlugin struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   krewMetadata `json:"metadata"`
	Spec       krewSpec     `json:"spec"`
}

type krewMetadata struct {
	Name string `json:"name"`
}

type krewSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage,omitempty"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description,omitempty"`
	Caveats          string         `json:"caveats,omitempty"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector krewSelector `json:"selector"`
	URI      string       `json:"uri"`
	Sha256   string       `json:"sha256"`
	Files    []krewFile   `json:"files,omitempty"`
	Bin      string       `json:"bin"`
}

type krewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// archiveName is the name of the plugin's archive for a release and platform.
func archiveName(version, goos, goarch string) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", pluginBin, version, goos, goarch)
}

// archivePlatform reads the OS and architecture out of an archive's name, which must
// be archiveName's for version.
func archivePlatform(file, version string) (goos, goarch string, err error) {
	base := filepath.Base(file)
	prefix, suffix := pluginBin+"_"+version+"_", ".tar.gz"
	rest, ok := strings.CutPrefix(base, prefix)
	if ok {
		rest, ok = strings.CutSuffix(rest, suffix)
	}
	if ok {
		goos, goarch, ok = strings.Cut(rest, "_")
	}
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "_") {
		return "", "", fmt.Errorf("%s is not named %s", base, archiveName(version, "<os>", "<arch>"))
	}
	return goos, goarch, nil
}

// krewManifest writes the krew plugin manifest of a release's archives: one platform
// per archive, with its URL under urlBase and its SHA-256. It fails on an archive
// that is not named for the release, or lacks the binary or the license.
func krewManifest(version, urlBase, homepage string, archives []string) ([]byte, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(urlBase, "https://") {
		return nil, fmt.Errorf("the URL base %q is not https", urlBase)
	}
	p := krewPlugin{
		APIVersion: krewAPIVersion,
		Kind:       krewKind,
		Metadata:   krewMetadata{Name: pluginName},
		Spec: krewSpec{
			Version:          "v" + version,
			Homepage:         homepage,
			ShortDescription: shortDescription,
			Description:      description,
			Caveats:          caveats,
		},
	}
	seen := map[string]bool{}
	for _, file := range archives {
		goos, goarch, err := archivePlatform(file, version)
		if err != nil {
			return nil, err
		}
		if seen[goos+"/"+goarch] {
			return nil, fmt.Errorf("two archives for %s/%s", goos, goarch)
		}
		seen[goos+"/"+goarch] = true
		files, err := readArchive(file)
		if err != nil {
			return nil, err
		}
		if f, ok := files[pluginBin]; !ok || f.Mode&0o111 == 0 {
			return nil, fmt.Errorf("%s has no executable %s", filepath.Base(file), pluginBin)
		}
		if _, ok := files[licenseFile]; !ok {
			return nil, fmt.Errorf("%s has no %s", filepath.Base(file), licenseFile)
		}
		if f, ok := files[completionShim]; !ok || f.Mode&0o111 == 0 {
			return nil, fmt.Errorf("%s has no executable %s", filepath.Base(file), completionShim)
		}
		sum, err := sha256File(file)
		if err != nil {
			return nil, err
		}
		p.Spec.Platforms = append(p.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": goos, "arch": goarch}},
			URI:      strings.TrimSuffix(urlBase, "/") + "/" + filepath.Base(file),
			Sha256:   sum,
			Files:    []krewFile{{From: pluginBin, To: "."}, {From: licenseFile, To: "."}, {From: completionShim, To: "."}},
			Bin:      pluginBin,
		})
	}
	slices.SortFunc(p.Spec.Platforms, func(a, b krewPlatform) int {
		return strings.Compare(a.Selector.MatchLabels["os"]+"/"+a.Selector.MatchLabels["arch"],
			b.Selector.MatchLabels["os"]+"/"+b.Selector.MatchLabels["arch"])
	})
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("# The krew plugin manifest of traffic-migration %s (make release). Install from it\n"+
		"# with `kubectl krew install --manifest=%s.yaml`, or offer it to the krew index.\n", version, pluginName)
	return append([]byte(header), b...), nil
}
