// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package control

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

const testNamespace = "gateway-system"

// policy drains cluster1 and keeps cluster2 active.
func policy() *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: testNamespace, ResourceVersion: "7"},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: []trafficv1alpha1.ClusterStatus{
			{Name: "cluster1", Phase: trafficv1alpha1.ClusterDraining},
			{Name: "cluster2", Phase: trafficv1alpha1.ClusterActive},
		}},
	}
}

// run runs the command made by newCmd on a fake hub holding p, with stdin and a
// terminal or not; it returns the policy afterwards, the output, how many patches the
// command wrote (each must be the CLI's field manager's) and the error.
func run(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, newCmd func(*options) *cobra.Command, stdin string, terminal bool, args ...string) (*trafficv1alpha1.TrafficMigrationPolicy, string, int, error) {
	t.Helper()
	client := trafficfake.NewSimpleClientset(p)
	var out, errOut bytes.Buffer
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: trafficv1alpha1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "trafficmigrationpolicies", Namespaced: true, Kind: "TrafficMigrationPolicy"}},
	}}
	o := newOptions(nil, "test", strings.NewReader(stdin), &out, &errOut)
	o.isTerminal = func(io.Reader) bool { return terminal }
	o.hub.Load = func() (*hubclient.Clients, string, error) {
		return &hubclient.Clients{Traffic: client}, testNamespace, nil
	}
	cmd := newCmd(o)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	got, gerr := client.TrafficV1alpha1().TrafficMigrationPolicies(testNamespace).Get(t.Context(), p.Name, metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	patches := 0
	for _, a := range client.Actions() {
		if patch, ok := a.(clienttesting.PatchActionImpl); ok {
			patches++
			if patch.PatchOptions.FieldManager != FieldManager {
				t.Errorf("a patch by field manager %q, want %q: %s", patch.PatchOptions.FieldManager, FieldManager, patch.GetPatch())
			}
		}
	}
	return got, out.String() + errOut.String(), patches, err
}

func suspendCmd(o *options) *cobra.Command     { return newSuspendCommand(o, true) }
func resumeCmd(o *options) *cobra.Command      { return newSuspendCommand(o, false) }
func forceRemoveCmd(o *options) *cobra.Command { return newForceRemoveCommand(o) }

func TestSuspendAndResume(t *testing.T) {
	got, out, _, err := run(t, policy(), suspendCmd, "", false, "move")
	if err != nil || !got.Spec.Suspend || !strings.Contains(out, "gateway-system/move suspended") {
		t.Fatalf("suspend: %v, suspend=%v, %q", err, got.Spec.Suspend, out)
	}
	got, out, _, err = run(t, got, suspendCmd, "", false, "move")
	if err != nil || !got.Spec.Suspend || !strings.Contains(out, "already suspended") {
		t.Errorf("suspend twice: %v, %q", err, out)
	}
	got, out, _, err = run(t, got, resumeCmd, "", false, "move")
	if err != nil || got.Spec.Suspend || !strings.Contains(out, "gateway-system/move resumed") {
		t.Errorf("resume: %v, suspend=%v, %q", err, got.Spec.Suspend, out)
	}
	if _, _, _, err := run(t, policy(), suspendCmd, "", false, "other"); err == nil || !strings.Contains(err.Error(), "no TrafficMigrationPolicy other in namespace gateway-system") {
		t.Errorf("suspend of a missing policy: %v", err)
	}
}

func TestForceRemove(t *testing.T) {
	annotation := func(p *trafficv1alpha1.TrafficMigrationPolicy) string {
		return p.Annotations[trafficv1alpha1.ForceRemoveAnnotation]
	}
	tests := map[string]struct {
		stdin    string
		terminal bool
		args     []string
		before   string
		want     string
		wantErr  string
		// wantOut is in the output instead of the usual one; noPatch: nothing is written.
		wantOut string
		noPatch bool
	}{
		"with --yes":                       {args: []string{"move", "cluster1", "--yes"}, want: "cluster1"},
		"confirmed at a terminal":          {stdin: "y\n", terminal: true, args: []string{"move", "cluster1"}, want: "cluster1"},
		"declined at a terminal":           {stdin: "n\n", terminal: true, args: []string{"move", "cluster1"}, wantErr: "not removed: cluster1 stays"},
		"no answer at a terminal":          {terminal: true, args: []string{"move", "cluster1"}, wantErr: "not removed"},
		"no terminal and no --yes":         {args: []string{"move", "cluster1"}, wantErr: "this is not a terminal; pass --yes"},
		"an active cluster":                {args: []string{"move", "cluster2", "--yes"}, wantErr: "cluster cluster2 is Active, not draining"},
		"a cluster not in the status":      {args: []string{"move", "cluster9", "--yes"}, wantErr: "cluster cluster9 is not in the status"},
		"added to the names already there": {args: []string{"move", "cluster1", "-y"}, before: "cluster0", want: "cluster0,cluster1"},
		"already named":                    {args: []string{"move", "cluster1"}, before: "cluster1", want: "cluster1", wantOut: "already named for removal", noPatch: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := policy()
			if tc.before != "" {
				p.Annotations = map[string]string{trafficv1alpha1.ForceRemoveAnnotation: tc.before}
			}
			got, out, patches, err := run(t, p, forceRemoveCmd, tc.stdin, tc.terminal, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
				}
				if annotation(got) != tc.before {
					t.Errorf("the annotation changed to %q although it failed", annotation(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantOut := tc.wantOut
			if wantOut == "" {
				wantOut = "cluster1 will be removed"
			}
			if annotation(got) != tc.want || !strings.Contains(out, wantOut) {
				t.Errorf("annotation %q (want %q), output %q", annotation(got), tc.want, out)
			}
			if (patches == 0) != tc.noPatch {
				t.Errorf("%d patches written", patches)
			}
		})
	}
}
