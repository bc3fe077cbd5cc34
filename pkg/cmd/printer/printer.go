// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package printer is the -o flag of the commands that read the hub (status, check):
// text, wide text, and kubectl's printers from k8s.io/cli-runtime for json, yaml,
// name, jsonpath and go-template; --no-headers; and the one tab writer of every table
// the commands print, kubectl's (WriteTable).
//
// The structured outputs print the commands' views (the policy view of
// pkg/cmd/policyview, the check's report) as objects of the group
// cli.traffic.open-cluster-management.io, so that they carry an apiVersion and a kind
// like every object kubectl prints. The hub serves no such API: they are output
// formats, versioned so that scripts can rely on them. -o name prints the hub objects
// the view is of (TrafficMigrationPolicies, ManagedClusters), as kubectl get -o name
// does, so that its lines can be given to kubectl.
package printer

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// GroupVersion is the apiVersion of the views the structured outputs print.
var GroupVersion = schema.GroupVersion{Group: "cli.traffic.open-cluster-management.io", Version: "v1alpha1"}

// The kinds of the views.
const (
	// KindPolicyView is one policy (status NAME).
	KindPolicyView = "PolicyView"
	// KindPolicyViewList is the policies of a namespace or of all (status).
	KindPolicyViewList = "PolicyViewList"
	// KindFleetView is the fleet by cluster (status --clusters).
	KindFleetView = "FleetView"
	// KindCheckReport is the report of check.
	KindCheckReport = "CheckReport"
)

// The outputs that are text rather than a printer's.
const (
	// Text is the default output: a table or a description.
	Text = ""
	// Wide is the text output with more columns.
	Wide = "wide"
	// Name is the names of the hub objects shown.
	Name = "name"
)

// Flags are the -o flag and the template flags of a read command.
type Flags struct {
	// Output is the output format: "" (text), wide, json, yaml, name, or a template
	// (jsonpath=..., go-template=..., ...).
	Output string
	// NoHeaders leaves the header line out of the text output's tables.
	NoHeaders bool

	print *genericclioptions.PrintFlags
}

func (f *Flags) printFlags() *genericclioptions.PrintFlags {
	if f.print == nil {
		f.print = genericclioptions.NewPrintFlags("")
		f.print.OutputFormat = &f.Output
	}
	return f.print
}

// Formats are the values -o takes, as its help lists them.
func (f *Flags) Formats() []string {
	return append([]string{Wide}, f.printFlags().AllowedFormats()...)
}

// AddFlags adds -o (--output), the template flags (--template,
// --allow-missing-template-keys) and --no-headers to cmd.
func (f *Flags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.Output, "output", "o", f.Output,
		"output format: empty for text, or one of "+strings.Join(f.Formats(), "|"))
	complete := func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var formats []cobra.Completion
		for _, format := range f.Formats() {
			if strings.HasPrefix(format, toComplete) {
				formats = append(formats, format)
			}
		}
		return formats, cobra.ShellCompDirectiveNoFileComp
	}
	if err := cmd.RegisterFlagCompletionFunc("output", complete); err != nil {
		panic(err)
	}
	f.printFlags().TemplatePrinterFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", f.NoHeaders, "print the tables of the text output (and -o wide) without their header line")
}

// Table returns rows, a header line and then the table's lines, without the header
// when --no-headers says so.
func (f *Flags) Table(rows [][]string) [][]string {
	if f.NoHeaders && len(rows) > 0 {
		return rows[1:]
	}
	return rows
}

// WriteTable writes rows in aligned columns with kubectl's tab writer
// (printers.GetNewTabWriter), which every table of the commands is written with: each
// line starts with indent and has no trailing blanks.
func WriteTable(w io.Writer, indent string, rows [][]string) error {
	var b bytes.Buffer
	tw := printers.GetNewTabWriter(&b)
	for _, row := range rows {
		if _, err := fmt.Fprintln(tw, indent+strings.Join(row, "\t")); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			out.WriteString(strings.TrimRight(line, " \n") + "\n")
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// Validate checks that -o names a format, and that a template parses.
func (f *Flags) Validate() error {
	if f.IsText() {
		return nil
	}
	if _, err := f.printFlags().ToPrinter(); err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return fmt.Errorf("--output must be empty or one of %s, not %q", strings.Join(f.Formats(), ", "), f.Output)
		}
		return fmt.Errorf("--output %s: %w", f.Output, err)
	}
	return nil
}

// IsText says whether the output is text (the default or wide).
func (f *Flags) IsText() bool { return f.Output == Text || f.Output == Wide }

// IsWide says whether the output is wide text.
func (f *Flags) IsWide() bool { return f.Output == Wide }

// IsName says whether the output is the names of the hub objects.
func (f *Flags) IsName() bool { return f.Output == Name }

// PrintView prints view, a pointer to a struct, as an object of kind in GroupVersion with the
// printer -o names (json, yaml or a template).
func (f *Flags) PrintView(w io.Writer, kind string, view any) error {
	obj, err := Object(kind, view)
	if err != nil {
		return err
	}
	p, err := f.printFlags().ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(obj, w)
}

// Object turns view, a pointer to a struct with JSON tags, into an object of kind in
// GroupVersion: its fields with apiVersion and kind.
func Object(kind string, view any) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(view)
	if err != nil {
		return nil, fmt.Errorf("convert the %s: %w", kind, err)
	}
	obj := &unstructured.Unstructured{Object: content}
	obj.SetGroupVersionKind(GroupVersion.WithKind(kind))
	return obj, nil
}

// PrintNames prints one line per name, "<kind>.<group>/<name>" as kubectl get -o name
// does, for objects of gvk.
func PrintNames(w io.Writer, gvk schema.GroupVersionKind, names ...string) error {
	p := &printers.NamePrinter{}
	for _, name := range names {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
		obj.SetGroupVersionKind(gvk)
		if err := p.PrintObj(obj, w); err != nil {
			return err
		}
	}
	return nil
}
