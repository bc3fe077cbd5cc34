// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

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
	// Labelled as this policy's proxy decisions: the chart's ValidatingAdmissionPolicy
	// lets the manager write no other PlacementDecision (docs/security.md).
	for _, d := range desired {
		d.Labels[trafficv1alpha1.PolicyLabel] = policy.Name
	}
	if err := c.applyDecisions(ctx, policy, placement, desired, st.proxyDecisions); err != nil {
		return err
	}
	return c.applyProxyStatus(ctx, policy, placement, desired)
}

// ensureProxyPlacement creates the proxy Placement, or adopts one that a deleted policy
// left (rule 11). Scheduling is disabled on it, so OCM's placement controller leaves its
// decisions to this controller (rule 10).
func (c *Controller) ensureProxyPlacement(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state) (*clusterv1beta1.Placement, error) {
	w := c.placementWriter(policy)
	if st.proxy == nil {
		created, err := w.create(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{
			Name:        st.proxyName,
			Namespace:   policy.Namespace,
			Labels:      map[string]string{trafficv1alpha1.PolicyLabel: policy.Name},
			Annotations: map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"},
		}})
		if err != nil {
			return nil, fmt.Errorf("create proxy Placement %s: %w", st.proxyName, err)
		}
		c.event(policy, corev1.EventTypeNormal, ReasonProxyPlacementCreated, fmt.Sprintf("Created proxy Placement %s", st.proxyName))
		return created, nil
	}
	if previous := st.proxy.Labels[trafficv1alpha1.PolicyLabel]; previous != policy.Name {
		// The Placement as the patch left it, with its new resourceVersion: its status
		// is written next, and a write that carried the old one would fail.
		labelled := st.proxy.ObjectMeta.DeepCopy()
		metav1.SetMetaDataLabel(labelled, trafficv1alpha1.PolicyLabel, policy.Name)
		adopted, err := w.patchMeta(ctx, st.proxy, *labelled, st.proxy.ObjectMeta)
		if err != nil {
			return nil, fmt.Errorf("adopt proxy Placement %s: %w", st.proxyName, err)
		}
		c.event(policy, corev1.EventTypeNormal, ReasonProxyPlacementAdopted, fmt.Sprintf("Adopted proxy Placement %s from policy %s", st.proxyName, previous))
		return adopted, nil
	}
	return st.proxy, nil
}

// applyDecisions makes the proxy's PlacementDecisions the desired ones: first every
// addition (new objects, and clusters added to existing ones), then every removal.
func (c *Controller) applyDecisions(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, placement *clusterv1beta1.Placement, desired, existing []*clusterv1beta1.PlacementDecision) error {
	w := c.decisionWriter(policy)
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
			created, err := w.create(ctx, obj)
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create PlacementDecision %s: %w (retrying with a fresh cache)", want.Name, err)
			}
			if err != nil {
				return fmt.Errorf("create PlacementDecision %s: %w", want.Name, err)
			}
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
		updated, err := writeDecision(ctx, w, have, next)
		if err != nil {
			return err
		}
		current[want.Name] = updated
	}

	// Removals, and labels brought in line.
	wanted := sets.New[string]()
	for _, want := range desired {
		wanted.Insert(want.Name)
		if _, err := writeDecision(ctx, w, current[want.Name], want); err != nil {
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
		have, err := ownDecision(ctx, w, have, policy.Name)
		if err != nil {
			return err
		}
		err = w.delete(ctx, have)
		if apierrors.IsConflict(err) {
			return fmt.Errorf("delete PlacementDecision %s: %w (retrying with a fresh cache)", have.Name, err)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PlacementDecision %s: %w", have.Name, err)
		}
	}
	return nil
}

// writeDecision makes have's clusters and labels those of want, the clusters through
// the status subresource, and writes nothing that already is.
func writeDecision(ctx context.Context, w *decisionWriter, have, want *clusterv1beta1.PlacementDecision) (*clusterv1beta1.PlacementDecision, error) {
	have, err := ownDecision(ctx, w, have, want.Labels[trafficv1alpha1.PolicyLabel])
	if err != nil {
		return nil, err
	}
	have, err = w.patchStatus(ctx, have, want.Status, have.Status)
	if err != nil {
		return nil, fmt.Errorf("write PlacementDecision %s: %w", want.Name, err)
	}
	labelled := have.ObjectMeta.DeepCopy()
	labelled.Labels = want.Labels
	if have, err = w.patchMeta(ctx, have, *labelled, have.ObjectMeta); err != nil {
		return nil, fmt.Errorf("label PlacementDecision %s: %w", want.Name, err)
	}
	return have, nil
}

// ownDecision labels have, a proxy decision that a release before the label wrote, with
// the policy's name, and nothing else, before anything else is written to it: the
// chart's ValidatingAdmissionPolicy lets the manager write only labelled decisions, and
// lets this label be added alone (docs/security.md). A labelled one is returned as is.
func ownDecision(ctx context.Context, w *decisionWriter, have *clusterv1beta1.PlacementDecision, policy string) (*clusterv1beta1.PlacementDecision, error) {
	if _, ok := have.Labels[trafficv1alpha1.PolicyLabel]; ok {
		return have, nil
	}
	labelled := have.ObjectMeta.DeepCopy()
	metav1.SetMetaDataLabel(labelled, trafficv1alpha1.PolicyLabel, policy)
	owned, err := w.patchMeta(ctx, have, *labelled, have.ObjectMeta)
	if err != nil {
		return nil, fmt.Errorf("label PlacementDecision %s as policy %s's: %w", have.Name, policy, err)
	}
	return owned, nil
}

// applyProxyStatus keeps the proxy Placement's status true to its decisions, for
// consumers that read the Placement itself (rule 10).
func (c *Controller) applyProxyStatus(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, placement *clusterv1beta1.Placement, decisions []*clusterv1beta1.PlacementDecision) error {
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
	if _, err := c.placementWriter(policy).patchStatus(ctx, placement, *status, placement.Status); err != nil {
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
