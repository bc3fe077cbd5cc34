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
	// reached Prometheus and read a usable result. Reasons: ReasonQuerySucceeded,
	// ReasonWindowTooShort (True); ReasonNothingToEvaluate (Unknown, no cluster is draining);
	// ReasonSecretNotFound, ReasonSecretForbidden, ReasonSecretInvalid, ReasonUnreachable,
	// ReasonUnauthorized, ReasonTimeout, ReasonQueryFailed, ReasonTemplateFailed,
	// ReasonUnexpectedResult, ReasonAnswerTooLarge, ReasonURLNotAllowed,
	// ReasonNoData, ReasonTrafficTooLow (False).
	ConditionPrometheusReachable = "PrometheusReachable"

	// ConditionDraining is True while at least one cluster is draining. Reasons:
	// ReasonClustersDraining (True), ReasonSuspended (True, removals suspended),
	// ReasonNoClustersDraining (False).
	ConditionDraining = "Draining"

	// ConditionHeld is True while a cluster is kept past maxDrainDuration. Reasons:
	// ReasonMaxDrainDurationExceeded (True), ReasonWithinDeadline (False).
	ConditionHeld = "Held"

	// ConditionDNSPublished, set only with spec.dns, says whether the policy's
	// DNSEndpoint holds the real Placement's addresses and external-dns applied it.
	// Reasons: ReasonDNSPublished (True); ReasonWaitingForExternalDNS,
	// ReasonNoPublishableCluster, ReasonDNSEndpointConflict, ReasonHostnameNotAllowed,
	// ReasonHostnameTaken, ReasonDNSEndpointCRDNotInstalled, ReasonApplyFailed (False).
	ConditionDNSPublished = "DNSPublished"
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
	ReasonSecretForbidden   = "SecretForbidden" // the reader may not get the Secret
	ReasonSecretInvalid     = "SecretInvalid"
	ReasonUnreachable       = "Unreachable"
	ReasonUnauthorized      = "Unauthorized"
	ReasonTimeout           = "Timeout"
	ReasonQueryFailed       = "QueryFailed"
	ReasonTemplateFailed    = "TemplateFailed"
	// ReasonURLNotAllowed: the url of the Prometheus Secret, or an address its host
	// resolves to, is not in the manager's Prometheus allowlist; nothing was sent.
	ReasonURLNotAllowed = "URLNotAllowed"
	// ReasonAnswerTooLarge: Prometheus's answer passed the manager's bound on its size
	// (the rest of it is not read) or on its number of series; a check needs one.
	ReasonAnswerTooLarge   = "AnswerTooLarge"
	ReasonUnexpectedResult = "UnexpectedResult"
	ReasonNoData           = "NoData"
	// ReasonTrafficTooLow: a trafficShare check had no data because the Gateway's
	// traffic in all was under trafficShare.minRequestsPerSecond.
	ReasonTrafficTooLow = "TrafficTooLow"
	// ReasonWindowTooShort (True): the checks succeed, but trafficShare.window holds
	// fewer than about four samples of each series, as measured in Prometheus, so
	// shares jump or vanish between checks.
	ReasonWindowTooShort = "WindowTooShort"

	ReasonClustersDraining   = "ClustersDraining"
	ReasonSuspended          = "Suspended"
	ReasonNoClustersDraining = "NoClustersDraining"

	ReasonMaxDrainDurationExceeded = "MaxDrainDurationExceeded"
	ReasonWithinDeadline           = "WithinDeadline"

	// ReasonDNSPublished: external-dns applied the DNSEndpoint's current generation.
	ReasonDNSPublished = "Published"
	// ReasonWaitingForExternalDNS: the DNSEndpoint is written, and external-dns has not
	// applied its current generation (its status.observedGeneration is behind).
	ReasonWaitingForExternalDNS = "WaitingForExternalDNS"
	// ReasonNoPublishableCluster: no cluster of the real Placement has the Gateway
	// Programmed with an IP address, and nothing was published yet: the manager never
	// writes an empty record set.
	ReasonNoPublishableCluster = "NoPublishableCluster"
	// ReasonDNSEndpointConflict: a DNSEndpoint of the policy's name exists that the
	// manager did not create; it writes nothing.
	ReasonDNSEndpointConflict = "DNSEndpointConflict"
	// ReasonHostnameNotAllowed: the hub admin does not let the policy's namespace
	// publish some of its hostnames (the manager's --dns-domains).
	ReasonHostnameNotAllowed = "HostnameNotAllowed"
	// ReasonHostnameTaken: another policy, or the DNSEndpoint of a deleted one,
	// publishes some of the policy's hostnames.
	ReasonHostnameTaken = "HostnameTaken"
	// ReasonDNSEndpointCRDNotInstalled: the hub does not serve
	// dnsendpoints.externaldns.k8s.io/v1alpha1.
	ReasonDNSEndpointCRDNotInstalled = "DNSEndpointCRDNotInstalled"
)

// Annotations and labels of the traffic-migration add-on.
const (
	// ForceRemoveAnnotation on a policy names draining clusters, separated by commas,
	// to remove from the proxy at once, whatever their gate says. The manager acts on
	// each name once and records an event.
	ForceRemoveAnnotation = GroupName + "/force-remove"

	// PolicyLabel on a proxy Placement, its PlacementDecisions, or a DNSEndpoint,
	// names the policy that manages it. On PlacementDecisions it is what the chart's
	// ValidatingAdmissionPolicy lets the manager write.
	PolicyLabel = GroupName + "/policy"

	// PublishedClustersAnnotation on a policy's DNSEndpoint names, sorted and
	// separated by commas, the clusters whose addresses its records hold. The manager
	// writes it with the records, so the two always go together.
	PublishedClustersAnnotation = GroupName + "/published-clusters"

	// DNSOwnerAnnotation on a policy's DNSEndpoint names the manager that writes it
	// (its --dns-owner-id). A manager never writes, nor counts as published, a
	// DNSEndpoint that another manager's id owns.
	DNSOwnerAnnotation = GroupName + "/dns-owner"
)
