// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"bytes"
	"strings"
	"testing"
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
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
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
