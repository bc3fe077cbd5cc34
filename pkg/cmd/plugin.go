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

// KubectlCompletionName is the program kubectl (1.26 and later) runs from PATH to
// complete "kubectl traffic-migration ...": hack/kubectl_complete-traffic_migration,
// which the release's plugin archives and make install-kubectl-plugin install beside
// the plugin, and which asks the plugin (kubectl-traffic_migration __complete ...).
const KubectlCompletionName = "kubectl_complete-traffic_migration"

// SetInvokedName adapts root to the path the binary was started as (os.Args[0]).
// Started as the kubectl plugin, the root is named after the plugin's binary,
// kubectl-traffic_migration, the name the release ships, so that the completion
// scripts it writes complete that program; its usage, help and examples say "kubectl
// traffic-migration", its help does not list the commands that run in pods (manager,
// agent), and the completion command's help says how kubectl completes the plugin.
// Under any other name nothing changes.
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
	root.Use = KubectlPluginName
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Long += `
As a kubectl plugin: kubectl (1.26 and later) completes "` + kubectlPluginDisplayName + ` ..."
itself, with its own completion ('kubectl completion bash', ...), by running
` + KubectlCompletionName + ` from PATH, which the plugin's archives and
'make install-kubectl-plugin' put beside ` + KubectlPluginName + `. The scripts
written here complete ` + KubectlPluginName + ` typed as a command of its own.
`
		}
	}
}
