// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package complete

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

const namespace = "gateway-system"

func policy(name string, rows ...trafficv1alpha1.ClusterStatus) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       trafficv1alpha1.TrafficMigrationPolicySpec{PlacementRef: trafficv1alpha1.PlacementReference{Name: name + "-placement"}},
		Status:     trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: rows},
	}
}

func row(name string, phase trafficv1alpha1.ClusterPhase) trafficv1alpha1.ClusterStatus {
	return trafficv1alpha1.ClusterStatus{Name: name, Phase: phase}
}

// completer reads a fake hub: the policies move-web (cluster1 draining, cluster2 held,
// cluster0 removed; its real Placement selects cluster3) and move-api, a policy of
// another namespace, and two namespaces.
func completer() *Completer {
	traffic := trafficfake.NewSimpleClientset(
		policy("move-web", row("cluster0", trafficv1alpha1.ClusterRemoved), row("cluster1", trafficv1alpha1.ClusterDraining),
			row("cluster2", trafficv1alpha1.ClusterHeld), row("cluster3", trafficv1alpha1.ClusterActive)),
		policy("move-api"),
		&trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "payments"}},
	)
	cluster := clusterfake.NewSimpleClientset(&clusterv1beta1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{Name: "move-web-placement-decision-1", Namespace: namespace,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "move-web-placement"}},
		Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "cluster3"}, {ClusterName: "cluster4"}}},
	})
	kube := kubefake.NewSimpleClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payments"}},
	)
	return &Completer{hub: &hubclient.Flags{}, clients: func() (*hubclient.Clients, string, error) {
		return &hubclient.Clients{Kube: kube, Traffic: traffic, Cluster: cluster}, namespace, nil
	}}
}

// command is a command with the flags whose being set the completion looks at.
func command(set ...string) *cobra.Command {
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().StringP("filename", "f", "", "")
	cmd.Flags().Bool("clusters", false, "")
	for _, name := range set {
		if err := cmd.Flags().Set(name, "true"); err != nil {
			panic(err)
		}
	}
	return cmd
}

func TestCompletions(t *testing.T) {
	c := completer()
	tests := map[string]struct {
		fn         cobra.CompletionFunc
		cmd        *cobra.Command
		args       []string
		toComplete string
		want       []string
		directive  cobra.ShellCompDirective
	}{
		"policies":                      {fn: c.Policy(), want: []string{"move-api", "move-web"}},
		"policies by prefix":            {fn: c.Policy(), toComplete: "move-w", want: []string{"move-web"}},
		"nothing after the policy":      {fn: c.Policy(), args: []string{"move-web"}},
		"no policy with -f":             {fn: c.Policy("filename"), cmd: command("filename")},
		"a policy without --clusters":   {fn: c.Policy("clusters"), cmd: command(), want: []string{"move-api", "move-web"}},
		"force-remove: a policy":        {fn: c.PolicyThenDrainingCluster, want: []string{"move-api", "move-web"}},
		"force-remove: its draining":    {fn: c.PolicyThenDrainingCluster, args: []string{"move-web"}, want: []string{"cluster1", "cluster2"}},
		"force-remove: nothing more":    {fn: c.PolicyThenDrainingCluster, args: []string{"move-web", "cluster1"}},
		"force-remove: no such policy":  {fn: c.PolicyThenDrainingCluster, args: []string{"nope"}},
		"--for: what it takes":          {fn: c.WaitFor, args: []string{"move-web"}, want: []string{"condition=", "drained", "removed="}, directive: cobra.ShellCompDirectiveNoSpace},
		"--for: by prefix":              {fn: c.WaitFor, args: []string{"move-web"}, toComplete: "d", want: []string{"drained"}, directive: cobra.ShellCompDirectiveNoSpace},
		"--for=removed=: the clusters":  {fn: c.WaitFor, args: []string{"move-web"}, toComplete: "removed=", want: []string{"removed=cluster0", "removed=cluster1", "removed=cluster2", "removed=cluster3", "removed=cluster4"}},
		"--for=removed=: by prefix":     {fn: c.WaitFor, args: []string{"move-web"}, toComplete: "removed=cluster4", want: []string{"removed=cluster4"}},
		"--for=removed=: no policy yet": {fn: c.WaitFor, toComplete: "removed="},
		"--for=condition=":              {fn: c.WaitFor, args: []string{"move-web"}, toComplete: "condition=Hel", want: []string{"condition=Held", "condition=Held=False"}},
		"namespaces":                    {fn: c.Namespace, toComplete: "pay", want: []string{"payments"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := tc.cmd
			if cmd == nil {
				cmd = command()
			}
			got, directive := tc.fn(cmd, tc.args, tc.toComplete)
			if !slices.Equal(got, tc.want) {
				t.Errorf("completions %q, want %q", got, tc.want)
			}
			if want := cobra.ShellCompDirectiveNoFileComp | tc.directive; directive != want {
				t.Errorf("directive %v, want %v", directive, want)
			}
		})
	}
}

// TestHubUnreachable: a completion that cannot read the hub offers nothing, and no
// files either.
func TestHubUnreachable(t *testing.T) {
	c := &Completer{hub: &hubclient.Flags{}, clients: func() (*hubclient.Clients, string, error) {
		return nil, "", errors.New("no kubeconfig")
	}}
	for name, fn := range map[string]cobra.CompletionFunc{"policy": c.Policy(), "namespace": c.Namespace, "force-remove": c.PolicyThenDrainingCluster} {
		if got, directive := fn(command(), nil, ""); len(got) != 0 || directive != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%s: %q, %v", name, got, directive)
		}
	}
}

// TestContexts: --context completes with the kubeconfig's contexts.
func TestContexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: admin, user: {token: t}}]
contexts:
- {name: hub, context: {cluster: hub, user: admin}}
- {name: hub-viewer, context: {cluster: hub, user: admin}}
- {name: other, context: {cluster: hub, user: admin}}
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(&hubclient.Flags{Kubeconfig: path})
	if got, _ := c.Context(command(), nil, "hub"); !slices.Equal(got, []string{"hub", "hub-viewer"}) {
		t.Errorf("contexts %q", got)
	}
}
