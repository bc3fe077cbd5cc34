// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package wait

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

const testNamespace = "gateway-system"

// testPlacement is the policy's real Placement.
const testPlacement = "gateway-placement"

// draining is a policy whose cluster1 drains and cluster2 is active, Ready.
func draining() *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: testNamespace, ResourceVersion: "1"},
		Spec:       trafficv1alpha1.TrafficMigrationPolicySpec{PlacementRef: trafficv1alpha1.PlacementReference{Name: testPlacement}},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{
			Conditions: []metav1.Condition{{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled}},
			Clusters: []trafficv1alpha1.ClusterStatus{
				{Name: "cluster0", Phase: trafficv1alpha1.ClusterRemoved},
				{Name: "cluster1", Phase: trafficv1alpha1.ClusterDraining, LastValue: "12", ConsecutiveSuccesses: 0},
				{Name: "cluster2", Phase: trafficv1alpha1.ClusterActive},
			},
		},
	}
}

// start runs wait with args on a fake hub holding p, whose real Placement selects
// cluster2, showing progress as on a terminal; it returns the fake's client, and a
// channel with the error and output.
func start(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, args ...string) (*trafficfake.Clientset, <-chan error, *proctest.Buffer) {
	t.Helper()
	return startWith(t, p, true, []string{"cluster2"}, args...)
}

// startWith is start with the real Placement's clusters, at a terminal or not.
func startWith(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, terminal bool, real []string, args ...string) (*trafficfake.Clientset, <-chan error, *proctest.Buffer) {
	t.Helper()
	client := trafficfake.NewSimpleClientset(p)
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: trafficv1alpha1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "trafficmigrationpolicies", Namespaced: true, Kind: "TrafficMigrationPolicy"}},
	}}
	decision := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: testPlacement + "-decision-1", Namespace: testNamespace,
		Labels: map[string]string{clusterv1beta1.PlacementLabel: testPlacement}}}
	for _, c := range real {
		decision.Status.Decisions = append(decision.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	out := &proctest.Buffer{}
	o := &Options{out: out, timeout: 30 * time.Second, grace: 10 * time.Minute, forArg: "drained", terminal: terminal, resync: 20 * time.Millisecond}
	o.hub.Load = func() (*hubclient.Clients, string, error) {
		return &hubclient.Clients{Traffic: client, Cluster: clusterfake.NewSimpleClientset(decision)}, testNamespace, nil
	}
	cmd := newCommand(o)
	cmd.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(t.Context()) }()
	return client, done, out
}

// codeOf is the exit code an error asks for (0 for none).
func codeOf(err error) int {
	var coded *ExitCodeError
	if errors.As(err, &coded) {
		return coded.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestWaitUntilDrained(t *testing.T) {
	client, done, out := start(t, draining(), "move")
	// The drain goes on: the first state is shown, and the wait goes on.
	deadline := time.After(10 * time.Second)
	for !strings.Contains(out.String(), "draining: cluster1 (last value 12, 0 passing in a row)") {
		select {
		case err := <-done:
			t.Fatalf("wait ended while cluster1 drains: %v\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("no progress shown:\n%s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The drain ends. The fake clientset's watch replays nothing from a resource
	// version (an API server does): an update made after the wait read the policy but
	// before its watch began would be lost, so the update is made again, with a new
	// annotation each time, until the wait ends.
	deadline = time.After(10 * time.Second)
	for i := 0; ; i++ {
		p := draining()
		p.Status.Clusters[1].Phase = trafficv1alpha1.ClusterRemoved
		p.Annotations = map[string]string{"test/update": strconv.Itoa(i)}
		if _, err := client.TrafficV1alpha1().TrafficMigrationPolicies(testNamespace).Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if codeOf(err) != ExitDone || !strings.Contains(out.String(), "trafficmigrationpolicy gateway-system/move: the drain is over") {
				t.Errorf("wait: %v\n%s", err, out.String())
			}
			return
		case <-deadline:
			t.Fatalf("wait did not end once the drain was over:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// held is draining, with cluster1 Held for an hour.
func held() *trafficv1alpha1.TrafficMigrationPolicy {
	p := draining()
	p.Status.Clusters[1].Phase = trafficv1alpha1.ClusterHeld
	p.Status.Conditions = append(p.Status.Conditions, metav1.Condition{Type: trafficv1alpha1.ConditionHeld, Status: metav1.ConditionTrue,
		Reason: trafficv1alpha1.ReasonMaxDrainDurationExceeded, Message: "cluster1 is kept past maxDrainDuration", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))})
	return p
}

// unseen is a policy whose status does not show the real Placement's move yet:
// cluster1 is Active, cluster2 not there.
func unseen() *trafficv1alpha1.TrafficMigrationPolicy {
	p := draining()
	p.Status.Clusters = []trafficv1alpha1.ClusterStatus{{Name: "cluster1", Phase: trafficv1alpha1.ClusterActive}}
	return p
}

func TestWaitOutcomes(t *testing.T) {
	tests := map[string]struct {
		policy   *trafficv1alpha1.TrafficMigrationPolicy
		args     []string
		wantCode int
		want     string
	}{
		"a cluster that already left":     {args: []string{"move", "--for=removed=cluster0"}, want: "cluster0 left the proxy"},
		"a cluster of the real Placement": {policy: unseen(), args: []string{"move", "--for=removed=cluster2"}, want: "cluster2 left the proxy"},
		"a condition that holds":          {args: []string{"move", "--for=condition=Ready"}, want: "Ready is True"},
		"a drain that outlasts --timeout": {args: []string{"move", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "timed out after 300ms waiting until the drain is over in trafficmigrationpolicy gateway-system/move; last: draining: cluster1"},
		"a cluster still draining":        {args: []string{"move", "--for=removed=cluster1", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "last: cluster1 is Draining"},
		"a move the manager has not seen": {policy: unseen(), args: []string{"move", "--timeout=300ms"}, wantCode: ExitTimedOut,
			want: "last: the manager has not seen the real Placement's decisions yet: cluster2 not Active"},
		"a cluster that is not the policy's": {args: []string{"move", "--for=removed=cluster9"}, wantCode: ExitError,
			want: "cluster9 is not a cluster of trafficmigrationpolicy gateway-system/move"},
		"a Held drain past its grace": {policy: held(), args: []string{"move", "--grace=1m"}, wantCode: ExitStuck,
			want: "(--grace 1m0s): Held is True (MaxDrainDurationExceeded): cluster1 is kept past maxDrainDuration"},
		"a Held drain within its grace": {policy: held(), args: []string{"move", "--grace=2h", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "last: draining: cluster1"},
		"a Held drain, no grace":        {policy: held(), args: []string{"move", "--for=removed=cluster1", "--grace=0", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "last: cluster1 is Held"},
		"a wait for Held itself":        {policy: held(), args: []string{"move", "--for=condition=Held", "--grace=1m"}, want: "Held is True"},
		"no such policy":                {args: []string{"other"}, wantCode: ExitError, want: "no TrafficMigrationPolicy other in namespace gateway-system"},
		"a bad --for":                   {args: []string{"move", "--for=gone"}, wantCode: ExitError, want: `--for="gone": want drained, removed=CLUSTER or condition=TYPE[=STATUS]`},
		"no timeout":                    {args: []string{"move", "--timeout=0s"}, wantCode: ExitError, want: "--timeout=0s must be longer than 0s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := tc.policy
			if p == nil {
				p = draining()
			}
			_, done, out := start(t, p, tc.args...)
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("wait did not end:\n%s", out.String())
			}
			text := out.String()
			if err != nil {
				text += err.Error()
			}
			if codeOf(err) != tc.wantCode || !strings.Contains(text, tc.want) {
				t.Errorf("exit code %d (want %d), output %q, want %q", codeOf(err), tc.wantCode, text, tc.want)
			}
		})
	}
}

// TestWaitOffATerminal: in a pipeline's log, each change is a line with the time and
// the policy, not only the last.
func TestWaitOffATerminal(t *testing.T) {
	_, done, out := startWith(t, draining(), false, []string{"cluster2"}, "move", "--timeout=300ms")
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("wait did not end:\n%s", out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if codeOf(err) != ExitTimedOut || len(lines) != 1 {
		t.Fatalf("exit code %d, output %q: want one line of progress and a timeout", codeOf(err), out.String())
	}
	when, rest, _ := strings.Cut(lines[0], "  ")
	if _, perr := time.Parse(time.RFC3339, when); perr != nil || rest != "trafficmigrationpolicy gateway-system/move: draining: cluster1 (last value 12, 0 passing in a row)" {
		t.Errorf("progress line %q: want an RFC 3339 time, then the policy and where it stands", lines[0])
	}
}
