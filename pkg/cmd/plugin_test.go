// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"bytes"
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
