// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package version

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"open-cluster-management.io/traffic-migration/pkg/version"
)

func TestVersionCommand(t *testing.T) {
	tests := map[string]struct {
		args    []string
		check   func(t *testing.T, out string)
		wantErr string
	}{
		"text": {
			check: func(t *testing.T, out string) {
				if !strings.HasPrefix(out, "traffic-migration "+version.Version+" (") {
					t.Errorf("unexpected output %q", out)
				}
			},
		},
		"json": {
			args: []string{"-o", "json"},
			check: func(t *testing.T, out string) {
				var info version.Info
				if err := json.Unmarshal([]byte(out), &info); err != nil {
					t.Fatalf("output is not JSON: %v\n%s", err, out)
				}
				if info.Version != version.Version || info.GoVersion == "" {
					t.Errorf("unexpected info %+v", info)
				}
			},
		},
		"yaml": {
			args: []string{"-o", "yaml"},
			check: func(t *testing.T, out string) {
				var info version.Info
				if err := yaml.UnmarshalStrict([]byte(out), &info); err != nil {
					t.Fatalf("output is not YAML of the version: %v\n%s", err, out)
				}
				if info.Version != version.Version || info.GoVersion == "" {
					t.Errorf("unexpected info %+v", info)
				}
			},
		},
		"bad output":     {args: []string{"-o", "xml"}, wantErr: `--output must be empty, json or yaml, not "xml"`},
		"extra argument": {args: []string{"now"}, wantErr: `unknown command "now"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(&out)
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, out.String())
		})
	}
}
