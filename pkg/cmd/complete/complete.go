// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package complete completes, for the shells (through cobra's __complete command, which
// the completion scripts and kubectl's plugin completion run), the names the commands
// take: the TrafficMigrationPolicies of the namespace, the clusters of a policy, the
// values of wait --for, namespaces and the kubeconfig's contexts. It reads the hub with
// the root's flags for it (--kubeconfig, --context, -n, ...), as the command would,
// and offers nothing, rather than an error, when the hub cannot be read.
package complete

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

// timeout bounds the reads of one completion: a shell waits for it.
const timeout = 5 * time.Second

// Completer completes names from the hub.
type Completer struct {
	hub *hubclient.Flags
	// clients builds the hub clients and says which namespace the flags name.
	clients func() (*hubclient.Clients, string, error)
}

// New returns a completer that reads the hub that hub's flags name.
func New(hub *hubclient.Flags) *Completer {
	return &Completer{hub: hub, clients: func() (*hubclient.Clients, string, error) { return hub.NewClients(hubclient.UserAgent("completion")) }}
}

// Policy completes the name of a policy of the namespace as the first argument, and
// nothing after it, nor while any of the flags unless names is set (check -f, status
// --clusters take no policy).
func (c *Completer) Policy(unless ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 || anySet(cmd, unless) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.policies(cmd, toComplete)
	}
}

// PolicyThenDrainingCluster completes a policy as the first argument, then one of its
// clusters that drain (Draining or Held): force-remove's arguments.
func (c *Completer) PolicyThenDrainingCluster(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return c.policies(cmd, toComplete)
	case 1:
		return c.clusters(cmd, args[0], toComplete, func(r trafficv1alpha1.ClusterStatus) bool {
			return r.Phase == trafficv1alpha1.ClusterDraining || r.Phase == trafficv1alpha1.ClusterHeld
		}, false)
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// WaitFor completes wait --for: drained, removed=CLUSTER for each cluster of the
// policy named by the first argument (a row of its status, or a cluster of its real
// Placement), and condition=TYPE for each condition a policy has.
func (c *Completer) WaitFor(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const removed, condition = "removed=", "condition="
	switch {
	case strings.HasPrefix(toComplete, removed):
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, directive := c.clusters(cmd, args[0], strings.TrimPrefix(toComplete, removed), func(trafficv1alpha1.ClusterStatus) bool { return true }, true)
		for i := range names {
			names[i] = removed + names[i]
		}
		return names, directive
	case strings.HasPrefix(toComplete, condition):
		var values []string
		for _, typ := range []string{trafficv1alpha1.ConditionReady, trafficv1alpha1.ConditionPrometheusReachable,
			trafficv1alpha1.ConditionDraining, trafficv1alpha1.ConditionHeld, trafficv1alpha1.ConditionDNSPublished} {
			values = append(values, condition+typ, condition+typ+"=False")
		}
		return filter(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	// removed= and condition= go on with what follows the =.
	return filter([]string{"drained", removed, condition}, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// Namespace completes --namespace with the hub's namespaces.
func (c *Completer) Namespace(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	clients, _, err := c.clients()
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(commandContext(cmd), timeout)
	defer cancel()
	list, err := clients.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail(err)
	}
	return filter(namesOf(list.Items), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// Context completes --context with the contexts of the kubeconfig.
func (c *Completer) Context(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	config, err := c.hub.ConfigFlags().ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return fail(err)
	}
	return filter(slices.Collect(maps.Keys(config.Contexts)), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// policies completes the names of the policies of the namespace.
func (c *Completer) policies(cmd *cobra.Command, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	clients, namespace, err := c.clients()
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(commandContext(cmd), timeout)
	defer cancel()
	list, err := clients.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail(err)
	}
	return filter(namesOf(list.Items), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// clusters completes the clusters of policy whose status rows keep says, and with
// real the clusters of its real Placement's decisions too.
func (c *Completer) clusters(cmd *cobra.Command, policy, toComplete string, keep func(trafficv1alpha1.ClusterStatus) bool, real bool) ([]cobra.Completion, cobra.ShellCompDirective) {
	clients, namespace, err := c.clients()
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(commandContext(cmd), timeout)
	defer cancel()
	p, err := clients.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, policy, metav1.GetOptions{})
	if err != nil {
		return fail(err)
	}
	var names []string
	for _, r := range p.Status.Clusters {
		if keep(r) {
			names = append(names, r.Name)
		}
	}
	if real {
		selector := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: p.Spec.PlacementRef.Name}).String()
		decisions, err := clients.Cluster.ClusterV1beta1().PlacementDecisions(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			cobra.CompDebugln("read the real Placement's decisions: "+err.Error(), false)
		} else {
			for _, d := range decisions.Items {
				for _, dec := range d.Status.Decisions {
					names = append(names, dec.ClusterName)
				}
			}
		}
	}
	return filter(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// filter returns the names that start with prefix, sorted, each once.
func filter(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// namesOf are the names of the objects.
func namesOf[T any, P interface {
	*T
	GetName() string
}](objects []T) []string {
	names := make([]string, 0, len(objects))
	for i := range objects {
		names = append(names, P(&objects[i]).GetName())
	}
	return names
}

// fail offers nothing: a completion that cannot read the hub says why only in cobra's
// debug log (BASH_COMP_DEBUG_FILE), not in the middle of the user's line.
func fail(err error) ([]cobra.Completion, cobra.ShellCompDirective) {
	cobra.CompDebugln(err.Error(), false)
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// anySet reports whether any of the flags names is set on cmd.
func anySet(cmd *cobra.Command, names []string) bool {
	for _, name := range names {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return true
		}
	}
	return false
}

// commandContext is cmd's context, or the background when it has none.
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
