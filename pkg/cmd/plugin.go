// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// KubectlPluginName is the file name under which kubectl finds the binary as a plugin:
// "kubectl traffic-migration ..." runs kubectl-traffic_migration from PATH.
const KubectlPluginName = "kubectl-traffic_migration"

// kubectlPluginDisplayName is how the root command calls itself as a kubectl plugin.
const kubectlPluginDisplayName = "kubectl traffic-migration"

// serverCommands are the commands that run in pods, not at a user's terminal: the
// kubectl plugin keeps them but does not list them.
var serverCommands = []string{"manager", "agent"}

// SetInvokedName adapts root to the path the binary was started as (os.Args[0]).
// Started as the kubectl plugin, the root is still the traffic-migration command, but
// its usage, help and examples say "kubectl traffic-migration", and its help does not
// list the commands that run in pods (manager, agent); under any other name nothing
// changes.
func SetInvokedName(root *cobra.Command, arg0 string) {
	if strings.TrimSuffix(filepath.Base(arg0), ".exe") != KubectlPluginName {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = kubectlPluginDisplayName
	for _, c := range root.Commands() {
		c.Example = strings.ReplaceAll(c.Example, "  "+root.Name()+" ", "  "+kubectlPluginDisplayName+" ")
		if slices.Contains(serverCommands, c.Name()) {
			c.Hidden = true
		}
	}
}
