// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command traffic-migration is the traffic-migration add-on of Open Cluster
// Management: the hub manager, the spoke agent and read-only commands for people.
package main

import (
	"os"

	"open-cluster-management.io/traffic-migration/pkg/cmd"
	"open-cluster-management.io/traffic-migration/pkg/cmd/execute"
)

func main() {
	root := cmd.NewRootCommand(os.Stdout, os.Stderr)
	// Installed as kubectl-traffic_migration, the binary is the kubectl plugin
	// "kubectl traffic-migration" and says so in its help.
	cmd.SetInvokedName(root, os.Args[0])
	execute.Main(root)
}
