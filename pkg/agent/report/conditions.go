// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// MaxGateways is the most Gateways the agent reports, the first by namespace/name. It
// keeps the ManagedClusterAddOn small on clusters with many Gateways.
const MaxGateways = 64

// maxConditionTypeLength and conditionTypePattern are the ManagedClusterAddOn CRD's
// rules for a condition type. A Gateway whose namespace and name make a longer type
// cannot be reported: writing it would fail the whole status write.
const maxConditionTypeLength = 316

var conditionTypePattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`)

// maxListedSkipped bounds the Gateways named in a message, so that it stays short.
const maxListedSkipped = 5

// GatewayAPI is whether the cluster serves Gateways of gateway.networking.k8s.io/v1.
type GatewayAPI struct {
	// Installed is true when the Gateway CRD is established and serves v1.
	Installed bool
	// Message says why the API is not installed; unused when it is.
	Message string
}

// Observed is what the agent reports on, as read from its cluster.
type Observed struct {
	// GatewayAPI is whether the cluster serves Gateways.
	GatewayAPI GatewayAPI
	// Selector is the agent's Gateway label selector, for messages; empty for all.
	Selector string
	// Gateways are the Gateways that match the selector, in any order and any number.
	// They are read only.
	Gateways []*gatewayv1.Gateway
	// Labels are the cluster's metrics labels, cluster_name and cluster_id included.
	Labels map[string]string
}

// IsAgentCondition tells whether a condition type is one the agent owns: the
// conditions it writes, and removes when they no longer apply.
func IsAgentCondition(conditionType string) bool {
	return conditionType == trafficv1alpha1.ConditionGatewayAPI ||
		conditionType == trafficv1alpha1.ConditionClusterLabels ||
		conditionType == trafficv1alpha1.ConditionGatewayAddresses ||
		strings.HasPrefix(conditionType, trafficv1alpha1.GatewayConditionPrefix)
}

// Conditions returns the agent's conditions for what it observed, sorted by type, with
// no transition time: GatewayAPI, ClusterLabels and one for each of the first
// MaxGateways Gateways by namespace/name.
func Conditions(o Observed) []metav1.Condition {
	conds := []metav1.Condition{{
		Type:    trafficv1alpha1.ConditionClusterLabels,
		Status:  metav1.ConditionTrue,
		Reason:  trafficv1alpha1.AgentReasonReported,
		Message: trafficv1alpha1.FormatClusterLabels(o.Labels),
	}}
	if !o.GatewayAPI.Installed {
		conds = append(conds, metav1.Condition{
			Type:    trafficv1alpha1.ConditionGatewayAPI,
			Status:  metav1.ConditionFalse,
			Reason:  trafficv1alpha1.AgentReasonCRDNotInstalled,
			Message: o.GatewayAPI.Message,
		})
		sortByType(conds)
		return conds
	}

	gateways := slices.Clone(o.Gateways)
	slices.SortFunc(gateways, func(a, b *gatewayv1.Gateway) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var reported int
	var skipped []string
	addresses := trafficv1alpha1.GatewayAddresses{}
	for _, gw := range gateways {
		if !validConditionType(trafficv1alpha1.GatewayConditionType(gw.Namespace, gw.Name)) {
			skipped = append(skipped, gw.Namespace+"/"+gw.Name)
			continue
		}
		if reported == MaxGateways {
			continue
		}
		conds = append(conds, GatewayCondition(gw))
		if a := publishableAddresses(gw); len(a) > 0 {
			addresses[trafficv1alpha1.GatewayKey(gw.Namespace, gw.Name)] = a
		}
		reported++
	}
	conds = append(conds, addressesCondition(addresses))
	conds = append(conds, metav1.Condition{
		Type:    trafficv1alpha1.ConditionGatewayAPI,
		Status:  metav1.ConditionTrue,
		Reason:  trafficv1alpha1.AgentReasonInstalled,
		Message: installedMessage(o.Selector, len(gateways)-len(skipped), reported, skipped),
	})
	sortByType(conds)
	return conds
}

// installedMessage says how many Gateways are reported, and which are not.
func installedMessage(selector string, matching, reported int, skipped []string) string {
	var b strings.Builder
	b.WriteString("Gateway API v1 is installed; ")
	which := "Gateways"
	if matching == 1 {
		which = "Gateway"
	}
	if selector != "" {
		which += " labelled " + selector
	}
	if reported < matching {
		fmt.Fprintf(&b, "%d %s, reporting the first %d by namespace/name", matching, which, reported)
	} else {
		fmt.Fprintf(&b, "reporting %d %s", reported, which)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "; not reported, as their namespace and name are too long for a condition type: %s", shortlist.Join(skipped, maxListedSkipped))
	}
	return b.String()
}

// GatewayCondition returns the agent's condition for one Gateway: True when its
// Programmed condition is True for its current generation; False with reason Pending
// while no Gateway controller has decided (no Programmed condition, or one that is
// Unknown, as the Gateway CRD defaults it); False with reason NotProgrammed otherwise,
// also when the controller has not accepted the Gateway's current generation and
// written no Programmed condition (as Traefik does for a listener on a port it has no
// entry point for). The message names the Gateway's addresses.
func GatewayCondition(gw *gatewayv1.Gateway) metav1.Condition {
	cond := metav1.Condition{
		Type:   trafficv1alpha1.GatewayConditionType(gw.Namespace, gw.Name),
		Status: metav1.ConditionFalse,
	}
	addresses := addressesOf(gw)
	programmed := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	accepted := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted))
	switch {
	case (programmed == nil || programmed.Status == metav1.ConditionUnknown) &&
		accepted != nil && accepted.Status == metav1.ConditionFalse && accepted.ObservedGeneration == gw.Generation:
		cond.Reason = trafficv1alpha1.AgentReasonNotProgrammed
		cond.Message = fmt.Sprintf("Not accepted (%s). %s", accepted.Reason, addresses)
	case programmed == nil:
		cond.Reason = trafficv1alpha1.AgentReasonPending
		cond.Message = "No Programmed condition yet. " + addresses
	case programmed.Status == metav1.ConditionUnknown:
		cond.Reason = trafficv1alpha1.AgentReasonPending
		cond.Message = fmt.Sprintf("Programmed is Unknown (%s). %s", programmed.Reason, addresses)
	case programmed.Status != metav1.ConditionTrue:
		cond.Reason = trafficv1alpha1.AgentReasonNotProgrammed
		cond.Message = fmt.Sprintf("Programmed is %s (%s). %s", programmed.Status, programmed.Reason, addresses)
	case programmed.ObservedGeneration != gw.Generation:
		cond.Reason = trafficv1alpha1.AgentReasonNotProgrammed
		cond.Message = fmt.Sprintf("Programmed is True for generation %d, the Gateway is at generation %d. %s",
			programmed.ObservedGeneration, gw.Generation, addresses)
	default:
		cond.Status = metav1.ConditionTrue
		cond.Reason = trafficv1alpha1.AgentReasonProgrammed
		cond.Message = addresses
	}
	return cond
}

// addressesCondition is the GatewayAddresses condition: the reported Gateways'
// addresses in the contract's machine-readable form.
func addressesCondition(addresses trafficv1alpha1.GatewayAddresses) metav1.Condition {
	message, complete := trafficv1alpha1.FormatGatewayAddresses(addresses, trafficv1alpha1.MaxGatewayAddressesMessage)
	c := metav1.Condition{
		Type:    trafficv1alpha1.ConditionGatewayAddresses,
		Status:  metav1.ConditionTrue,
		Reason:  trafficv1alpha1.AgentReasonReported,
		Message: message,
	}
	if !complete {
		c.Reason = trafficv1alpha1.AgentReasonTruncated
	}
	return c
}

// publishableAddresses are a Gateway's addresses of type IPAddress (the default) and
// Hostname, in the order of its status; other types are the implementation's own and
// mean nothing to DNS. A Gateway that no route is attached to yet has none: it would
// answer clients that DNS sent there with "no route" (a Gateway is Programmed before
// its implementation has attached the routes that came with it).
func publishableAddresses(gw *gatewayv1.Gateway) []string {
	attached := false
	for _, l := range gw.Status.Listeners {
		attached = attached || l.AttachedRoutes > 0
	}
	if !attached {
		return nil
	}
	var out []string
	for _, a := range gw.Status.Addresses {
		if a.Type == nil || *a.Type == gatewayv1.IPAddressType || *a.Type == gatewayv1.HostnameAddressType {
			out = append(out, a.Value)
		}
	}
	return out
}

// addressesOf names a Gateway's addresses in the order of its status.
func addressesOf(gw *gatewayv1.Gateway) string {
	if len(gw.Status.Addresses) == 0 {
		return "No addresses"
	}
	values := make([]string, 0, len(gw.Status.Addresses))
	for _, a := range gw.Status.Addresses {
		values = append(values, a.Value)
	}
	return "Addresses: " + strings.Join(values, ", ")
}

// Merge returns existing with the agent's conditions replaced by desired: every
// condition of another type is kept as it is and where it is; an agent condition that
// is not desired any more is removed; desired conditions are set with
// meta.SetStatusCondition, so a condition whose status does not change keeps its
// transition time, and one that is new or changes status gets now. existing is not
// modified. Merging the result again with the same desired conditions gives the result.
func Merge(existing, desired []metav1.Condition, now metav1.Time) []metav1.Condition {
	wanted := make(map[string]bool, len(desired))
	for _, c := range desired {
		wanted[c.Type] = true
	}
	out := make([]metav1.Condition, 0, len(existing)+len(desired))
	seen := map[string]bool{}
	for _, c := range existing {
		if IsAgentCondition(c.Type) && (!wanted[c.Type] || seen[c.Type]) {
			continue
		}
		seen[c.Type] = true
		out = append(out, *c.DeepCopy())
	}
	for _, c := range desired {
		c.LastTransitionTime = now
		meta.SetStatusCondition(&out, c)
	}
	return out
}

// validConditionType tells whether the ManagedClusterAddOn CRD accepts a condition type.
func validConditionType(t string) bool {
	return len(t) <= maxConditionTypeLength && conditionTypePattern.MatchString(t)
}

func sortByType(conds []metav1.Condition) {
	slices.SortFunc(conds, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
}
