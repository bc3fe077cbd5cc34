// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package version is the "traffic-migration version" command: the version of this
// client, and, in the main binary, of the manager installed on the hub.
package version

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"open-cluster-management.io/traffic-migration/pkg/cmd/output"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// ManagersFunc reads the versions of the managers installed on the hub.
type ManagersFunc func(ctx context.Context) ([]Manager, error)

// Options are the flags of the version command.
type Options struct {
	// Output is "" for text, "json" or "yaml".
	Output string
	// Client prints the client's version only, without asking the hub.
	Client bool
	Out    io.Writer

	// managers reads the managers' versions; nil for a command that prints the
	// client's only (the agent's binary).
	managers ManagersFunc
}

// Versions is what the command prints: the client's version information, and the
// managers of the hub.
type Versions struct {
	version.Info
	// Managers are the managers found on the hub.
	Managers []Manager `json:"managers,omitempty"`
	// ManagerUnknown says why the manager's version is not known: the hub could not
	// be read, or no manager is installed.
	ManagerUnknown string `json:"managerUnknown,omitempty"`
}

// NewCommand returns the version command, which prints the client's version: the
// agent's binary, which does not talk to the hub as a person does, has this one.
func NewCommand(out io.Writer) *cobra.Command {
	return newCommand(&Options{Out: out})
}

// NewCommandWithManagers returns the version command that prints the version of the
// managers that managers reads from the hub, beside the client's.
func NewCommandWithManagers(out io.Writer, managers ManagersFunc) *cobra.Command {
	o := &Options{Out: out, managers: managers}
	cmd := newCommand(o)
	cmd.Short = "Print the version of traffic-migration and of the manager on the hub"
	cmd.Long = `Print the version of this client and of the traffic-migration manager installed on
the hub: the tag of the image its Deployment runs (the Deployment labelled
` + ManagerSelector + `, in every namespace, or in the
namespace --namespace names). When the hub cannot be read, or has no manager, it says
why the manager's version is unknown, and still exits 0. --client asks no hub.`
	cmd.Example = `  # The client and the manager
  traffic-migration version

  # The client only, as JSON
  traffic-migration version --client -o json`
	cmd.Flags().BoolVar(&o.Client, "client", o.Client, "print the client's version only, without asking the hub")
	return cmd
}

func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of traffic-migration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// AddFlags adds the command's flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, `output format: "" (text), "json" or "yaml"`)
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.Output != "" && !slices.Contains(output.Formats, o.Output) {
		return fmt.Errorf("--output must be empty, json or yaml, not %q", o.Output)
	}
	return nil
}

// Run prints the versions.
func (o *Options) Run(ctx context.Context) error {
	v := Versions{Info: version.Get()}
	if o.managers != nil && !o.Client {
		if ctx == nil {
			ctx = context.Background()
		}
		managers, err := o.managers(ctx)
		switch {
		case err != nil:
			v.ManagerUnknown = err.Error()
		case len(managers) == 0:
			v.ManagerUnknown = "no traffic-migration manager is installed on the hub (no Deployment labelled " + ManagerSelector + ")"
		}
		v.Managers = managers
	}
	if o.Output != "" {
		return output.Write(o.Out, o.Output, v)
	}
	client := fmt.Sprintf("traffic-migration %s (%s, %s)", v.Version, v.GoVersion, v.Platform)
	if o.managers == nil {
		_, err := fmt.Fprintln(o.Out, client)
		return err
	}
	lines := []string{"Client Version: " + client}
	for _, m := range v.Managers {
		version := m.Version
		if version == "" {
			version = "unknown (its image has no tag)"
		}
		lines = append(lines, fmt.Sprintf("Manager Version: %s (Deployment %s/%s, image %s)", version, m.Namespace, m.Deployment, m.Image))
	}
	if v.ManagerUnknown != "" {
		lines = append(lines, "Manager Version: unknown: "+v.ManagerUnknown)
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(o.Out, l); err != nil {
			return err
		}
	}
	return nil
}
