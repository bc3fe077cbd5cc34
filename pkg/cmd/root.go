// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package cmd builds the traffic-migration command tree.
package cmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"open-cluster-management.io/traffic-migration/pkg/cmd/agent"
	"open-cluster-management.io/traffic-migration/pkg/cmd/check"
	"open-cluster-management.io/traffic-migration/pkg/cmd/control"
	"open-cluster-management.io/traffic-migration/pkg/cmd/dashboard"
	"open-cluster-management.io/traffic-migration/pkg/cmd/manager"
	"open-cluster-management.io/traffic-migration/pkg/cmd/status"
	"open-cluster-management.io/traffic-migration/pkg/cmd/version"
	"open-cluster-management.io/traffic-migration/pkg/cmd/wait"
	"open-cluster-management.io/traffic-migration/pkg/hub"
)

// NewRootCommand returns the traffic-migration root command with its subcommands.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "traffic-migration",
		Short: "Move Gateways between OCM clusters without dropping traffic",
		Long: `traffic-migration is an Open Cluster Management add-on. Its hub manager keeps a proxy
Placement whose decisions mirror a real Placement, except that a cluster leaving the
real Placement stays listed until Prometheus shows that little traffic still reaches
its Gateway.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(version.NewCommand(out))
	hubOptions := hub.NewOptions()
	managerCmd := manager.NewCommand(out, errOut, hubOptions.Start)
	hubOptions.AddFlags(managerCmd.Flags())
	managerCmd.PreRunE = func(*cobra.Command, []string) error { return hubOptions.Validate() }
	root.AddCommand(managerCmd)
	root.AddCommand(agent.NewCommand(out, errOut))
	root.AddCommand(status.NewCommand(out, errOut))
	root.AddCommand(check.NewCommand(out, errOut))
	root.AddCommand(dashboard.NewCommand(out, errOut))
	root.AddCommand(control.NewSuspendCommand(os.Stdin, out, errOut))
	root.AddCommand(control.NewResumeCommand(os.Stdin, out, errOut))
	root.AddCommand(control.NewForceRemoveCommand(os.Stdin, out, errOut))
	root.AddCommand(wait.NewCommand(out))
	return root
}
