// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package agent is the spoke agent's command: "traffic-migration agent" in the main
// binary, and the root of the slim traffic-migration-agent binary that the add-on
// deploys on the spokes.
package agent

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	spokeagent "open-cluster-management.io/traffic-migration/pkg/agent"
	"open-cluster-management.io/traffic-migration/pkg/cmd/logflags"
	"open-cluster-management.io/traffic-migration/pkg/cmd/version"
)

// BinaryName is the agent's own binary: the agent command alone, without the hub's
// code, so that the process the add-on runs on every spoke maps less program text.
const BinaryName = "traffic-migration-agent"

// NewCommand returns the agent command.
func NewCommand(out, errOut io.Writer) *cobra.Command {
	o := spokeagent.NewOptions()
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the traffic-migration spoke agent",
		Long: `Run the traffic-migration agent on a managed cluster. OCM's add-on framework deploys it
on every cluster where the traffic-migration add-on is enabled.

The agent watches the cluster's Gateways (gateway.networking.k8s.io/v1, all namespaces,
those matching --gateway-label-selector, at most 64) and reports them as conditions of
the add-on's ManagedClusterAddOn in the cluster's namespace on the hub:

  gateway.traffic.open-cluster-management.io/<namespace>.<name>
      True when the Gateway is Programmed for its current generation; the message
      names its addresses.
  traffic.open-cluster-management.io/GatewayAPI
      False (CRDNotInstalled) while the cluster has no Gateway API. The agent notices
      the Gateway CRD being installed or removed without a restart.
  traffic.open-cluster-management.io/ClusterLabels
      cluster_name, cluster_id (the UID of kube-system) and --metrics-labels, which
      the hub's metrics queries use.

It writes no other condition and changes none it does not own. It serves /healthz
and /readyz on --health-probe-bind-address; /readyz answers 200 once its caches have
synced, which makes its Deployment available and so the add-on Available on the hub.
Log verbosity is set with -v, and --logging-format=json writes one JSON object per
line.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	o.AddFlags(cmd.Flags())
	logflags.AddTo(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		defer klog.Flush()
		return o.Run(cmd.Context())
	}
	return cmd
}

// NewBinaryCommand returns the root command of the traffic-migration-agent binary: the
// agent command itself, with the same flags at the top level
// ("traffic-migration-agent --hub-kubeconfig=..." runs what
// "traffic-migration agent --hub-kubeconfig=..." runs), and a version subcommand.
func NewBinaryCommand(out, errOut io.Writer) *cobra.Command {
	cmd := NewCommand(out, errOut)
	cmd.Use = BinaryName
	cmd.AddCommand(version.NewCommand(out))
	// A daemon that people do not type: no shell completion command.
	cmd.CompletionOptions.DisableDefaultCmd = true
	return cmd
}
