// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command traffic-migration-agent is the spoke agent of the traffic-migration add-on
// alone: the command "traffic-migration agent" as a binary of its own, which links none
// of the hub's code. The add-on's agent Deployment runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"open-cluster-management.io/traffic-migration/pkg/cmd/agent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agent.NewBinaryCommand(os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1)
	}
}
