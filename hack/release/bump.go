// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// chartVersionLines are the lines of a Chart.yaml that bump sets: its version and its
// appVersion, at the top level.
var chartVersionLines = map[string]*regexp.Regexp{
	"version":    regexp.MustCompile(`(?m)^version:[ \t]*[^\n#]*?([ \t]+#[^\n]*)?$`),
	"appVersion": regexp.MustCompile(`(?m)^appVersion:[ \t]*[^\n#]*?([ \t]+#[^\n]*)?$`),
}

// bump sets the release's version where a checkout names it, so that the checkout of
// a release's tag and the release agree: the chart's version and appVersion in
// chartFile (the image's default tag, and so the manager's and the agent's), and the
// tag of every reference to image in manifests (the plain manifests' Deployment). It
// leaves everything else of each file as it is, comments included, writes only the
// files that change and returns them. It fails, writing nothing, when the chart lacks
// either line or a manifest names no image.
func bump(version, chartFile, image string, manifests []string) ([]string, error) {
	writes := map[string][]byte{}
	var order []string
	chart, err := os.ReadFile(chartFile)
	if err != nil {
		return nil, err
	}
	out := chart
	for _, key := range []string{"version", "appVersion"} {
		re := chartVersionLines[key]
		if n := len(re.FindAllIndex(out, -1)); n != 1 {
			return nil, fmt.Errorf("%s: %d top-level %s lines, want 1", chartFile, n, key)
		}
		// appVersion is quoted, as helm create writes it: 1.10 would be a number.
		value := version
		if key == "appVersion" {
			value = strconv.Quote(version)
		}
		out = re.ReplaceAll(out, []byte(key+": "+strings.ReplaceAll(value, "$", "$$")+"${1}"))
	}
	if !bytes.Equal(out, chart) {
		writes[chartFile] = out
		order = append(order, chartFile)
	}
	for _, f := range manifests {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		n, pinned := pin(string(b), image, version)
		if n == 0 {
			return nil, fmt.Errorf("%s: no reference to the image %s", f, image)
		}
		if pinned != string(b) {
			writes[f] = []byte(pinned)
			order = append(order, f)
		}
	}
	for _, f := range order {
		if err := writeFile(f, writes[f], 0o644); err != nil {
			return nil, err
		}
	}
	return order, nil
}
