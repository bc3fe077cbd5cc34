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

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	trafficv1alpha1client "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/typed/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview/policyviewtest"
)

const testNamespace = "gateway-system"

// draining is a policy whose cluster1 drains and cluster2 is active, Ready.
func draining() *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: testNamespace, ResourceVersion: "1"},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{
			Conditions: []metav1.Condition{{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled}},
			Clusters: []trafficv1alpha1.ClusterStatus{
				{Name: "cluster1", Phase: trafficv1alpha1.ClusterDraining, LastValue: "12", ConsecutiveSuccesses: 0},
				{Name: "cluster2", Phase: trafficv1alpha1.ClusterActive},
			},
		},
	}
}

// start runs wait with args on a fake hub holding p, showing progress as on a
// terminal; it returns the fake's client, and a channel with the error and output.
func start(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy, args ...string) (*trafficfake.Clientset, <-chan error, *policyviewtest.Buffer) {
	t.Helper()
	client := trafficfake.NewSimpleClientset(p)
	out := &policyviewtest.Buffer{}
	o := &Options{out: out, timeout: 30 * time.Second, forArg: "drained", terminal: true}
	o.policies = func() (trafficv1alpha1client.TrafficMigrationPolicyInterface, string, error) {
		return client.TrafficV1alpha1().TrafficMigrationPolicies(testNamespace), testNamespace, nil
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
		p.Status.Clusters[0].Phase = trafficv1alpha1.ClusterRemoved
		p.Annotations = map[string]string{"test/update": strconv.Itoa(i)}
		if _, err := client.TrafficV1alpha1().TrafficMigrationPolicies(testNamespace).Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if codeOf(err) != ExitDone || !strings.Contains(out.String(), "trafficmigrationpolicy gateway-system/move: no cluster drains") {
				t.Errorf("wait: %v\n%s", err, out.String())
			}
			return
		case <-deadline:
			t.Fatalf("wait did not end once the drain was over:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestWaitOutcomes(t *testing.T) {
	tests := map[string]struct {
		args     []string
		wantCode int
		want     string
	}{
		"a cluster that already left":     {args: []string{"move", "--for=removed=cluster9"}, want: "cluster9 left the proxy"},
		"a condition that holds":          {args: []string{"move", "--for=condition=Ready"}, want: "Ready is True"},
		"a drain that outlasts --timeout": {args: []string{"move", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "timed out after 300ms waiting until no cluster drains in trafficmigrationpolicy gateway-system/move; last: draining: cluster1"},
		"a cluster still draining":        {args: []string{"move", "--for=removed=cluster1", "--timeout=300ms"}, wantCode: ExitTimedOut, want: "last: cluster1 is Draining"},
		"no such policy":                  {args: []string{"other"}, wantCode: ExitError, want: "trafficmigrationpolicy gateway-system/other not found"},
		"a bad --for":                     {args: []string{"move", "--for=gone"}, wantCode: ExitError, want: `--for="gone": want drained, removed=CLUSTER or condition=TYPE[=STATUS]`},
		"no timeout":                      {args: []string{"move", "--timeout=0s"}, wantCode: ExitError, want: "--timeout=0s must be longer than 0s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, done, out := start(t, draining(), tc.args...)
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
