// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hubclient

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://hub.example:6443"}
- name: other
  cluster: {server: "https://other.example:6443"}
users:
- name: admin
  user: {token: "t"}
- name: viewer
  user: {token: "v"}
contexts:
- name: hub
  context: {cluster: hub, user: admin, namespace: gateway-system}
current-context: hub
`

// TestKubectlFlags: the commands take kubectl's flags, and they reach the client
// configuration: impersonation, the request timeout, another cluster or user of the
// kubeconfig, and the namespace.
func TestKubectlFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &Flags{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	err := fs.Parse([]string{
		"--kubeconfig", path, "--as", "alice", "--as-group", "auditors", "--as-group", "ops",
		"--request-timeout", "7s", "--cluster", "other", "--user", "viewer", "-n", "payments",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, namespace, err := f.Load("traffic-migration-test")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Impersonate.UserName != "alice" || !slices.Equal(cfg.Impersonate.Groups, []string{"auditors", "ops"}) {
		t.Errorf("impersonation %+v, want alice in auditors and ops", cfg.Impersonate)
	}
	if cfg.Timeout != 7*time.Second {
		t.Errorf("timeout %s, want 7s", cfg.Timeout)
	}
	if cfg.Host != "https://other.example:6443" || cfg.BearerToken != "v" {
		t.Errorf("host %q with token %q, want the cluster other with the user viewer", cfg.Host, cfg.BearerToken)
	}
	if namespace != "payments" {
		t.Errorf("namespace %q, want payments", namespace)
	}
	if !strings.HasSuffix(cfg.UserAgent, "/traffic-migration-test") {
		t.Errorf("user agent %q", cfg.UserAgent)
	}
}

// TestPresetFields: fields set before AddFlags are the flags' defaults, and what the
// flags say wins.
func TestPresetFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &Flags{Kubeconfig: path}
	_, namespace, err := f.Load("test")
	if err != nil || namespace != "gateway-system" {
		t.Fatalf("namespace %q, error %v; want the context's gateway-system", namespace, err)
	}
	g := &Flags{Kubeconfig: path, Namespace: "preset"}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	g.AddFlags(fs)
	if err := fs.Parse([]string{"--namespace", "flag"}); err != nil {
		t.Fatal(err)
	}
	if _, namespace, err := g.Load("test"); err != nil || namespace != "flag" {
		t.Fatalf("namespace %q, error %v; want the flag's", namespace, err)
	}
}

// TestOptionsBuildClientsOnce: a command's clients are built once, on first use, and
// then shared by all its reads.
func TestOptionsBuildClientsOnce(t *testing.T) {
	built := 0
	o := NewOptions(nil, "test")
	o.Load = func() (*Clients, string, error) {
		built++
		return &Clients{}, "payments", nil
	}
	first, _, err := o.Clients()
	if err != nil {
		t.Fatal(err)
	}
	second, namespace, err := o.Clients()
	if err != nil || first != second || namespace != "payments" || built != 1 {
		t.Errorf("built %d times, the same clients %t, namespace %q, err %v", built, first == second, namespace, err)
	}
}
