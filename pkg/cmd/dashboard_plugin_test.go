// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// TestDashboardAsKubectlPlugin: the dashboard is a command of the binary, and so of
// the kubectl plugin, whose help names it as "kubectl traffic-migration dashboard".
func TestDashboardAsKubectlPlugin(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	SetInvokedName(root, "/usr/local/bin/"+KubectlPluginName)
	root.SetArgs([]string{"dashboard", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl traffic-migration dashboard [flags]", "  kubectl traffic-migration dashboard -A\n", "--address string"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}
