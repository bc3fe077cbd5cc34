// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command traffic-migration is the traffic-migration add-on of Open Cluster
// Management: the hub manager, the spoke agent and read-only commands for people.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"open-cluster-management.io/traffic-migration/pkg/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := cmd.NewRootCommand(os.Stdout, os.Stderr)
	// Installed as kubectl-traffic_migration, the binary is the kubectl plugin
	// "kubectl traffic-migration" and says so in its help.
	cmd.SetInvokedName(root, os.Args[0])
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		// A command that ends with a code of its own (wait: 1 timed out, 2 could not
		// wait) says so; any other error is 1.
		code := 1
		var coded interface{ ExitCode() int }
		if errors.As(err, &coded) {
			code = coded.ExitCode()
		}
		os.Exit(code)
	}
}
