// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package check is the "traffic-migration check" command: a dry run, now, of a
// policy's metrics check for every cluster of its real Placement and every cluster
// that drains, with what the removal gate would still wait for.
//
// It reads Prometheus through the policy's Secret with the manager's own check code (package promcheck)
// (promcheck.Clients, promcheck.Run), and it decides with the manager's own pure
// decision function (decision.Decide) on what it reads of the hub as the manager does
// (gather.Read), so what it prints is the manager's rule and not a copy of it. It
// writes nothing.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
)

// Options are the flags and arguments of the check command.
type Options struct {
	// Hub are kubectl's flags for the hub and the clients built from them.
	Hub hubclient.Options
	// File is a policy manifest to check instead of a policy on the hub.
	File string
	// PrometheusURL, when set, is queried without credentials instead of reading the
	// policy's Secret: for a policy whose Secret does not exist yet.
	PrometheusURL string
	// Print is -o: text, wide, json, yaml, name or a template (pkg/cmd/printer).
	Print printer.Flags
	// Timeout bounds each query.
	Timeout time.Duration
	// Name is the policy on the hub to check.
	Name string

	Out    io.Writer
	ErrOut io.Writer

	// now is the clock of the check.
	now func() time.Time
}

// NewOptions returns the default options, reading the hub through hub, the flags the
// root command shares with its commands (nil gives them flags of their own), and
// writing to out and errOut.
func NewOptions(hub *hubclient.Flags, out, errOut io.Writer) *Options {
	return &Options{Hub: hubclient.NewOptions(hub, "check"), Out: out, ErrOut: errOut, Timeout: 10 * time.Second, now: time.Now}
}

// NewCommand returns the check command. hub are the flags for the hub that the root
// command shares with its commands; nil gives the command flags of its own.
func NewCommand(hub *hubclient.Flags, out, errOut io.Writer) *cobra.Command {
	o := NewOptions(hub, out, errOut)
	cmd := &cobra.Command{
		Use:   "check [NAME | -f FILE]",
		Short: "Run a policy's metrics check now, as a dry run, for every cluster it concerns",
		Long: `Run a TrafficMigrationPolicy's metrics check now, without changing anything, for every
cluster of its real Placement and every cluster that is draining (in its proxy Placement
but no longer in the real one).

For each cluster it shows the query with its template filled in, the value Prometheus
returns, and whether it passes the threshold. For a draining cluster it also shows what
the removal gate would still wait for (the minimum drain duration, more passing checks in
a row, another cluster with the Gateway ready), decided by the manager's own rules on the
policy's status and this check's results. Like the manager, it measures how far apart
the samples of trafficShare's series are in Prometheus, and warns (WindowTooShort) when
the window holds fewer than 4 of them.

The policy is one on the hub (NAME), or a manifest that has not been applied (-f FILE,
"-" for standard input). Prometheus is read through the policy's Secret, exactly as the
manager reads it: the same URL, authentication, TLS and X-Scope-OrgID. You need the right
to get that Secret; --prometheus-url queries a Prometheus without credentials instead,
for a policy whose Secret does not exist yet.

It exits with an error when a query cannot be run for some cluster (Prometheus
unreachable, the query rejected, a template that does not resolve). A check that runs and
fails is not an error.`,
		Example: `  # Would the check of a policy on the hub pass now?
  traffic-migration check example-traffic-migration -n gateway-system

  # A policy not applied yet, against a Prometheus of your own
  traffic-migration check -f policy.yaml --prometheus-url http://localhost:9090

  # The same as JSON, for scripts
  traffic-migration check example-traffic-migration -n gateway-system -o json`,
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
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	o.AddFlags(cmd)
	return cmd
}

// AddFlags adds the command's flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.Hub.AddTo(cmd)
	fs.StringVarP(&o.File, "filename", "f", o.File, `a policy manifest to check instead of a policy on the hub ("-": standard input)`)
	fs.StringVar(&o.PrometheusURL, "prometheus-url", o.PrometheusURL, "query this Prometheus, without credentials, instead of the one the policy's Secret names")
	o.Print.AddFlags(cmd)
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long each query may take")
}

// Validate checks the flags and arguments.
func (o *Options) Validate() error {
	switch {
	case o.Name == "" && o.File == "":
		return errors.New("name a policy on the hub, or give a policy manifest with -f")
	case o.Name != "" && o.File != "":
		return errors.New("give a policy NAME or -f FILE, not both")
	case o.Print.Validate() != nil:
		return o.Print.Validate()
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive, not %s", o.Timeout)
	}
	return nil
}

// Run runs the check and prints its report. It returns an error when the policy or
// its Secret cannot be read, or when a query could not be run for some cluster.
func (o *Options) Run(ctx context.Context) error {
	c, namespace, err := o.Hub.Clients()
	if err != nil {
		return err
	}
	policy, source, err := o.policy(ctx, c, namespace)
	if err != nil {
		return err
	}
	querier, prometheus, err := o.querier(ctx, c, policy)
	if err != nil {
		return err
	}
	hub := gather.Read(ctx, apiReader{c}, policy, decision.PolicyFromSpec(&policy.Spec), o.now())
	if hub.ProxyErr != nil {
		return hub.ProxyErr
	}
	report := run(ctx, policy, hub, querier)
	report.Source, report.Prometheus = source, prometheus
	if err := render(o.Out, &o.Print, report); err != nil {
		return err
	}
	if failed := report.failedClusters(); len(failed) > 0 {
		return fmt.Errorf("the query could not be run for %s: see the message above", strings.Join(failed, ", "))
	}
	return nil
}

// policy reads the policy to check: from the hub, or from the manifest file, in the
// namespace of its metadata or else the command's.
func (o *Options) policy(ctx context.Context, c *hubclient.Clients, namespace string) (*trafficv1alpha1.TrafficMigrationPolicy, string, error) {
	if o.File == "" {
		p, err := getPolicy(ctx, c, namespace, o.Name)
		return p, "the hub", err
	}
	var data []byte
	var err error
	if o.File == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(o.File)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the policy manifest: %w", err)
	}
	p, err := parseManifest(data)
	if err != nil {
		return nil, "", fmt.Errorf("read the policy manifest %s: %w", o.File, err)
	}
	if p.Namespace == "" {
		p.Namespace = namespace
	} else if o.Hub.Namespace != "" && o.Hub.Namespace != p.Namespace {
		return nil, "", fmt.Errorf("the manifest's namespace %s differs from --namespace %s", p.Namespace, o.Hub.Namespace)
	}
	return p, o.File, nil
}

// parseManifest reads one TrafficMigrationPolicy from YAML or JSON, refusing unknown
// fields so that a misspelt field is reported instead of ignored.
func parseManifest(data []byte) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	var p trafficv1alpha1.TrafficMigrationPolicy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, err
	}
	if p.Kind != "TrafficMigrationPolicy" || p.APIVersion != trafficv1alpha1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("want kind TrafficMigrationPolicy of apiVersion %s, got kind %q of apiVersion %q (one document only)",
			trafficv1alpha1.SchemeGroupVersion, p.Kind, p.APIVersion)
	}
	if p.Name == "" {
		return nil, errors.New("metadata.name is not set")
	}
	return &p, nil
}
