// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

func TestAgentCommandErrors(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"no flags":       {args: nil, wantErr: "--hub-kubeconfig is required"},
		"no cluster":     {args: []string{"--hub-kubeconfig=/dev/null"}, wantErr: "--cluster-name is required"},
		"bad labels":     {args: []string{"--hub-kubeconfig=/dev/null", "--cluster-name=c1", "--metrics-labels=cluster_id=x"}, wantErr: `key "cluster_id" is reserved`},
		"bad selector":   {args: []string{"--hub-kubeconfig=/dev/null", "--cluster-name=c1", "--gateway-label-selector=a in b"}, wantErr: "--gateway-label-selector"},
		"unknown flag":   {args: []string{"--no-such-flag"}, wantErr: "unknown flag: --no-such-flag"},
		"extra argument": {args: []string{"now"}, wantErr: `unknown command "now"`},
		"bad verbosity":  {args: []string{"-v=loud"}, wantErr: `invalid argument "loud" for "-v, --v" flag`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(&out, &out)
			cmd.SetArgs(tc.args)
			proctest.WantedError(t, cmd.Execute(), tc.wantErr)
		})
	}
}

func TestAgentCommandHelp(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(&out, &out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{
		"--hub-kubeconfig", "--kubeconfig", "--cluster-name", "--addon-namespace", "--metrics-labels",
		"--gateway-label-selector", "--health-probe-bind-address", "-v, --v",
	} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("help does not mention %s:\n%s", flag, out.String())
		}
	}
}

// The agent binary's root is the agent command: the same flags at its top level, and
// a version subcommand.
func TestBinaryCommand(t *testing.T) {
	var out bytes.Buffer
	bin := NewBinaryCommand(&out, &out)
	if bin.Name() != BinaryName {
		t.Errorf("name %q, want %q", bin.Name(), BinaryName)
	}
	var want, got []string
	NewCommand(&out, &out).Flags().VisitAll(func(f *pflag.Flag) { want = append(want, f.Name+"/"+f.Shorthand+"/"+f.DefValue) })
	bin.Flags().VisitAll(func(f *pflag.Flag) { got = append(got, f.Name+"/"+f.Shorthand+"/"+f.DefValue) })
	if !slices.Equal(got, want) {
		t.Errorf("flags %v, want those of the agent command %v", got, want)
	}

	for name, tc := range map[string]struct {
		args    []string
		wantOut string
		wantErr string
	}{
		"version":        {args: []string{"version"}, wantOut: "traffic-migration " + version.Version + " ("},
		"version json":   {args: []string{"version", "-o", "json"}, wantOut: `"version": "` + version.Version + `"`},
		"no flags":       {wantErr: "--hub-kubeconfig is required"},
		"no cluster":     {args: []string{"--hub-kubeconfig", "/dev/null"}, wantErr: "--cluster-name is required"},
		"extra argument": {args: []string{"now"}, wantErr: `unknown command "now" for "traffic-migration-agent"`},
		"no completion":  {args: []string{"completion"}, wantErr: `unknown command "completion"`},
	} {
		t.Run(name, func(t *testing.T) {
			out.Reset()
			cmd := NewBinaryCommand(&out, &out)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if proctest.WantedError(t, err, tc.wantErr) {
				return
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("output %q lacks %q", out.String(), tc.wantOut)
			}
		})
	}
}
