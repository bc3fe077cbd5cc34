// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The contract between the spoke agent and the hub manager: the conditions the agent
// writes on its ManagedClusterAddOn, in its cluster's namespace on the hub. The agent
// writes only conditions of these types and leaves every other condition as it is.
const (
	// AddonName is the add-on's name: of its ClusterManagementAddOn, and of the
	// ManagedClusterAddOn in each cluster's namespace.
	AddonName = "traffic-migration"

	// GatewayConditionPrefix starts the type of the condition the agent writes for each
	// Gateway of its cluster: <prefix><namespace>.<name>. It is True when the Gateway's
	// Programmed condition is True for its current generation. Reasons:
	// AgentReasonProgrammed (True), AgentReasonNotProgrammed, AgentReasonPending (False).
	GatewayConditionPrefix = "gateway." + GroupName + "/"

	// ConditionGatewayAPI is False with reason AgentReasonCRDNotInstalled when the
	// cluster serves no Gateway API, so the hub can tell "no Gateway" from "no API".
	ConditionGatewayAPI = GroupName + "/GatewayAPI"

	// ConditionClusterLabels is True with reason AgentReasonReported and the cluster's
	// metrics labels as its message: sorted key=value pairs joined by commas. They are
	// what .Cluster.Labels holds in a policy's query.
	ConditionClusterLabels = GroupName + "/ClusterLabels"
)

// The one condition the hub manager writes on a ManagedClusterAddOn, for the fleet by
// cluster. The agent leaves it as it is, and the hub leaves every other condition.
const (
	// AddonConditionDraining is True while the cluster drains for one or more
	// policies; its message names them and their Gateways. It is removed when no policy
	// drains the cluster. Reasons: AddonReasonDraining, AddonReasonHeld (some policy
	// holds the cluster past its maximum drain duration).
	AddonConditionDraining = GroupName + "/Draining"

	// AddonReasonDraining: the cluster drains for the policies the message names.
	AddonReasonDraining = "Draining"
	// AddonReasonHeld: some policy holds the cluster past its maximum drain duration.
	AddonReasonHeld = "Held"
)

// Reasons of the agent's conditions.
const (
	AgentReasonProgrammed      = "Programmed"
	AgentReasonNotProgrammed   = "NotProgrammed"
	AgentReasonPending         = "Pending"
	AgentReasonInstalled       = "Installed"
	AgentReasonCRDNotInstalled = "CRDNotInstalled"
	AgentReasonReported        = "Reported"
)

// Labels the agent always reports.
const (
	// ClusterNameLabel is the cluster's OCM name.
	ClusterNameLabel = "cluster_name"
	// ClusterIDLabel is the UID of the cluster's kube-system namespace, as OCM's
	// id.k8s.io cluster claim.
	ClusterIDLabel = "cluster_id"
)

// GatewayConditionType is the type of the agent's condition for a Gateway.
func GatewayConditionType(namespace, name string) string {
	return GatewayConditionPrefix + namespace + "." + name
}

// ConditionAddonAvailable is the add-on framework's condition of a ManagedClusterAddOn
// that says its agent is available (its Deployment on the spoke has a Ready replica).
const ConditionAddonAvailable = "Available"

// GatewayReady is the hub's rule for "the cluster has the target Gateway ready", read
// from the conditions of the cluster's ManagedClusterAddOn: the agent is available and
// reports the Gateway's condition (gatewayConditionType, see GatewayConditionType)
// True. The manager's removal gate and the status command both read readiness through
// it, so the two never disagree.
func GatewayReady(addonConditions []metav1.Condition, gatewayConditionType string) bool {
	return meta.IsStatusConditionTrue(addonConditions, ConditionAddonAvailable) &&
		meta.IsStatusConditionTrue(addonConditions, gatewayConditionType)
}

// FormatClusterLabels writes labels as the ClusterLabels condition's message: sorted
// key=value pairs joined by commas.
func FormatClusterLabels(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// ParseClusterLabels reads the ClusterLabels condition's message. Pairs without "=" or
// with an empty key are skipped.
func ParseClusterLabels(message string) map[string]string {
	labels := map[string]string{}
	for _, pair := range strings.Split(message, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || k == "" {
			continue
		}
		labels[k] = v
	}
	return labels
}
