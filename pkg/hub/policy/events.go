// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	corev1 "k8s.io/api/core/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// Reasons of the events the controller records on a policy, besides the reasons of
// its conditions (when one changes), of removals (decision.RemovalReason) and of
// force-remove names that removed nothing (decision.SkipReason).
const (
	// ReasonProxyPlacementCreated: the controller created the proxy Placement.
	ReasonProxyPlacementCreated = "ProxyPlacementCreated"
	// ReasonProxyPlacementAdopted: the controller took over a proxy Placement that a
	// deleted policy left (rule 11).
	ReasonProxyPlacementAdopted = "ProxyPlacementAdopted"
	// ReasonClusterActive: clusters became Active (added, or back in the real Placement).
	ReasonClusterActive = "Cluster" + string(trafficv1alpha1.ClusterActive)
	// ReasonClusterDraining: clusters left the real Placement and drain.
	ReasonClusterDraining = "Cluster" + string(trafficv1alpha1.ClusterDraining)
	// ReasonClusterHeld: clusters drain past maxDrainDuration and are kept (a warning).
	ReasonClusterHeld = "Cluster" + string(trafficv1alpha1.ClusterHeld)
	// ReasonProxyRestored: the proxy had lost draining clusters (someone deleted it or
	// its decisions) and lists them again (a warning; rule 12).
	ReasonProxyRestored = "ProxyRestored"
)

// phaseEventReasons are the event reasons of the phases a cluster enters in a sync.
var phaseEventReasons = map[trafficv1alpha1.ClusterPhase]string{
	trafficv1alpha1.ClusterActive:   ReasonClusterActive,
	trafficv1alpha1.ClusterDraining: ReasonClusterDraining,
	trafficv1alpha1.ClusterHeld:     ReasonClusterHeld,
}

// event records an event on the policy; eventType is corev1.EventTypeNormal or
// corev1.EventTypeWarning.
func (c *Controller) event(policy *trafficv1alpha1.TrafficMigrationPolicy, eventType, reason, note string) {
	if c.recorder == nil {
		return
	}
	c.recorder.Eventf(policy, nil, eventType, reason, "Reconcile", "%s", note)
}

// eventTypeOf is Warning when warning is true, else Normal.
func eventTypeOf(warning bool) string {
	if warning {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}
