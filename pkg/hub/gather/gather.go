// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package gather reads from the hub what the decision about a policy is made of: the
// real Placement and its decisions, the proxy's decisions, which of the policy's
// clusters exist, and what their agents report. The manager reads through its
// informers' caches and the check command through the API server, both with Read, so
// that check decides on the input the manager decides on.
package gather

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// Reader reads the hub's objects. An error other than NotFound means that the object
// cannot be read (or not yet: the manager's caches have not synced).
type Reader interface {
	// Placement gets a Placement.
	Placement(ctx context.Context, namespace, name string) (*clusterv1beta1.Placement, error)
	// Decisions lists the PlacementDecisions of a Placement, by their label.
	Decisions(ctx context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error)
	// ClusterExists says whether the hub has a ManagedCluster of the name.
	ClusterExists(ctx context.Context, name string) (bool, error)
	// Addon gets a cluster's traffic-migration ManagedClusterAddOn.
	Addon(ctx context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error)
}

// Hub is what Read found.
type Hub struct {
	// Input is the decision's input, but for the checks (Checks and
	// ReplacementChecks) and DNS, which the caller adds.
	Input decision.Input
	// ProxyDecisions are the proxy's PlacementDecisions; ProxyErr says why they cannot
	// be read, when they cannot: then nothing can be decided safely.
	ProxyDecisions []*clusterv1beta1.PlacementDecision
	ProxyErr       error
	// RealProblem, when set, says why the real decisions are not known (rule 7).
	RealProblem string
	// Labels are the agents' metrics labels, by cluster, for the checks' queries.
	Labels map[string]map[string]string
	// Addresses are the target Gateway's addresses the agents report, by cluster;
	// read with spec.dns only.
	Addresses map[string][]string
}

// Read reads through r what the decision about policy at now needs. rules is the
// policy's behaviour: decision.PolicyFromSpec, under the hub's ceiling in the manager.
// It never fails: what cannot be read is reported in the Hub and decided on the safe
// side.
func Read(ctx context.Context, r Reader, policy *trafficv1alpha1.TrafficMigrationPolicy, rules decision.Policy, now time.Time) *Hub {
	h := &Hub{Input: decision.Input{
		Now:         now,
		Policy:      rules,
		Previous:    policy.Status.Clusters,
		ForceRemove: trafficv1alpha1.ParseForceRemove(policy.Annotations[trafficv1alpha1.ForceRemoveAnnotation]),
	}}
	h.ProxyDecisions, h.ProxyErr = r.Decisions(ctx, policy.Namespace, policy.ProxyPlacementName())
	h.Input.Proxy = proxy.Groups(h.ProxyDecisions)
	h.Input.Real, h.RealProblem = realGroups(ctx, r, policy)
	h.Input.RealKnown = h.RealProblem == ""
	h.Input.ManagedClusters = ExistingClusters(ctx, r, &h.Input)
	h.readAgents(ctx, r, policy)
	return h
}

// Clusters are, sorted, the clusters the decision can keep in the proxy: those of the
// real and proxy decisions and those the status says drain, which the proxy may have
// lost (rule 12).
func (h *Hub) Clusters() []string {
	names := sets.New[string]()
	for _, groups := range [][]decision.Group{h.Input.Real, h.Input.Proxy} {
		for _, g := range groups {
			names.Insert(g.Clusters...)
		}
	}
	for _, row := range h.Input.Previous {
		if row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld {
			names.Insert(row.Name)
		}
	}
	names.Delete("")
	return sets.List(names)
}

// InReal reports whether the real Placement's decisions list the cluster.
func (h *Hub) InReal(name string) bool {
	for _, g := range h.Input.Real {
		if slices.Contains(g.Clusters, name) {
			return true
		}
	}
	return false
}

// realGroups reads the real Placement's decision groups, or says why they are not
// known: the Placement is missing or being deleted, or it has no decisions yet (its
// scheduler has not run). Then the proxy keeps what it has (rule 7).
func realGroups(ctx context.Context, r Reader, policy *trafficv1alpha1.TrafficMigrationPolicy) ([]decision.Group, string) {
	name := policy.Spec.PlacementRef.Name
	p, err := r.Placement(ctx, policy.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("Placement %s not found: the proxy keeps its clusters", name)
	case err != nil:
		return nil, fmt.Sprintf("Placement %s cannot be read: the proxy keeps its clusters", name)
	case p.DeletionTimestamp != nil:
		return nil, fmt.Sprintf("Placement %s is being deleted: the proxy keeps its clusters", name)
	}
	ds, err := r.Decisions(ctx, policy.Namespace, name)
	if err != nil {
		return nil, fmt.Sprintf("Placement %s's decisions cannot be read (%v): the proxy keeps its clusters", name, err)
	}
	if len(ds) == 0 {
		return nil, fmt.Sprintf("Placement %s has no PlacementDecisions yet: the proxy keeps its clusters", name)
	}
	return proxy.Groups(ds), ""
}

// ExistingClusters returns which of the clusters the decision can act on (the real and
// proxy decisions' and the status's) have a ManagedCluster: a lookup per cluster of
// the policy, so that a decision costs the same in a fleet of any size. Nil when one
// cannot be read: then no cluster is removed for being gone (rule 6).
func ExistingClusters(ctx context.Context, r Reader, in *decision.Input) sets.Set[string] {
	names := sets.New[string]()
	for _, groups := range [][]decision.Group{in.Real, in.Proxy} {
		for _, g := range groups {
			names.Insert(g.Clusters...)
		}
	}
	for _, row := range in.Previous {
		names.Insert(row.Name)
	}
	names.Delete("")
	exists := sets.New[string]()
	for _, name := range sets.List(names) {
		ok, err := r.ClusterExists(ctx, name)
		if err != nil {
			return nil
		}
		if ok {
			exists.Insert(name)
		}
	}
	return exists
}

// readAgents reads the agent conditions of every cluster of Clusters: the target
// Gateway's readiness, the metrics labels and, with spec.dns, the Gateway's addresses.
// An agent that is not installed or not available counts as not ready.
func (h *Hub) readAgents(ctx context.Context, r Reader, policy *trafficv1alpha1.TrafficMigrationPolicy) {
	h.Input.GatewayReady, h.Labels, h.Addresses = sets.New[string](), map[string]map[string]string{}, map[string][]string{}
	gatewayCondition := trafficv1alpha1.GatewayConditionType(policy.TargetNamespace(), policy.Spec.TargetRef.Name)
	gatewayKey := trafficv1alpha1.GatewayKey(policy.TargetNamespace(), policy.Spec.TargetRef.Name)
	for _, cluster := range h.Clusters() {
		addon, err := r.Addon(ctx, cluster)
		if err != nil {
			continue
		}
		if l := meta.FindStatusCondition(addon.Status.Conditions, trafficv1alpha1.ConditionClusterLabels); l != nil && l.Status == metav1.ConditionTrue {
			h.Labels[cluster] = trafficv1alpha1.ParseClusterLabels(l.Message)
		}
		if trafficv1alpha1.GatewayReady(addon.Status.Conditions, gatewayCondition) {
			h.Input.GatewayReady.Insert(cluster)
		}
		if policy.Spec.DNS != nil {
			if a := meta.FindStatusCondition(addon.Status.Conditions, trafficv1alpha1.ConditionGatewayAddresses); a != nil && a.Status == metav1.ConditionTrue {
				h.Addresses[cluster] = trafficv1alpha1.ParseGatewayAddresses(a.Message)[gatewayKey]
			}
		}
	}
}
