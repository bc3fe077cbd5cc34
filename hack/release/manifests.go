// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// kustomization is what make release reads of manifests/kustomization.yaml: its
// resources, in order. Anything else (patches, images, a namespace, generators) would
// change what kubectl apply -k installs, and is refused rather than left out.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// pinnedManifests joins the resources of a kustomization, in its order, into one
// multi-document YAML, with every reference to the image repository pinned to the
// tag version. It fails when no resource names the image, when a resource is not a
// file of Kubernetes objects, or when the kustomization does more than list files.
func pinnedManifests(kustomizationFile, image, version string) ([]byte, error) {
	raw, err := os.ReadFile(kustomizationFile)
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		return nil, fmt.Errorf("%s: only apiVersion, kind and resources are supported, which kubectl apply -f installs the same: %w", kustomizationFile, err)
	}
	if k.Kind != "Kustomization" || len(k.Resources) == 0 {
		return nil, fmt.Errorf("%s: not a Kustomization with resources", kustomizationFile)
	}
	dir := filepath.Dir(kustomizationFile)
	var out bytes.Buffer
	fmt.Fprintf(&out, "# traffic-migration %s: the plain manifests (manifests/ of the repository) in one\n", version)
	fmt.Fprintf(&out, "# file, the image pinned to the release: %s:%s\n", image, version)
	fmt.Fprintf(&out, "# On an OCM hub: kubectl apply -f <this file>\n")
	pinned := 0
	for _, res := range k.Resources {
		file := filepath.Join(dir, filepath.FromSlash(res))
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w (only files are supported)", res, err)
		}
		docs, err := objects(b)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", res, err)
		}
		for _, doc := range docs {
			n, pinnedDoc := pin(doc, image, version)
			pinned += n
			out.WriteString("---\n")
			out.WriteString(pinnedDoc)
		}
	}
	if pinned == 0 {
		return nil, fmt.Errorf("%s: no resource names the image %s", kustomizationFile, image)
	}
	if _, err := checkPinned(out.Bytes(), image, version); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// documentSeparator is a line that separates YAML documents.
var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$\n?`)

// object is what objects reads of a document.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// objects splits a YAML file into its documents, each ending with a newline, leaving
// out those that are empty or only comments, and fails on one that is not a
// Kubernetes object (apiVersion, kind and metadata.name).
func objects(b []byte) ([]string, error) {
	var docs []string
	for i, doc := range documentSeparator.Split(string(b), -1) {
		var fields map[string]any
		if err := yaml.Unmarshal([]byte(doc), &fields); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(fields) == 0 {
			continue // empty, or only comments
		}
		var obj object
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if obj.APIVersion == "" || obj.Kind == "" || obj.Metadata.Name == "" {
			return nil, fmt.Errorf("document %d is not a Kubernetes object (apiVersion, kind, metadata.name)", i+1)
		}
		docs = append(docs, strings.TrimRight(doc, "\n")+"\n")
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no object")
	}
	return docs, nil
}

// imageRefRE matches the references to the image repository: the repository, an
// optional tag and an optional digest, not followed by what would make it a longer
// name (traffic-migration-foo, traffic-migration/foo).
func imageRefRE(image string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(image) + `(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?([^A-Za-z0-9_./:@-]|$)`)
}

// pin rewrites every reference to image in s as image:version, and says how many.
func pin(s, image, version string) (int, string) {
	re := imageRefRE(image)
	n := len(re.FindAllStringIndex(s, -1))
	return n, re.ReplaceAllString(s, strings.ReplaceAll(image+":"+version, "$", "$$")+"${3}")
}

// checkPinned fails unless b names the image at least once and every reference to it
// is image:version, and returns how many there are.
func checkPinned(b []byte, image, version string) (int, error) {
	var bad []string
	refs := imageRefRE(image).FindAllSubmatch(b, -1)
	for _, m := range refs {
		if string(m[1]) != ":"+version || len(m[2]) != 0 {
			ref := strings.TrimRight(string(m[0]), " \t\r\n\"',)]}")
			if !slices.Contains(bad, ref) {
				bad = append(bad, ref)
			}
		}
	}
	if len(refs) == 0 {
		return 0, fmt.Errorf("no reference to the image %s", image)
	}
	if len(bad) > 0 {
		return 0, fmt.Errorf("references to %s not pinned to %s: %s", image, version, strings.Join(bad, ", "))
	}
	return len(refs), nil
}
