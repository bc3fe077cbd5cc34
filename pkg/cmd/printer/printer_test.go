// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package printer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type view struct {
	Name  string   `json:"name"`
	Items []string `json:"items"`
}

// TestFormats: every format -o lists is accepted, and a wrong one is refused with the
// list of those it takes.
func TestFormats(t *testing.T) {
	f := &Flags{}
	formats := f.Formats()
	for _, want := range []string{"wide", "json", "yaml", "name", "jsonpath", "go-template"} {
		found := false
		for _, format := range formats {
			found = found || format == want
		}
		if !found {
			t.Errorf("-o does not offer %s: %v", want, formats)
		}
	}
	for _, format := range []string{"", "wide", "json", "yaml", "name", "jsonpath={.name}", "go-template={{.name}}"} {
		if err := (&Flags{Output: format}).Validate(); err != nil {
			t.Errorf("-o %q: %v", format, err)
		}
	}
	err := (&Flags{Output: "table"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `not "table"`) || !strings.Contains(err.Error(), "jsonpath") {
		t.Errorf("-o table: %v", err)
	}
	if err := (&Flags{Output: "go-template={{.name"}).Validate(); err == nil {
		t.Error("a template that does not parse is accepted")
	}
}

// TestPrintView: the structured outputs carry the view's apiVersion and kind.
func TestPrintView(t *testing.T) {
	v := &view{Name: "move", Items: []string{"a", "b"}}
	for format, want := range map[string]string{
		"json":                   "{\n    \"apiVersion\": \"cli.traffic.open-cluster-management.io/v1alpha1\",\n    \"items\": [\n        \"a\",\n        \"b\"\n    ],\n    \"kind\": \"PolicyView\",\n    \"name\": \"move\"\n}\n",
		"yaml":                   "apiVersion: cli.traffic.open-cluster-management.io/v1alpha1\nitems:\n- a\n- b\nkind: PolicyView\nname: move\n",
		"jsonpath={.items[1]}":   "b",
		"go-template={{.kind}}":  "PolicyView",
		"jsonpath={.apiVersion}": "cli.traffic.open-cluster-management.io/v1alpha1",
	} {
		var out bytes.Buffer
		if err := (&Flags{Output: format}).PrintView(&out, KindPolicyView, v); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		if out.String() != want {
			t.Errorf("-o %s printed %q, want %q", format, out.String(), want)
		}
	}
}

// TestPrintNames: -o name prints kubectl's names, which kubectl takes back.
func TestPrintNames(t *testing.T) {
	var out bytes.Buffer
	gvk := schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"}
	if err := PrintNames(&out, gvk, "cluster1", "cluster2"); err != nil {
		t.Fatal(err)
	}
	want := "managedcluster.cluster.open-cluster-management.io/cluster1\nmanagedcluster.cluster.open-cluster-management.io/cluster2\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// TestAddFlags: -o and the template flags are the command's.
func TestAddFlags(t *testing.T) {
	f := &Flags{}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	f.AddFlags(cmd)
	cmd.SetArgs([]string{"-o", "go-template", "--template", "{{.name}}"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := f.PrintView(&out, KindPolicyView, &view{Name: "move"}); err != nil || out.String() != "move" {
		t.Errorf("--template printed %q, %v", out.String(), err)
	}
}

// TestWriteTable: kubectl's columns (three blanks apart, six wide at least), the
// indent, no trailing blanks; --no-headers drops the header line.
func TestWriteTable(t *testing.T) {
	rows := [][]string{{"NAME", "READY", "MESSAGE"}, {"move-web", "True", ""}, {"a", "False", "held"}}
	var out bytes.Buffer
	if err := WriteTable(&out, "  ", rows); err != nil {
		t.Fatal(err)
	}
	want := "  NAME       READY   MESSAGE\n  move-web   True\n  a          False   held\n"
	if out.String() != want {
		t.Errorf("printed\n%q, want\n%q", out.String(), want)
	}
	f := &Flags{}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	f.AddFlags(cmd)
	cmd.SetArgs([]string{"--no-headers"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := WriteTable(&out, "", f.Table(rows)); err != nil {
		t.Fatal(err)
	}
	if want := "move-web   True\na          False   held\n"; out.String() != want {
		t.Errorf("--no-headers printed %q, want %q", out.String(), want)
	}
}
