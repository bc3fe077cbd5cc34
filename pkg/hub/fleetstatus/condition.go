// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// maxNamedPolicies bounds how many policies the condition's message names, so that a
// cluster drained by many policies keeps a message of bounded size.
const maxNamedPolicies = 10

// drain is one policy draining a cluster, as the condition's message names it.
type drain struct {
	// policy is "<namespace>/<name>".
	policy string
	// gateway is the policy's target Gateway, "<namespace>/<name>" on the spokes.
	gateway string
	// held says the policy holds the cluster past its maximum drain duration.
	held bool
}

// drainOf returns how the policy drains the cluster, and false when it does not: its
// status lists the cluster as Draining or Held.
func drainOf(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) (drain, bool) {
	for _, row := range p.Status.Clusters {
		if row.Name != cluster {
			continue
		}
		if row.Phase != trafficv1alpha1.ClusterDraining && row.Phase != trafficv1alpha1.ClusterHeld {
			return drain{}, false
		}
		return drain{
			policy:  p.Namespace + "/" + p.Name,
			gateway: p.TargetNamespace() + "/" + p.Spec.TargetRef.Name,
			held:    row.Phase == trafficv1alpha1.ClusterHeld,
		}, true
	}
	return drain{}, false
}

// drainingClusters lists the clusters a policy drains, for the policy index.
func drainingClusters(p *trafficv1alpha1.TrafficMigrationPolicy) []string {
	var names []string
	for _, row := range p.Status.Clusters {
		if row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld {
			names = append(names, row.Name)
		}
	}
	return names
}

// Desired is the hub's condition on the cluster's ManagedClusterAddOn for the given
// policies: nil when none of them drains it. Its message names the policies and their
// Gateways, sorted, and holds no value and no time, so it changes only when a phase
// does. Its transition time is left for meta.SetStatusCondition to set.
func Desired(cluster string, policies []*trafficv1alpha1.TrafficMigrationPolicy) *metav1.Condition {
	var drains []drain
	for _, p := range policies {
		if d, ok := drainOf(p, cluster); ok {
			drains = append(drains, d)
		}
	}
	if len(drains) == 0 {
		return nil
	}
	slices.SortFunc(drains, func(a, b drain) int { return strings.Compare(a.policy, b.policy) })
	reason := trafficv1alpha1.AddonReasonDraining
	parts := make([]string, 0, min(len(drains), maxNamedPolicies))
	for i, d := range drains {
		if d.held {
			reason = trafficv1alpha1.AddonReasonHeld
		}
		if i >= maxNamedPolicies {
			continue
		}
		part := fmt.Sprintf("%s (Gateway %s)", d.policy, d.gateway)
		if d.held {
			part = fmt.Sprintf("%s (Gateway %s, held past its maximum drain duration)", d.policy, d.gateway)
		}
		parts = append(parts, part)
	}
	msg := "draining for policy " + parts[0]
	if len(drains) > 1 {
		msg = fmt.Sprintf("draining for %d policies: %s", len(drains), strings.Join(parts, ", "))
	}
	if more := len(drains) - maxNamedPolicies; more > 0 {
		msg += fmt.Sprintf(" and %d more", more)
	}
	return &metav1.Condition{
		Type:    trafficv1alpha1.AddonConditionDraining,
		Status:  metav1.ConditionTrue,
		Reason:  reason,
		Message: msg,
	}
}
