// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview/policyviewtest"
	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// watchable is what a generated fake clientset offers to observe its watches.
type watchable interface {
	PrependWatchReactor(resource string, reaction clienttesting.WatchReactionFunc)
	Tracker() clienttesting.ObjectTracker
}

// reportWatches makes the fake clientsets of h say on started which resource a watch
// was opened for, once it is open: a change made after that reaches the informer,
// while one made between an informer's list and its watch would be lost by the fakes.
func (h *hub) reportWatches(started chan<- string) {
	for _, f := range []watchable{h.traffic, h.cluster, h.addon} {
		f.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
			w, err := f.Tracker().Watch(a.GetResource(), a.GetNamespace())
			started <- a.GetResource().Resource
			return true, w, err
		})
	}
}

// eventually polls cond until it holds, failing the test at the deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestStatusCommandWatch(t *testing.T) {
	tests := map[string]struct {
		args     []string
		terminal bool
		watches  int
		// before is in the first view, after in a later one.
		before, after string
		change        func(context.Context, *hub) error
		// separator comes before the next view.
		separator string
	}{
		"one policy, an agent reports its Gateway not programmed": {
			args: []string{policyviewtest.Policy, "--watch"}, watches: 3,
			before: "  cluster2    Draining   Ready     2.1 / <= 5",
			after:  "  cluster2: NotReady: the Gateway is not programmed (NotProgrammed: no address)\n",
			change: func(ctx context.Context, h *hub) error {
				a := policyviewtest.ReadyAddon("cluster2")
				a.Status.Conditions[1] = policyviewtest.Condition(policyviewtest.GatewayCondition, metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed, "no address")
				_, err := h.addon.AddonV1alpha1().ManagedClusterAddOns("cluster2").Update(ctx, a, metav1.UpdateOptions{})
				return err
			},
			separator: "---\n",
		},
		"one policy, the proxy decisions change": {
			args: []string{policyviewtest.Policy, "-w"}, watches: 3,
			before: "  * cluster3: in the proxy decisions but not in the policy status\n",
			after:  "  * cluster4: in the proxy decisions but not in the policy status\n",
			change: func(ctx context.Context, h *hub) error {
				d := policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2", "cluster4")
				_, err := h.cluster.ClusterV1beta1().PlacementDecisions(policyviewtest.Namespace).Update(ctx, d, metav1.UpdateOptions{})
				return err
			},
			separator: "---\n",
		},
		"one policy, its status changes, on a terminal": {
			args: []string{policyviewtest.Policy, "-w"}, watches: 3, terminal: true,
			before: "  cluster2    Draining   Ready     2.1 / <= 5   2/3",
			after:  "  cluster2    Draining   Ready     0.3 / <= 5   3/3",
			change: func(ctx context.Context, h *hub) error {
				p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
					p.Status.Clusters[1].LastValue = "0.3"
					p.Status.Clusters[1].ConsecutiveSuccesses = 3
				})
				_, err := h.traffic.TrafficV1alpha1().TrafficMigrationPolicies(policyviewtest.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
				return err
			},
			separator: clearScreen,
		},
		"one policy, deleted": {
			args: []string{policyviewtest.Policy, "-w"}, watches: 3,
			before: "Name:                    example\n",
			after:  "---\nno TrafficMigrationPolicy example in namespace gateway-system\n",
			change: func(ctx context.Context, h *hub) error {
				return h.traffic.TrafficV1alpha1().TrafficMigrationPolicies(policyviewtest.Namespace).Delete(ctx, policyviewtest.Policy, metav1.DeleteOptions{})
			},
			separator: "---\n",
		},
		"the table of all namespaces, a policy is created": {
			args: []string{"-A", "-w"}, watches: 1,
			before: "payments         checkout   -       checkout-proxy            0        0          -                90m\n",
			after:  "shop             third      -       third-proxy               0        0          -                5m\n",
			change: func(ctx context.Context, h *hub) error {
				p := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
					p.Namespace, p.Name, p.Spec.PlacementRef.Name = "shop", "third", "third"
					p.CreationTimestamp = *policyviewtest.At(-5 * time.Minute)
					p.Status = trafficv1alpha1.TrafficMigrationPolicyStatus{}
				})
				_, err := h.traffic.TrafficV1alpha1().TrafficMigrationPolicies("shop").Create(ctx, p, metav1.CreateOptions{})
				return err
			},
			separator: "---\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, cancel, done, h := startWatch(t, tc.watches, tc.terminal, tc.args...)
			defer cancel()
			eventually(t, "the first view", func() bool { return strings.Contains(out.String(), tc.before) })
			first := out.String()
			if err := tc.change(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			eventually(t, "a new view", func() bool { return strings.Contains(out.String()[len(first):], tc.after) })
			if rest := out.String()[len(first):]; !strings.HasPrefix(rest, tc.separator) {
				t.Errorf("the new view does not start with %q:\n%s", tc.separator, rest)
			}
			if tc.terminal && !strings.HasPrefix(first, clearScreen) {
				t.Errorf("the first view on a terminal does not clear the screen: %q", first[:min(len(first), 20)])
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the watch ended with %v, want nil after an interrupt", err)
			}
		})
	}
}

func TestStatusCommandWatchJSON(t *testing.T) {
	out, cancel, done, h := startWatch(t, 3, false, policyviewtest.Policy, "-w", "-o", "json")
	defer cancel()
	eventually(t, "the first view", func() bool { return strings.Contains(out.String(), `"name": "cluster3"`) })
	if err := h.cluster.ClusterV1beta1().PlacementDecisions(policyviewtest.Namespace).Delete(context.Background(), policyviewtest.Proxy+"-decision-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var views []policyview.Policy
	eventually(t, "a second view", func() bool {
		views = nil
		dec := json.NewDecoder(strings.NewReader(out.String()))
		for {
			var v policyview.Policy
			if err := dec.Decode(&v); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return false // half written
			}
			views = append(views, v)
		}
		return len(views) >= 2
	})
	if last := views[len(views)-1]; len(last.Clusters) != 2 || last.Clusters[0].InProxyDecisions || last.Clusters[0].Discrepancy == "" {
		t.Errorf("the last view does not show the decisions gone: %+v", last.Clusters)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the watch ended with %v", err)
	}
}

func TestStatusCommandWatchForbidden(t *testing.T) {
	h := newHub(t, fleet()...)
	// Getting an add-on is allowed, watching all of them is not.
	h.addon.PrependReactor("list", "managedclusteraddons", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(addonv1alpha1.Resource("managedclusteraddons"), "",
			errors.New(`User "bob" cannot list resource "managedclusteraddons" at the cluster scope`))
	})
	var out, errOut proctest.Buffer
	cmd := newCommand(h.options(&out, &errOut))
	cmd.SetArgs([]string{policyviewtest.Policy, "--watch"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "watch ManagedClusterAddOns: ") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("want a refused watch of ManagedClusterAddOns, got %v", err)
	}
}

// startWatch runs the status command with args in the background on a hub with the
// fleet, and waits until it has opened its watches.
func startWatch(t *testing.T, watches int, terminal bool, args ...string) (*proctest.Buffer, context.CancelFunc, <-chan error, *hub) {
	t.Helper()
	h := newHub(t, fleet()...)
	started := make(chan string, 32)
	h.reportWatches(started)
	out, errOut := &proctest.Buffer{}, &proctest.Buffer{}
	o := h.options(out, errOut)
	o.terminal = func() bool { return terminal }
	cmd := newCommand(o)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		if errOut.String() != "" {
			t.Logf("stderr: %s", errOut.String())
		}
	})
	deadline := time.After(30 * time.Second)
	for range watches {
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("the watch ended early: %v", err)
		case <-deadline:
			t.Fatalf("timed out waiting for %d watches", watches)
		}
	}
	return out, cancel, done, h
}
