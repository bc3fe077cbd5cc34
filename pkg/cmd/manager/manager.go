// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package manager is the "traffic-migration manager" command: the hub manager.
package manager

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"open-cluster-management.io/traffic-migration/pkg/cmd/logflags"
	"open-cluster-management.io/traffic-migration/pkg/hub/process"
)

// NewCommand returns the manager command. start runs the hub controllers once this
// process leads; see process.StartFunc for its contract. identityTag, when not nil, is
// asked once the flags are parsed for the end of the leader election identity
// (process.Options.IdentityTag).
func NewCommand(out, errOut io.Writer, start process.StartFunc, identityTag func() string) *cobra.Command {
	o := process.NewOptions()
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the traffic-migration hub manager",
		Long: `Run the traffic-migration hub manager on an Open Cluster Management hub.

For every TrafficMigrationPolicy the manager keeps a proxy Placement whose
PlacementDecisions mirror those of the real Placement, except that a cluster leaving
the real Placement stays listed (draining) until Prometheus shows that little traffic
still reaches its Gateway. Workloads that follow the proxy Placement therefore keep
serving on the old cluster while DNS caches expire.

The manager serves /healthz and /readyz on --health-probe-bind-address and its
Prometheus metrics on --metrics-bind-address. With --leader-elect (the default inside
a pod) replicas elect a leader through a Lease and only the leader runs controllers; a
leader that loses its lease exits with an error so that it is restarted. Log
verbosity is set with -v, and --logging-format=json writes one JSON object per line.`,
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
		if identityTag != nil {
			o.IdentityTag = identityTag()
		}
		return process.Run(cmd.Context(), o, start)
	}
	return cmd
}
