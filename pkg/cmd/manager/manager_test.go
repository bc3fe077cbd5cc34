// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package manager

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"open-cluster-management.io/traffic-migration/pkg/hub/process"
	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// neverStart is a StartFunc for commands that must fail before starting anything.
func neverStart(context.Context, process.Env) error {
	return fmt.Errorf("the StartFunc must not be called")
}

func TestManagerCommandErrors(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"no workers":      {args: []string{"--workers=0"}, wantErr: "--workers must be at least 1, not 0"},
		"bad address":     {args: []string{"--metrics-bind-address=8080"}, wantErr: `--metrics-bind-address "8080" must be host:port or "0" to disable`},
		"unknown flag":    {args: []string{"--no-such-flag"}, wantErr: "unknown flag: --no-such-flag"},
		"extra argument":  {args: []string{"now"}, wantErr: `unknown command "now"`},
		"bad verbosity":   {args: []string{"-v=loud"}, wantErr: `invalid argument "loud" for "-v, --v" flag`},
		"bad lease times": {args: []string{"--leader-elect", "--leader-election-renew-deadline=20s"}, wantErr: "--leader-election-renew-deadline (20s) must be shorter than --leader-election-lease-duration (15s)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(&out, &out, neverStart, nil)
			cmd.SetArgs(tc.args)
			proctest.WantedError(t, cmd.Execute(), tc.wantErr)
		})
	}
}

func TestManagerCommandHelp(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(&out, &out, neverStart, nil)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"proxy Placement", "--kubeconfig", "--metrics-bind-address", "--health-probe-bind-address",
		"--leader-elect", "--leader-election-namespace", "--leader-election-id",
		"--leader-election-lease-duration", "--leader-election-renew-deadline", "--leader-election-retry-period",
		"--workers", "--kube-api-qps", "--kube-api-burst", "--gomemlimit-ratio", "-v, --v", "--vmodule",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestManagerCommandRuns(t *testing.T) {
	// -v below changes the process's logging configuration, which the commands of
	// the other tests applied already: start from none, and put the default back.
	proctest.ResetLogging(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: hub, context: {cluster: hub}}]
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var gotWorkers int
	var verbose bool
	start := func(ctx context.Context, env process.Env) error {
		gotWorkers = env.Workers
		verbose = klog.V(4).Enabled()
		env.Ready()
		cancel() // as a signal would
		<-ctx.Done()
		return nil
	}
	var out bytes.Buffer
	cmd := NewCommand(&out, &out, start, nil)
	cmd.SetArgs([]string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--workers=7", "-v=4",
		"--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0",
	})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("manager returned %v, want nil", err)
	}
	if gotWorkers != 7 {
		t.Errorf("workers = %d, want 7", gotWorkers)
	}
	if !verbose {
		t.Error("-v=4 did not raise klog's verbosity")
	}
}
