// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import "testing"

// TestDashboardAsKubectlPlugin: the dashboard is a command of the binary, and so of
// the kubectl plugin, whose help names it as "kubectl traffic-migration dashboard".
func TestDashboardAsKubectlPlugin(t *testing.T) {
	help := runAs(t, "/usr/local/bin/"+KubectlPluginName, "dashboard", "--help")
	expectHelp(t, help, "kubectl traffic-migration dashboard [flags]", "  kubectl traffic-migration dashboard -A\n", "--address string")
}
