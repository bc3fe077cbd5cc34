// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// Condition types of a TrafficMigrationPolicy, each with the reasons it can carry.
const (
	// ConditionReady is True when the proxy Placement mirrors the real one as the
	// rules say. Reasons: ReasonReconciled (True); ReasonPlacementNotFound,
	// ReasonProxyPlacementConflict, ReasonInvalidQuery, ReasonApplyFailed (False).
	ConditionReady = "Ready"

	// ConditionPrometheusReachable says whether the last checks of draining clusters
	// reached Prometheus and read a usable result. Reasons: ReasonQuerySucceeded
	// (True); ReasonNothingToEvaluate (Unknown, no cluster is draining);
	// ReasonSecretNotFound, ReasonSecretInvalid, ReasonUnreachable,
	// ReasonUnauthorized, ReasonTimeout, ReasonQueryFailed, ReasonTemplateFailed,
	// ReasonUnexpectedResult, ReasonNoData (False).
	ConditionPrometheusReachable = "PrometheusReachable"

	// ConditionDraining is True while at least one cluster is draining. Reasons:
	// ReasonClustersDraining (True), ReasonSuspended (True, removals suspended),
	// ReasonNoClustersDraining (False).
	ConditionDraining = "Draining"

	// ConditionHeld is True while a cluster is kept past maxDrainDuration. Reasons:
	// ReasonMaxDrainDurationExceeded (True), ReasonWithinDeadline (False).
	ConditionHeld = "Held"
)

// Reasons of the policy's conditions.
const (
	ReasonReconciled             = "Reconciled"
	ReasonPlacementNotFound      = "PlacementNotFound"
	ReasonProxyPlacementConflict = "ProxyPlacementConflict"
	ReasonInvalidQuery           = "InvalidQuery"
	ReasonApplyFailed            = "ApplyFailed"

	ReasonQuerySucceeded    = "QuerySucceeded"
	ReasonNothingToEvaluate = "NothingToEvaluate"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonSecretInvalid     = "SecretInvalid"
	ReasonUnreachable       = "Unreachable"
	ReasonUnauthorized      = "Unauthorized"
	ReasonTimeout           = "Timeout"
	ReasonQueryFailed       = "QueryFailed"
	ReasonTemplateFailed    = "TemplateFailed"
	ReasonUnexpectedResult  = "UnexpectedResult"
	ReasonNoData            = "NoData"

	ReasonClustersDraining   = "ClustersDraining"
	ReasonSuspended          = "Suspended"
	ReasonNoClustersDraining = "NoClustersDraining"

	ReasonMaxDrainDurationExceeded = "MaxDrainDurationExceeded"
	ReasonWithinDeadline           = "WithinDeadline"
)

// Annotations and labels of the traffic-migration add-on.
const (
	// ForceRemoveAnnotation on a policy names draining clusters, separated by commas,
	// to remove from the proxy at once, whatever their gate says. The manager acts on
	// each name once and records an event.
	ForceRemoveAnnotation = GroupName + "/force-remove"

	// PolicyLabel on a proxy Placement names the policy that manages it.
	PolicyLabel = GroupName + "/policy"
)
