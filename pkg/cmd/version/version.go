// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package version is the "traffic-migration version" command.
package version

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"open-cluster-management.io/traffic-migration/pkg/cmd/output"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// Options are the flags of the version command.
type Options struct {
	// Output is "" for one line of text, "json" or "yaml".
	Output string
	Out    io.Writer
}

// NewCommand returns the version command.
func NewCommand(out io.Writer) *cobra.Command {
	o := &Options{Out: out}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of traffic-migration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
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

// Run prints the version.
func (o *Options) Run() error {
	info := version.Get()
	if o.Output != "" {
		return output.Write(o.Out, o.Output, info)
	}
	_, err := fmt.Fprintf(o.Out, "traffic-migration %s (%s, %s)\n", info.Version, info.GoVersion, info.Platform)
	return err
}
