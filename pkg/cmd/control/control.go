// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package control holds the commands that change a policy as an operator would by
// hand: suspend, resume and force-remove. Each is one patch of the policy with the
// CLI's own field manager (FieldManager), which the manager then acts on and records
// with an event as it does for the same edit made with kubectl.
package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficv1alpha1client "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/typed/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

// FieldManager is the field manager of the CLI's writes.
const FieldManager = "traffic-migration-cli"

// options are what the three commands share.
type options struct {
	// hub are kubectl's flags and the clients built from them.
	hub    hubclient.Options
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	// yes skips force-remove's confirmation.
	yes bool
	// isTerminal tells whether in is a terminal a person answers at.
	isTerminal func(io.Reader) bool
}

// newOptions returns the options of the command verb. hub are the flags for the hub
// that the root command shares with its commands; nil gives the command flags of its
// own.
func newOptions(hub *hubclient.Flags, verb string, in io.Reader, out, errOut io.Writer) *options {
	return &options{hub: hubclient.NewOptions(hub, verb), in: in, out: out, errOut: errOut, isTerminal: isTerminal}
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewSuspendCommand returns the suspend command.
func NewSuspendCommand(hub *hubclient.Flags, in io.Reader, out, errOut io.Writer) *cobra.Command {
	return newSuspendCommand(newOptions(hub, "suspend", in, out, errOut), true)
}

// NewResumeCommand returns the resume command.
func NewResumeCommand(hub *hubclient.Flags, in io.Reader, out, errOut io.Writer) *cobra.Command {
	return newSuspendCommand(newOptions(hub, "resume", in, out, errOut), false)
}

func newSuspendCommand(o *options, suspend bool) *cobra.Command {
	use, short, long := "suspend NAME", "Stop every removal of a policy's draining clusters", `Suspend a TrafficMigrationPolicy: set spec.suspend, so that no draining cluster leaves
its proxy Placement, by its checks or by its deadline, until the policy is resumed. The
proxy still follows the real Placement's additions, and the checks go on, so that the
status keeps telling where each drain stands. The policy's Draining condition says
Suspended, and an event records it.`
	example := `  # Hold every draining cluster of a policy while an incident is looked into
  traffic-migration suspend example-traffic-migration -n gateway-system`
	if !suspend {
		use, short, long = "resume NAME", "Let a suspended policy remove its draining clusters again", `Resume a suspended TrafficMigrationPolicy: clear spec.suspend, so that its draining
clusters leave their proxy Placement again when their checks pass (or at their deadline).`
		example = `  traffic-migration resume example-traffic-migration -n gateway-system`
	}
	cmd := &cobra.Command{
		Use:           use,
		Short:         short,
		Long:          long,
		Example:       example,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.setSuspend(cmd, args[0], suspend)
		},
	}
	o.hub.AddTo(cmd)
	return cmd
}

// read returns the policies' client, the policy name and "namespace/name".
func (o *options) read(ctx context.Context, name string) (trafficv1alpha1client.TrafficMigrationPolicyInterface, *trafficv1alpha1.TrafficMigrationPolicy, string, error) {
	c, namespace, err := o.hub.Clients()
	if err != nil {
		return nil, nil, "", err
	}
	ref := namespace + "/" + name
	policies := c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace)
	p, err := policies.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, "", hubclient.PolicyError(c.Traffic.Discovery(), err, "get", namespace, name)
	}
	return policies, p, ref, nil
}

// setSuspend patches spec.suspend, unless it already has the value asked for.
func (o *options) setSuspend(cmd *cobra.Command, name string, suspend bool) error {
	policies, p, ref, err := o.read(cmd.Context(), name)
	if err != nil {
		return err
	}
	if p.Spec.Suspend == suspend {
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s is already %s\n", ref, suspendedWord(suspend))
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}})
	if err != nil {
		return err
	}
	if _, err := policies.Patch(cmd.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("%s policy %s: %w", map[bool]string{true: "suspend", false: "resume"}[suspend], ref, err)
	}
	if suspend {
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s suspended: no draining cluster leaves its proxy until 'resume'\n", ref)
	} else {
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s resumed\n", ref)
	}
	return nil
}

func suspendedWord(suspend bool) string {
	if suspend {
		return "suspended"
	}
	return "not suspended"
}

// NewForceRemoveCommand returns the force-remove command.
func NewForceRemoveCommand(hub *hubclient.Flags, in io.Reader, out, errOut io.Writer) *cobra.Command {
	return newForceRemoveCommand(newOptions(hub, "force-remove", in, out, errOut))
}

func newForceRemoveCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "force-remove NAME CLUSTER",
		Short: "Remove a draining cluster from a policy's proxy now, whatever its checks say",
		Long: `Remove a draining cluster from a TrafficMigrationPolicy's proxy Placement now, whatever
its checks, its minimum drain or a suspension say: the workloads that follow the proxy
leave that cluster, and any traffic still reaching it is dropped. The command names the
cluster in the policy's force-remove annotation; the manager removes it once, records
an event, and says in one if it could not (the cluster is back in the real Placement,
or no longer draining).

It asks for confirmation at a terminal; elsewhere (a script, a pipeline) it refuses
unless --yes is given.`,
		Example: `  traffic-migration force-remove example-traffic-migration cluster1 -n gateway-system
  traffic-migration force-remove example-traffic-migration cluster1 -n gateway-system --yes`,
		Args:          cobra.ExactArgs(2),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.forceRemove(cmd, args[0], args[1])
		},
	}
	o.hub.AddTo(cmd)
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "remove without asking for confirmation")
	return cmd
}

// forceRemove adds cluster to the policy's force-remove annotation, after checking
// that it drains and that the user confirmed.
func (o *options) forceRemove(cmd *cobra.Command, name, cluster string) error {
	policies, p, ref, err := o.read(cmd.Context(), name)
	if err != nil {
		return err
	}
	if err := drains(p, cluster); err != nil {
		return fmt.Errorf("policy %s: %w", ref, err)
	}
	names := trafficv1alpha1.ParseForceRemove(p.Annotations[trafficv1alpha1.ForceRemoveAnnotation])
	if slices.Contains(names, cluster) {
		// Asked for already: writing the same annotation again would change nothing.
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s: %s is already named for removal; the policy's events say when it goes\n", ref, cluster)
		return nil
	}
	if !o.yes {
		if !o.isTerminal(o.in) {
			return fmt.Errorf("refusing to force-remove %s from the proxy of %s without confirmation: this is not a terminal; pass --yes", cluster, ref)
		}
		fmt.Fprintf(o.errOut, "Remove %s from the proxy Placement of %s now? Its traffic, if any still reaches it, is dropped. [y/N] ", cluster, ref)
		answer, _ := bufio.NewReader(o.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return fmt.Errorf("not removed: %s stays in the proxy of %s", cluster, ref)
		}
	}
	names = append(names, cluster)
	slices.Sort(names)
	// The resourceVersion makes the patch fail on a policy changed since it was read,
	// rather than overwrite another name added meanwhile.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": p.ResourceVersion,
		"annotations":     map[string]string{trafficv1alpha1.ForceRemoveAnnotation: strings.Join(names, ",")},
	}})
	if err != nil {
		return err
	}
	if _, err := policies.Patch(cmd.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("force-remove %s from policy %s: %w", cluster, ref, err)
	}
	fmt.Fprintf(o.out, "trafficmigrationpolicy %s: %s will be removed from its proxy; the policy's events say when\n", ref, cluster)
	return nil
}

// drains fails unless the policy's status lists cluster as draining or held: the
// manager would remove nothing else, and says so only in an event.
func drains(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) error {
	for _, row := range p.Status.Clusters {
		if row.Name != cluster {
			continue
		}
		if row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld {
			return nil
		}
		return fmt.Errorf("cluster %s is %s, not draining: only a draining cluster can be force-removed", cluster, row.Phase)
	}
	return fmt.Errorf("cluster %s is not in the status: only a draining cluster can be force-removed", cluster)
}
