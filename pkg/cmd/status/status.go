// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package status is the "traffic-migration status" command: a read-only view, for
// people, of TrafficMigrationPolicies and the clusters they drain.
//
// The command gathers objects from the hub (policies, the proxy PlacementDecisions,
// the clusters' ManagedClusterAddOns), builds their view at one instant with package
// policyview, which the dashboard serves too, and renders it as text, JSON or YAML.
// --watch gathers from informer caches instead and renders again whenever one of the
// objects changes.
package status

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
)

// Options are the flags and arguments of the status command.
type Options struct {
	// Hub are kubectl's flags for the hub and the clients built from them; the flags'
	// Namespace is the policies' namespace, empty for the context's.
	Hub hubclient.Options
	// AllNamespaces shows the policies of every namespace.
	AllNamespaces bool
	// Watch renders again whenever a policy, decision or add-on changes.
	Watch bool
	// Print is -o: text, wide, json, yaml, name or a template (pkg/cmd/printer).
	Print printer.Flags
	// Name is the policy to show in detail; empty for a table of all policies.
	Name string
	// Clusters shows the fleet by cluster instead of policies (see clusters.go).
	Clusters bool

	Out    io.Writer
	ErrOut io.Writer

	// now is the clock the views are built with.
	now func() time.Time
	// terminal reports whether Out is a terminal, where --watch clears the screen.
	terminal func() bool
}

// NewOptions returns the default options, reading the hub through hub, the flags the
// root command shares with its commands (nil gives them flags of their own), and
// writing to out and errOut.
func NewOptions(hub *hubclient.Flags, out, errOut io.Writer) *Options {
	o := &Options{Hub: hubclient.NewOptions(hub, "status"), Out: out, ErrOut: errOut, now: time.Now}
	o.terminal = func() bool { return isTerminal(o.Out) }
	return o
}

// NewCommand returns the status command. hub are the flags for the hub that the root
// command shares with its commands; nil gives the command flags of its own.
func NewCommand(hub *hubclient.Flags, out, errOut io.Writer) *cobra.Command {
	return newCommand(NewOptions(hub, out, errOut))
}

func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show TrafficMigrationPolicies and the clusters they drain",
		Long: `Show TrafficMigrationPolicies on an Open Cluster Management hub. It only reads.

Without a NAME it lists the policies of the namespace (every namespace with -A): their
Ready condition, proxy Placement, number of active and draining clusters, and whether
Prometheus could be reached.

With a NAME it shows one policy: its Placement, proxy Placement, target Gateway and
removal check with the defaults the manager applies, its conditions, and one line per
cluster with its phase, its Gateway as the spoke agent reports it (Ready, NotReady, or
NoAgent when the add-on is not enabled or its agent is not available), the last checked
value against the threshold, the run of passing checks, how long it has been draining
and when it is checked next. The query each draining cluster was last checked with is
listed below. A cluster that the proxy's PlacementDecisions list but the status does
not, or the other way round, is marked with *.

With --clusters it lists the fleet by cluster instead: each ManagedCluster's agent, the
Gateways it reports and their readiness, its metrics labels, and the policies that drain
it, as the manager's Draining condition on its ManagedClusterAddOn names them.

The kubeconfig is found as kubectl finds it: --kubeconfig, $KUBECONFIG, ~/.kube/config.
--watch shows the view again whenever a policy, PlacementDecision or add-on changes,
until interrupted.`,
		Example: `  # The policies of the current namespace, and of every namespace
  traffic-migration status
  traffic-migration status -A

  # One policy, kept up to date as its clusters drain
  traffic-migration status example-traffic-migration -n gateway-system --watch

  # The same as JSON, for scripts
  traffic-migration status example-traffic-migration -n gateway-system -o json

  # The fleet by cluster: Gateways, labels and the policies that drain each cluster
  traffic-migration status --clusters`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetOut(o.Out)
	cmd.SetErr(o.ErrOut)
	o.AddFlags(cmd)
	return cmd
}

// AddFlags adds the command's flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.Hub.AddTo(cmd)
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "list the policies of every namespace")
	fs.BoolVarP(&o.Watch, "watch", "w", o.Watch, "show the view again whenever a policy, PlacementDecision or add-on changes, until interrupted")
	o.Print.AddFlags(cmd)
	fs.BoolVar(&o.Clusters, "clusters", o.Clusters, "show the fleet by cluster: each ManagedCluster's agent, Gateways, labels and the policies that drain it")
}

// Validate checks the flags and arguments.
func (o *Options) Validate() error {
	if err := o.Print.Validate(); err != nil {
		return err
	}
	if o.AllNamespaces && o.Name != "" {
		return fmt.Errorf("a policy NAME cannot be combined with --all-namespaces: give its namespace with -n")
	}
	if o.Clusters && (o.Name != "" || o.Watch) {
		return fmt.Errorf("--clusters shows the whole fleet: it takes no policy NAME and no --watch")
	}
	if o.AllNamespaces && o.Hub.Namespace != "" {
		return fmt.Errorf("--namespace and --all-namespaces cannot be combined")
	}
	return nil
}

// Run shows the view once, or with Watch until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	c, namespace, err := o.Hub.Clients()
	if err != nil {
		return err
	}
	if o.Clusters {
		return o.runClusters(ctx, c)
	}
	q := query{namespace: namespace, name: o.Name, detail: o.Name != "" || !o.Print.IsText() && !o.Print.IsName()}
	if o.AllNamespaces {
		q.namespace = ""
	}
	if o.Watch {
		return o.watch(ctx, c, q)
	}
	objs, err := gather(ctx, apiReader{c}, q)
	if err != nil {
		return err
	}
	text, err := o.render(objs, q)
	if err != nil {
		return err
	}
	_, err = o.Out.Write(text)
	return err
}

// render builds the views of objs at the current time and renders them as the
// options ask: one policy in detail or a table, as text, JSON or YAML.
func (o *Options) render(objs []policyview.Objects, q query) ([]byte, error) {
	now := o.now()
	views := make([]policyview.Policy, 0, len(objs))
	for _, obj := range objs {
		views = append(views, policyview.Build(obj, now))
	}
	var b bytes.Buffer
	var err error
	switch {
	case o.Print.IsName():
		names := make([]string, 0, len(views))
		for _, v := range views {
			names = append(names, v.Name)
		}
		err = printer.PrintNames(&b, trafficv1alpha1.SchemeGroupVersion.WithKind("TrafficMigrationPolicy"), names...)
	case !o.Print.IsText() && q.name != "":
		if len(views) != 1 {
			return nil, errors.New("internal error: no view of the named policy")
		}
		err = o.Print.PrintView(&b, printer.KindPolicyView, &views[0])
	case !o.Print.IsText():
		list := policyview.NewList(q.namespace, views)
		err = o.Print.PrintView(&b, printer.KindPolicyViewList, &list)
	case q.name != "":
		if len(views) != 1 {
			return nil, errors.New("internal error: no view of the named policy")
		}
		err = renderDetail(&b, views[0])
	default:
		err = renderTable(&b, views, q.namespace, o.Print.IsWide(), o.Print.NoHeaders)
	}
	return b.Bytes(), err
}
