// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command traffic-migration is the traffic-migration add-on of Open Cluster
// Management: the hub manager, the spoke agent and read-only commands for people.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"open-cluster-management.io/traffic-migration/pkg/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.NewRootCommand(os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1)
	}
}
