// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package logflags

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// run runs a command with the logging flags and args, which logs an info line, a
// line at -v=3 and an error, and returns what it logged to its error output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var errOut bytes.Buffer
	cmd := &cobra.Command{Use: "test", SilenceUsage: true, SilenceErrors: true}
	logs := Add(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := logs.Apply(cmd.ErrOrStderr()); err != nil {
			return err
		}
		klog.InfoS("Synced", "policy", "gw/move")
		klog.V(3).InfoS("Detail")
		klog.ErrorS(nil, "Write failed", "reason", "Conflict")
		klog.Flush()
		return nil
	}
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	t.Cleanup(func() {
		klog.ClearLogger()
		_ = cmd.Flags().Set("v", "0")
	})
	err := cmd.Execute()
	return errOut.String(), err
}

func TestJSONFormat(t *testing.T) {
	out, err := run(t, "--logging-format=json", "-v=2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the info and the error line (not the -v=3 one), got:\n%s", out)
	}
	for i, want := range []map[string]any{{"msg": "Synced", "policy": "gw/move"}, {"msg": "Write failed", "reason": "Conflict"}} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, lines[i])
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i+1, k, got[k], v, lines[i])
			}
		}
		if _, ok := got["ts"]; !ok {
			t.Errorf("line %d has no time: %s", i+1, lines[i])
		}
	}
}

func TestBadFormat(t *testing.T) {
	if _, err := run(t, "--logging-format=xml"); err == nil || !strings.Contains(err.Error(), `--logging-format="xml": want text or json`) {
		t.Errorf("got %v", err)
	}
}
