// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package cmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
			help := runAs(t, tc.arg0, "status", "--help")
			expectHelp(t, help, tc.want...)
			for _, unwanted := range tc.wantNone {
				if strings.Contains(help, unwanted) {
					t.Errorf("help has %q:\n%s", unwanted, help)
				}
			}
		})
	}
}

// TestCheckInKubectlPlugin proves that the check command is there, with its examples,
// when the binary runs as the kubectl plugin.
func TestCheckInKubectlPlugin(t *testing.T) {
	help := runAs(t, "kubectl-traffic_migration", "check", "--help")
	expectHelp(t, help, "kubectl traffic-migration check [NAME | -f FILE] [flags]", "  kubectl traffic-migration check -f policy.yaml --prometheus-url")
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
// loads in a real bash and registers the completion of the program the binary runs
// as: kubectl-traffic_migration, the name the release ships, when it runs as the
// kubectl plugin, and traffic-migration (make build's binary) otherwise.
func TestCompletionLoadsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	for arg0, want := range map[string]string{"/usr/local/bin/" + KubectlPluginName: KubectlPluginName, "bin/traffic-migration": "traffic-migration"} {
		script := filepath.Join(t.TempDir(), "completion.bash")
		if err := os.WriteFile(script, []byte(runAs(t, arg0, "completion", "bash")), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", "set -e; source "+script+"; complete -p").CombinedOutput()
		if err != nil {
			t.Fatalf("bash could not load the completion script: %v\n%s", err, got)
		}
		var registered []string
		for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			f := strings.Fields(line)
			registered = append(registered, f[len(f)-1])
		}
		if !slices.Equal(registered, []string{want}) {
			t.Errorf("as %s, the script completes %q, want %q", arg0, registered, want)
		}
	}
}

// TestCompletionHelpAsPlugin: the kubectl plugin's completion command says how kubectl
// completes it.
func TestCompletionHelpAsPlugin(t *testing.T) {
	help := runAs(t, KubectlPluginName, "completion", "--help")
	expectHelp(t, help, "kubectl traffic-migration completion [command]", KubectlCompletionName+" from PATH", "make install-kubectl-plugin")
}

// TestCompleteNamesFromTheHub: the shells' requests (__complete) offer the policies
// of the namespace that -n names and the clusters of a policy, read from the hub that
// the kubeconfig names, as kubectl's plugin completion asks for them.
func TestCompleteNamesFromTheHub(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		const policies = "/apis/traffic.open-cluster-management.io/v1alpha1/namespaces/payments/trafficmigrationpolicies"
		switch r.URL.Path {
		case policies:
			_, _ = w.Write([]byte(`{"kind":"TrafficMigrationPolicyList","apiVersion":"traffic.open-cluster-management.io/v1alpha1","metadata":{},"items":[
				{"metadata":{"name":"move-web","namespace":"payments"}},{"metadata":{"name":"move-api","namespace":"payments"}}]}`))
		case policies + "/move-web":
			_, _ = w.Write([]byte(`{"kind":"TrafficMigrationPolicy","apiVersion":"traffic.open-cluster-management.io/v1alpha1","metadata":{"name":"move-web","namespace":"payments"},
				"spec":{"placementRef":{"name":"web"}},"status":{"clusters":[{"name":"cluster1","phase":"Draining"},{"name":"cluster2","phase":"Active"}]}}`))
		case "/apis/cluster.open-cluster-management.io/v1beta1/namespaces/payments/placementdecisions":
			_, _ = w.Write([]byte(`{"kind":"PlacementDecisionList","apiVersion":"cluster.open-cluster-management.io/v1beta1","metadata":{},"items":[
				{"metadata":{"name":"web-decision-1","namespace":"payments","labels":{"cluster.open-cluster-management.io/placement":"web"}},"status":{"decisions":[{"clusterName":"cluster2","reason":""},{"clusterName":"cluster3","reason":""}]}}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer server.Close()
	writeKubeconfig(t, server.URL)
	for args, want := range map[string][]string{
		"status -n payments ":                          {"move-api", "move-web"},
		"-n payments suspend move-w":                   {"move-web"},
		"force-remove move-web  -n payments":           {"cluster1"},
		"wait move-web -n payments --for removed=":     {"removed=cluster1", "removed=cluster2", "removed=cluster3"},
		"wait move-web -n payments --for=removed=clus": {"removed=cluster1", "removed=cluster2", "removed=cluster3"},
		"status --namespace payments -o j":             {"json", "jsonpath", "jsonpath-as-json", "jsonpath-file"},
	} {
		words := strings.Split(args, " ")
		// The word completed is the last one; two blanks stand for an empty word
		// before further flags, as a shell passes the words around the cursor.
		if i := slices.Index(words, ""); i >= 0 && i < len(words)-1 {
			words = append(append(words[:i:i], words[i+1:]...), "")
		}
		var out, errOut bytes.Buffer
		root := NewRootCommand(&out, &errOut)
		SetInvokedName(root, KubectlPluginName)
		root.SetArgs(append([]string{"__complete"}, words...))
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var got []string
		for _, l := range lines[:len(lines)-1] {
			got = append(got, strings.Split(l, "\t")[0])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: completions %q, want %q\n%s", args, got, want, out.String())
		}
	}
}

// TestKubectlCompletionShim: the plugin's completion for kubectl,
// hack/kubectl_complete-traffic_migration (shipped in the plugin's archives and
// installed by make install-kubectl-plugin), runs kubectl-traffic_migration from PATH
// with __complete and the words kubectl gives it, as they are.
func TestKubectlCompletionShim(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done > " + args + "\n"
	if err := os.WriteFile(filepath.Join(dir, KubectlPluginName), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join("..", "..", "hack", KubectlCompletionName)
	cmd := exec.CommandContext(t.Context(), shim, "wait", "move web", "--for", "")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", shim, err, out)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[__complete][wait][move web][--for][]"; string(got) != want {
		t.Errorf("the plugin got %s, want %s", got, want)
	}
}
