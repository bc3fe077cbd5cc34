// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// TestSyncWrites asserts the exact API writes a sync makes, in order, as OCM's
// scheduling controller tests do with their action assertions: the write protocol of
// the controller (additions before removals, proxy before status, one status write,
// nothing written that is already as decided, every write as its field manager).
func TestSyncWrites(t *testing.T) {
	tests := map[string]struct {
		policy    *trafficv1alpha1.TrafficMigrationPolicy
		real      []string
		proxy     []decision.Group // nil: no proxy Placement yet
		clusters  []string         // ManagedClusters, each with the Gateway ready
		want      []string
		wantProxy []string
		// checkDue: the sync starts a check, whose result the next sync records, so
		// that one is not quiet.
		checkDue bool
	}{
		"a new policy creates the proxy": {
			policy:   lagPolicy(),
			real:     []string{"c1"},
			clusters: []string{"c1"},
			want: []string{
				"create placements",
				"create placementdecisions",
				"patch placementdecisions/status",
				"patch placements/status",
				"patch trafficmigrationpolicies/status",
			},
			wantProxy: []string{"c1"},
		},
		"an addition to the real Placement is mirrored": {
			policy:   lagPolicy(active("c1")),
			real:     []string{"c1", "c2"},
			proxy:    []decision.Group{{Clusters: []string{"c1"}}},
			clusters: []string{"c1", "c2"},
			want: []string{
				"patch placementdecisions/status",
				"patch placements/status",
				"patch trafficmigrationpolicies/status",
			},
			wantProxy: []string{"c1", "c2"},
		},
		"a drained cluster is removed": {
			policy:   lagPolicy(draining("c1", 3), active("c2")),
			real:     []string{"c2"},
			proxy:    []decision.Group{{Clusters: []string{"c1", "c2"}}},
			clusters: []string{"c1", "c2"},
			want: []string{
				"patch placementdecisions/status",
				"patch placements/status",
				"patch trafficmigrationpolicies/status",
			},
			wantProxy: []string{"c2"},
		},
		"an addition is written before a removal from the same decision": {
			policy:   lagPolicy(draining("c1", 3), active("c2")),
			real:     []string{"c2", "c3"},
			proxy:    []decision.Group{{Clusters: []string{"c1", "c2"}}},
			clusters: []string{"c1", "c2", "c3"},
			want: []string{
				"patch placementdecisions/status", // c1, c2, c3
				"patch placementdecisions/status", // c2, c3
				"patch placements/status",
				"patch trafficmigrationpolicies/status",
			},
			wantProxy: []string{"c2", "c3"},
		},
		"a cluster leaving the real Placement starts draining, the proxy unchanged": {
			policy:   lagPolicy(active("c1"), active("c2")),
			real:     []string{"c2"},
			proxy:    []decision.Group{{Clusters: []string{"c1", "c2"}}},
			clusters: []string{"c1", "c2"},
			want: []string{
				"patch placements/status",
				"patch trafficmigrationpolicies/status",
			},
			wantProxy: []string{"c1", "c2"},
			checkDue:  true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newLagHarness(t, tc.policy, tc.real, tc.proxy, tc.clusters...)
			h.clearActions()
			h.sync()
			if got := h.writes(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("the sync wrote\n  %q\nwant\n  %q", got, tc.want)
			}
			if got := clustersOf(h.proxyDecisions()); !reflect.DeepEqual(got, tc.wantProxy) {
				t.Errorf("the proxy lists %v, want %v", got, tc.wantProxy)
			}

			if tc.checkDue {
				return
			}
			// A second sync with the same inputs, once every cache has seen the first
			// one's writes, writes nothing.
			h.observe(h.informers.Policies.Informer(), h.informers.Placements.Informer(), h.informers.Decisions.Informer())
			h.clearActions()
			h.sync()
			if got := h.writes(); len(got) > 0 {
				t.Errorf("a second sync with nothing new wrote %q", got)
			}
		})
	}
}

// clearActions forgets the actions the fake clients recorded so far.
func (h *lagHarness) clearActions() {
	h.api.client.ClearActions()
	h.policyClient.ClearActions()
	h.addonClient.ClearActions()
}

// writes are the writes recorded since clearActions, as "verb resource[/subresource]",
// the cluster API's first, then the policies'. Each client keeps its own order; the
// policy is written last in every sync, so the two lists concatenate in order.
func (h *lagHarness) writes() []string {
	var out []string
	for _, actions := range [][]k8stesting.Action{h.api.client.Actions(), h.addonClient.Actions(), h.policyClient.Actions()} {
		for _, a := range actions {
			switch a.GetVerb() {
			case "get", "list", "watch":
				continue
			}
			what := a.GetVerb() + " " + a.GetResource().Resource
			if sub := a.GetSubresource(); sub != "" {
				what += "/" + sub
			}
			// Every write is made as the controller's field manager.
			manager := ControllerName
			switch a := a.(type) {
			case k8stesting.PatchActionImpl:
				manager = a.PatchOptions.FieldManager
			case k8stesting.CreateActionImpl:
				manager = a.CreateOptions.FieldManager
			}
			if manager != ControllerName {
				what += " as " + strconv.Quote(manager)
			}
			out = append(out, what)
		}
	}
	return out
}

// TestAddonAvailableCondition: the readiness rule of the API package names the add-on
// framework's own condition.
func TestAddonAvailableCondition(t *testing.T) {
	if trafficv1alpha1.ConditionAddonAvailable != addonv1alpha1.ManagedClusterAddOnConditionAvailable {
		t.Errorf("ConditionAddonAvailable is %q, the framework's condition is %q",
			trafficv1alpha1.ConditionAddonAvailable, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
	}
}

// TestSyncInTerminatingNamespace: in a namespace that is being deleted nothing can be
// created, and that never changes. The sync reports the failed write in the status
// and does not ask to be retried, so that a policy left in such a namespace does not
// write again and again until the namespace controller deletes it.
func TestSyncInTerminatingNamespace(t *testing.T) {
	h := newLagHarness(t, lagPolicy(), []string{"c1"}, nil, "c1")
	terminating := apierrors.NewForbidden(clusterv1beta1.Resource("placements"), "p-proxy",
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", lagNS))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes,
		metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: "namespace is being terminated", Field: "metadata.namespace"})
	h.api.client.PrependReactor("create", "placements", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, terminating
	})
	h.clearActions()
	h.sync() // fails the test if the sync returns an error, which would requeue it

	want := []string{"create placements", "patch trafficmigrationpolicies/status"}
	if got := h.writes(); !reflect.DeepEqual(got, want) {
		t.Errorf("the sync wrote\n  %q\nwant\n  %q", got, want)
	}
	ready := meta.FindStatusCondition(h.policy().Status.Conditions, trafficv1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != trafficv1alpha1.ReasonApplyFailed || !strings.Contains(ready.Message, "being terminated") {
		t.Errorf("Ready is %+v, want False with reason %s saying the namespace is being terminated", ready, trafficv1alpha1.ReasonApplyFailed)
	}
}
