// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// writeKubeconfig writes a kubeconfig of one hub, whose context's namespace is
// gateway-system, and points $KUBECONFIG and $HOME at it.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "`+server+`", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "`+testToken+`"}
contexts:
- name: hub
  context: {cluster: hub, user: admin, namespace: gateway-system}
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	t.Setenv("HOME", dir)
	return path
}

// runAs runs the root command with args, invoked as arg0 (empty: under the test
// binary's name), and returns what it wrote; the command must succeed.
func runAs(t *testing.T, arg0 string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	if arg0 != "" {
		SetInvokedName(root, arg0)
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// expectHelp fails the test for each of want that help lacks.
func expectHelp(t *testing.T, help string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(help, w) {
			t.Errorf("help lacks %q:\n%s", w, help)
		}
	}
}

// testToken is the bearer token of writeKubeconfig's user.
const testToken = "tm-test-token-0123456789abcdef"

// TestConnectionFlagsOnTheRoot: kubectl's flags for the hub are the root's persistent
// flags, as a kubectl plugin has them: every command that talks to the hub lists them
// as global flags and takes them before or after its name.
func TestConnectionFlagsOnTheRoot(t *testing.T) {
	writeKubeconfig(t, "https://127.0.0.1:1")
	for _, c := range []string{"status", "check", "wait", "dashboard", "suspend", "resume", "force-remove", "version"} {
		help := runAs(t, "", c, "--help")
		global := help[strings.Index(help, "Global Flags:")+1:]
		for _, want := range []string{"--kubeconfig", "--context", "-n, --namespace", "--as", "--request-timeout"} {
			if !strings.Contains(global, want) {
				t.Errorf("%s --help has no global %s:\n%s", c, want, help)
			}
		}
	}
	for _, args := range [][]string{
		{"--context", "nope", "status"},
		{"status", "--context", "nope"},
		{"--context=nope", "suspend", "move"},
		{"-n", "payments", "--context=nope", "wait", "move"},
	} {
		var out bytes.Buffer
		root := NewRootCommand(&out, &out)
		root.SetArgs(args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `context "nope" does not exist`) {
			t.Errorf("%v: got %v, want the unknown context refused", args, err)
		}
	}
}

// TestServerCommandsRefuseConnectionFlags: the manager and the agent read their
// kubeconfigs from flags of their own; the root's flags for the hub are neither in
// their help nor taken.
func TestServerCommandsRefuseConnectionFlags(t *testing.T) {
	for _, c := range []string{"manager", "agent"} {
		help := runAs(t, "", c, "--help")
		if !strings.Contains(help, "--kubeconfig") {
			t.Errorf("%s --help lacks its own --kubeconfig:\n%s", c, help)
		}
		for _, unwanted := range []string{"--context", "--namespace", "--as-group", "--server"} {
			if strings.Contains(help, unwanted) {
				t.Errorf("%s --help lists %s:\n%s", c, unwanted, help)
			}
		}
		var out bytes.Buffer
		root := NewRootCommand(&out, &out)
		root.SetArgs([]string{"--context=other", c})
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--context is for the commands that people run against the hub: "+c+" does not take it") {
			t.Errorf("%s --context: got %v", c, err)
		}
	}
	// The help of the other commands lists them again after the manager's.
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	root.SetArgs([]string{"manager", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	root.SetArgs([]string{"status", "--help"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "--context") {
		t.Errorf("status --help after manager --help: %v\n%s", err, out.String())
	}
}

// TestLoggingFlagsOnEveryCommand: every command takes Kubernetes components' logging
// flags (k8s.io/component-base's logs/api/v1).
func TestLoggingFlagsOnEveryCommand(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"status", "check", "wait", "dashboard", "suspend", "resume", "force-remove", "version", "manager", "agent"} {
		if !slices.Contains(names, want) {
			t.Errorf("no command %s among %v", want, names)
		}
	}
	names = append(names, "completion")
	for _, c := range names {
		if c == "help" {
			continue
		}
		help := runAs(t, "", c, "--help")
		for _, want := range []string{"-v, --v Level", "--vmodule", "--logging-format string", "--log-flush-frequency"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help lacks %s:\n%s", c, want, help)
			}
		}
	}
}

// TestStatusAtV10KeepsTheTokenOut: status at -v=10 logs its requests, with their
// headers and bodies, to its error output, and the kubeconfig's bearer token is not
// among them.
func TestStatusAtV10KeepsTheTokenOut(t *testing.T) {
	proctest.ResetLogging(t)
	// TLS: client-go sends a kubeconfig's credentials to no other server.
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/apis/traffic.open-cluster-management.io/v1alpha1/namespaces/gateway-system/trafficmigrationpolicies" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"TrafficMigrationPolicyList","apiVersion":"traffic.open-cluster-management.io/v1alpha1","metadata":{},"items":[]}`))
	}))
	defer server.Close()
	writeKubeconfig(t, server.URL)
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"status", "-v=10"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "No TrafficMigrationPolicies found in namespace gateway-system") {
		t.Errorf("output %q", out.String())
	}
	for _, want := range []string{"Authorization: Bearer <masked>", `\"kind\":\"TrafficMigrationPolicyList\"`} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, errOut.String())
		}
	}
	if strings.Contains(errOut.String(), testToken) || strings.Contains(out.String(), testToken) {
		t.Errorf("the bearer token is in the output:\n%s\n%s", out.String(), errOut.String())
	}
}

// TestVersionShowsTheManager: version prints the client's version and the manager's,
// read from its Deployment on the hub the kubeconfig names; with the hub out of reach
// it says why the manager's is unknown, and exits 0.
func TestVersionShowsTheManager(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/apps/v1/deployments" || r.URL.Query().Get("labelSelector") != "app.kubernetes.io/name=traffic-migration-manager" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[{"metadata":{"name":"traffic-migration-manager","namespace":"tm"},
			"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"manager","image":"registry.example.com/traffic-migration:0.4.2"}]}}}}]}`))
	}))
	defer server.Close()
	for server, want := range map[string]string{
		server.URL:            "Manager Version: 0.4.2 (Deployment tm/traffic-migration-manager, image registry.example.com/traffic-migration:0.4.2)\n",
		"https://127.0.0.1:1": "Manager Version: unknown: cannot list the manager's Deployments (app.kubernetes.io/name=traffic-migration-manager) in any namespace: ",
	} {
		writeKubeconfig(t, server)
		var out bytes.Buffer
		root := NewRootCommand(&out, &out)
		root.SetArgs([]string{"version"})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v", server, err)
		}
		if !strings.HasPrefix(out.String(), "Client Version: traffic-migration ") || !strings.Contains(out.String(), want) {
			t.Errorf("%s: printed\n%s\nwant %q", server, out.String(), want)
		}
	}
}
