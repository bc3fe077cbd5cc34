// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package cmd builds the traffic-migration command tree.
package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"open-cluster-management.io/traffic-migration/pkg/cmd/agent"
	"open-cluster-management.io/traffic-migration/pkg/cmd/check"
	"open-cluster-management.io/traffic-migration/pkg/cmd/complete"
	"open-cluster-management.io/traffic-migration/pkg/cmd/control"
	"open-cluster-management.io/traffic-migration/pkg/cmd/dashboard"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/logflags"
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
	// kubectl's flags for the hub, before or after any command's name, as kubectl
	// plugins take them; the commands that talk to the hub share them.
	hubFlags := &hubclient.Flags{}
	hubFlags.AddFlags(root.PersistentFlags())
	// Kubernetes components' logging flags (-v, --logging-format, ...) on every
	// command; the manager and the agent have them as flags of their own.
	logflags.AddTo(root)

	root.AddCommand(version.NewCommandWithManagers(out, managerVersions(hubFlags)))
	hubOptions := hub.NewOptions()
	managerCmd := manager.NewCommand(out, errOut, hubOptions.Start, hubOptions.IdentityTag)
	hubOptions.AddFlags(managerCmd.Flags())
	managerCmd.PreRunE = func(*cobra.Command, []string) error { return hubOptions.Validate() }
	root.AddCommand(serverCommand(managerCmd))
	root.AddCommand(serverCommand(agent.NewCommand(out, errOut)))
	// The names each command takes complete from the hub, read with hubFlags.
	names := complete.New(hubFlags)
	must(root.RegisterFlagCompletionFunc("namespace", names.Namespace))
	must(root.RegisterFlagCompletionFunc("context", names.Context))
	statusCmd := status.NewCommand(hubFlags, out, errOut)
	statusCmd.ValidArgsFunction = names.Policy("clusters", "all-namespaces")
	checkCmd := check.NewCommand(hubFlags, out, errOut)
	checkCmd.ValidArgsFunction = names.Policy("filename")
	suspendCmd := control.NewSuspendCommand(hubFlags, os.Stdin, out, errOut)
	suspendCmd.ValidArgsFunction = names.Policy()
	resumeCmd := control.NewResumeCommand(hubFlags, os.Stdin, out, errOut)
	resumeCmd.ValidArgsFunction = names.Policy()
	forceRemoveCmd := control.NewForceRemoveCommand(hubFlags, os.Stdin, out, errOut)
	forceRemoveCmd.ValidArgsFunction = names.PolicyThenDrainingCluster
	waitCmd := wait.NewCommand(hubFlags, out, errOut)
	waitCmd.ValidArgsFunction = names.Policy()
	must(waitCmd.RegisterFlagCompletionFunc("for", names.WaitFor))
	root.AddCommand(statusCmd, checkCmd, dashboard.NewCommand(hubFlags, out, errOut), suspendCmd, resumeCmd, forceRemoveCmd, waitCmd)
	return root
}

// managerVersions reads the versions of the managers on the hub that hub's flags
// name, in the namespace --namespace names or in every namespace, within
// managerVersionTimeout unless --request-timeout says otherwise.
func managerVersions(hub *hubclient.Flags) version.ManagersFunc {
	return func(ctx context.Context) ([]version.Manager, error) {
		cfg, _, err := hub.Load(hubclient.UserAgent("version"))
		if err != nil {
			return nil, err
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = managerVersionTimeout
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return version.ReadManagers(ctx, kube, hub.Namespace)
	}
}

// managerVersionTimeout bounds version's read of the hub: an unreachable hub makes it
// say so soon.
const managerVersionTimeout = 10 * time.Second

// must panics on an error that only a mistake in this file can cause.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// serverCommand keeps the root's flags for the hub (kubectl's) off c, a command that
// runs in a pod (manager, agent) and reads its kubeconfigs from flags of its own
// (--kubeconfig, --hub-kubeconfig): its help does not list them, and it refuses them
// rather than ignore them.
func serverCommand(c *cobra.Command) *cobra.Command {
	names := hubclient.Names()
	inherited := func(cmd *cobra.Command) []*pflag.Flag {
		var flags []*pflag.Flag
		for _, name := range names {
			if f := cmd.InheritedFlags().Lookup(name); f != nil {
				flags = append(flags, f)
			}
		}
		return flags
	}
	preRun := c.PreRunE
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		for _, f := range inherited(cmd) {
			if f.Changed {
				return fmt.Errorf("--%s is for the commands that people run against the hub: %s does not take it", f.Name, cmd.Name())
			}
		}
		if preRun != nil {
			return preRun(cmd, args)
		}
		return nil
	}
	help := c.HelpFunc()
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		var hidden []*pflag.Flag
		for _, f := range inherited(cmd) {
			if !f.Hidden {
				f.Hidden = true
				hidden = append(hidden, f)
			}
		}
		defer func() {
			for _, f := range hidden {
				f.Hidden = false
			}
		}()
		help(cmd, args)
	})
	return c
}
