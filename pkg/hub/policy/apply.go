// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"open-cluster-management.io/sdk-go/pkg/patcher"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// apply writes the proxy Placement and its PlacementDecisions for the decided groups.
// It writes nothing that is already as decided. Clusters are added to the decisions
// before any is removed, so a consumer never misses a cluster that only moves from one
// decision object to another.
func (c *Controller) apply(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, groups []decision.Group) error {
	placement, err := c.ensureProxyPlacement(ctx, policy, st)
	if err != nil {
		return err
	}
	desired := proxy.Decisions(policy.Namespace, st.proxyName, groups)
	if err := c.applyDecisions(ctx, placement, desired, st.proxyDecisions); err != nil {
		return err
	}
	return c.applyProxyStatus(ctx, placement, desired)
}

// ensureProxyPlacement creates the proxy Placement, or adopts one that a deleted policy
// left (rule 11). Scheduling is disabled on it, so OCM's placement controller leaves its
// decisions to this controller (rule 10).
func (c *Controller) ensureProxyPlacement(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state) (*clusterv1beta1.Placement, error) {
	client := c.clusterClient.ClusterV1beta1().Placements(policy.Namespace)
	if st.proxy == nil {
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{
			Name:        st.proxyName,
			Namespace:   policy.Namespace,
			Labels:      map[string]string{trafficv1alpha1.PolicyLabel: policy.Name},
			Annotations: map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"},
		}}
		created, err := client.Create(ctx, p, metav1.CreateOptions{FieldManager: ControllerName})
		if err != nil {
			return nil, fmt.Errorf("create proxy Placement %s: %w", st.proxyName, err)
		}
		c.written.placements.wrote(created)
		c.event(policy, false, "ProxyPlacementCreated", fmt.Sprintf("Created proxy Placement %s", st.proxyName))
		return created, nil
	}
	if st.proxy.Labels[trafficv1alpha1.PolicyLabel] != policy.Name {
		// The Placement as the patch left it, with its new resourceVersion: its status
		// is written next, and a write that carried the old one would fail.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"uid":             st.proxy.UID,
			"resourceVersion": st.proxy.ResourceVersion,
			"labels":          map[string]string{trafficv1alpha1.PolicyLabel: policy.Name},
		}})
		if err != nil {
			return nil, fmt.Errorf("adopt proxy Placement %s: %w", st.proxyName, err)
		}
		adopted, err := client.Patch(ctx, st.proxyName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
		if err != nil {
			return nil, fmt.Errorf("adopt proxy Placement %s: %w", st.proxyName, err)
		}
		c.written.placements.wrote(adopted)
		c.event(policy, false, "ProxyPlacementAdopted", fmt.Sprintf("Adopted proxy Placement %s from policy %s", st.proxyName, st.proxy.Labels[trafficv1alpha1.PolicyLabel]))
		return adopted, nil
	}
	return st.proxy, nil
}

// applyDecisions makes the proxy's PlacementDecisions the desired ones: first every
// addition (new objects, and clusters added to existing ones), then every removal.
func (c *Controller) applyDecisions(ctx context.Context, placement *clusterv1beta1.Placement, desired, existing []*clusterv1beta1.PlacementDecision) error {
	client := c.clusterClient.ClusterV1beta1().PlacementDecisions(placement.Namespace)
	current := map[string]*clusterv1beta1.PlacementDecision{}
	for _, d := range existing {
		current[d.Name] = d
	}
	owner := metav1.NewControllerRef(placement, clusterv1beta1.SchemeGroupVersion.WithKind("Placement"))

	// Additions.
	for _, want := range desired {
		have, ok := current[want.Name]
		if !ok {
			obj := want.DeepCopy()
			obj.OwnerReferences = []metav1.OwnerReference{*owner}
			obj.Status = clusterv1beta1.PlacementDecisionStatus{}
			created, err := client.Create(ctx, obj, metav1.CreateOptions{FieldManager: ControllerName})
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create PlacementDecision %s: %w (retrying with a fresh cache)", want.Name, err)
			}
			if err != nil {
				return fmt.Errorf("create PlacementDecision %s: %w", want.Name, err)
			}
			c.written.decisions.wrote(created)
			current[want.Name] = created
			have = created
		}
		union := clusterSet(have).Union(clusterSet(want))
		if union.Len() == clusterSet(have).Len() {
			continue
		}
		next := want
		if union.Len() != clusterSet(want).Len() {
			next = withClusters(have, sets.List(union)) // it also loses some: add first
		}
		updated, err := c.writeDecision(ctx, have, next)
		if err != nil {
			return err
		}
		current[want.Name] = updated
	}

	// Removals, and labels brought in line.
	wanted := sets.New[string]()
	for _, want := range desired {
		wanted.Insert(want.Name)
		if _, err := c.writeDecision(ctx, current[want.Name], want); err != nil {
			return err
		}
	}
	for _, have := range existing {
		if wanted.Has(have.Name) {
			continue
		}
		// Only the object as this sync read it: a cache that has not seen the last
		// write to it (say, a cluster added by the previous sync) must not delete what
		// that write listed. Every other write carries its resourceVersion too.
		err := client.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID, ResourceVersion: &have.ResourceVersion}})
		if apierrors.IsConflict(err) {
			return fmt.Errorf("delete PlacementDecision %s: %w (retrying with a fresh cache)", have.Name, err)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PlacementDecision %s: %w", have.Name, err)
		}
		c.written.decisions.deleted(have.Namespace, have.Name, have.UID, have.ResourceVersion)
	}
	return nil
}

// writeDecision makes have's clusters and labels those of want, through the status
// subresource for the clusters, and writes nothing when they already are.
func (c *Controller) writeDecision(ctx context.Context, have, want *clusterv1beta1.PlacementDecision) (*clusterv1beta1.PlacementDecision, error) {
	client := c.clusterClient.ClusterV1beta1().PlacementDecisions(have.Namespace)
	if !equality.Semantic.DeepEqual(have.Status.Decisions, want.Status.Decisions) {
		obj := have.DeepCopy()
		obj.Status.Decisions = want.Status.Decisions
		updated, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: ControllerName})
		if err != nil {
			return nil, fmt.Errorf("write PlacementDecision %s: %w", have.Name, err)
		}
		c.written.decisions.wrote(updated)
		have = updated
	}
	if !equality.Semantic.DeepEqual(have.Labels, want.Labels) {
		obj := have.DeepCopy()
		obj.Labels = want.Labels
		updated, err := client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: ControllerName})
		if err != nil {
			return nil, fmt.Errorf("label PlacementDecision %s: %w", have.Name, err)
		}
		c.written.decisions.wrote(updated)
		have = updated
	}
	return have, nil
}

// applyProxyStatus keeps the proxy Placement's status true to its decisions, for
// consumers that read the Placement itself (rule 10).
func (c *Controller) applyProxyStatus(ctx context.Context, placement *clusterv1beta1.Placement, decisions []*clusterv1beta1.PlacementDecision) error {
	status := placement.Status.DeepCopy()
	status.DecisionGroups = proxy.GroupStatus(decisions)
	status.NumberOfSelectedClusters = 0
	for _, g := range status.DecisionGroups {
		status.NumberOfSelectedClusters += g.ClustersCount
	}
	satisfied := metav1.Condition{
		Type:    clusterv1beta1.PlacementConditionSatisfied,
		Status:  metav1.ConditionTrue,
		Reason:  "AllDecisionsScheduled",
		Message: "Decisions are written by traffic-migration: the real Placement's clusters and those still draining",
	}
	if status.NumberOfSelectedClusters == 0 {
		satisfied.Status, satisfied.Reason, satisfied.Message = metav1.ConditionFalse, "NoManagedClusterMatched", "No cluster is in the real Placement or draining"
	}
	meta.SetStatusCondition(&status.Conditions, satisfied)
	p := patcher.NewPatcher[*clusterv1beta1.Placement, clusterv1beta1.PlacementSpec, clusterv1beta1.PlacementStatus](
		c.written.placements.patchClient(c.clusterClient.ClusterV1beta1().Placements(placement.Namespace)))
	if _, err := p.PatchStatus(ctx, placement, *status, placement.Status); err != nil {
		return fmt.Errorf("write proxy Placement %s status: %w", placement.Name, err)
	}
	return nil
}

func clusterSet(d *clusterv1beta1.PlacementDecision) sets.Set[string] {
	s := sets.New[string]()
	for _, c := range d.Status.Decisions {
		s.Insert(c.ClusterName)
	}
	return s
}

func withClusters(d *clusterv1beta1.PlacementDecision, clusters []string) *clusterv1beta1.PlacementDecision {
	out := d.DeepCopy()
	slices.Sort(clusters)
	out.Status.Decisions = make([]clusterv1beta1.ClusterDecision, 0, len(clusters))
	for _, c := range clusters {
		out.Status.Decisions = append(out.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return out
}
