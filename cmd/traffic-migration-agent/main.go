// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command traffic-migration-agent is the spoke agent of the traffic-migration add-on
// alone: the command "traffic-migration agent" as a binary of its own, which links none
// of the hub's code. The add-on's agent Deployment runs it.
package main

import (
	"os"

	"open-cluster-management.io/traffic-migration/pkg/cmd/agent"
	"open-cluster-management.io/traffic-migration/pkg/cmd/execute"
)

func main() {
	execute.Main(agent.NewBinaryCommand(os.Stdout, os.Stderr))
}
