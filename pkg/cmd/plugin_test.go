// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetInvokedName(t *testing.T) {
	tests := map[string]struct {
		arg0     string
		want     []string
		wantNone []string
	}{
		"as the kubectl plugin": {
			arg0: "/home/me/.local/bin/kubectl-traffic_migration",
			want: []string{"kubectl traffic-migration status [NAME] [flags]", "  kubectl traffic-migration status -A\n"},
		},
		"as the kubectl plugin on Windows": {
			arg0: `kubectl-traffic_migration.exe`,
			want: []string{"kubectl traffic-migration status [NAME] [flags]"},
		},
		"as itself": {
			arg0:     "./bin/traffic-migration",
			want:     []string{"traffic-migration status [NAME] [flags]", "  traffic-migration status -A\n"},
			wantNone: []string{"kubectl traffic-migration"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			root := NewRootCommand(&out, &out)
			SetInvokedName(root, tc.arg0)
			root.SetArgs([]string{"status", "--help"})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("help lacks %q:\n%s", want, out.String())
				}
			}
			for _, unwanted := range tc.wantNone {
				if strings.Contains(out.String(), unwanted) {
					t.Errorf("help has %q:\n%s", unwanted, out.String())
				}
			}
		})
	}
}

// TestCheckInKubectlPlugin proves that the check command is there, with its examples,
// when the binary runs as the kubectl plugin.
func TestCheckInKubectlPlugin(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	SetInvokedName(root, "kubectl-traffic_migration")
	root.SetArgs([]string{"check", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl traffic-migration check [NAME | -f FILE] [flags]", "  kubectl traffic-migration check -f policy.yaml --prometheus-url"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPluginHelpHidesServerCommands: the kubectl plugin's help lists what a user runs,
// not the commands that run in pods, which still work; the binary under its own name
// lists them all.
func TestPluginHelpHidesServerCommands(t *testing.T) {
	for arg0, listed := range map[string]bool{"kubectl-traffic_migration": false, "traffic-migration": true} {
		var out bytes.Buffer
		root := NewRootCommand(&out, &out)
		SetInvokedName(root, arg0)
		root.SetArgs([]string{"--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"status", "check", "dashboard", "version", "completion"} {
			if !strings.Contains(out.String(), "\n  "+c+" ") {
				t.Errorf("%s: help does not list %s:\n%s", arg0, c, out.String())
			}
		}
		for _, c := range serverCommands {
			if got := strings.Contains(out.String(), "\n  "+c+" "); got != listed {
				t.Errorf("%s: help lists %s: %v, want %v:\n%s", arg0, c, got, listed, out.String())
			}
		}
		out.Reset()
		root.SetArgs([]string{"manager", "--help"})
		if err := root.Execute(); err != nil || !strings.Contains(out.String(), "manager [flags]") {
			t.Errorf("%s: manager --help: %v\n%s", arg0, err, out.String())
		}
	}
}

// TestCompletionLoadsInBash: the completion script for bash, as a user installs it,
// loads in a real bash and registers the binary's completion.
func TestCompletionLoadsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "traffic-migration.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", "set -e; source "+script+"; complete -p traffic-migration").CombinedOutput()
	if err != nil || !strings.Contains(string(got), "traffic-migration") {
		t.Fatalf("bash could not load the completion script: %v\n%s", err, got)
	}
}
