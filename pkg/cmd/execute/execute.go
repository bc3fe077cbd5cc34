// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package execute is the main function of both binaries, traffic-migration and
// traffic-migration-agent: it runs a root command until it ends or the process is
// interrupted. It depends on no other package of the project, so that the agent's
// binary links nothing of the hub through it.
package execute

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Main executes root with a context that SIGINT and SIGTERM cancel, and returns when
// it succeeds. When it fails, Main writes the error to standard error and exits the
// process with the error's code if it has one of its own (an ExitCode method: wait's
// 1 timed out, 2 could not wait), and 1 otherwise.
func Main(root *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

// exitCode is err's own exit code, if it has one, or 1.
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}
