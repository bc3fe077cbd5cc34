// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// RemovedRowRetention is how long a removed cluster keeps its row, with phase Removed,
// in the policy's status: long enough for people and the CLI to see what happened,
// short enough that the status does not grow with every migration.
const RemovedRowRetention = 10 * time.Minute

// Bounds of what a check leaves in a row, so that a status stays small however many
// clusters drain (see the API's ClusterStatus): the history keeps
// v1alpha1.MaxCheckHistory checks.
const (
	// MaxHistoryValueLength bounds a value kept in the history, as the CRD does.
	MaxHistoryValueLength = 64
	// MaxCheckDetailLength bounds lastCheckDetail, and so a row's message: an error
	// of megabytes must not bloat the status.
	MaxCheckDetailLength = 512
)

// Group is one decision group of a Placement: its index and name, as the labels
// cluster.open-cluster-management.io/decision-group-index and -group-name of its
// PlacementDecisions carry them, and the clusters it lists. The proxy mirrors the real
// groups so consumers that roll out group by group see the same groups.
type Group struct {
	// Index is the group's decision-group-index.
	Index int32
	// Name is the group's decision-group-name; empty when the Placement names none.
	Name string
	// Clusters are the names of the group's clusters.
	Clusters []string
}

// Check is one metrics check of a draining cluster, made in the current sync for a
// cluster that Due listed.
type Check struct {
	// Result is the check's outcome. A value that is none of Pass, Fail, NoData and
	// Error counts as Error.
	Result v1alpha1.EvaluationResult
	// Value is the query's value as Prometheus formatted it; empty when there is none.
	Value string
	// Query is the PromQL query that was run, with the template filled in.
	Query string
	// Message says what went wrong when the check did not pass, for the cluster's row.
	// It must be deterministic: no timestamps, so that a row changes only when a check
	// says something new.
	Message string
	// At is the time the query was evaluated at (the time given to Prometheus), when
	// known. A check at or after the cluster's due time is stamped with it, so that
	// checks keep to their interval: a check stamped with the later time of the
	// decision would push every next check up to a second late. Zero: the decision's
	// own time.
	At time.Time
}

// Input is everything Decide needs, gathered by the caller from listers, the policy
// and Prometheus. Decide does not modify it.
type Input struct {
	// Now is the time of the decision. Every time in the output derives from it or from
	// Previous.
	Now time.Time

	// Policy is the policy's behaviour; see PolicyFromSpec.
	Policy Policy

	// RealKnown is false when the real Placement is missing or its decisions cannot be
	// read: then Real is ignored and the proxy keeps what it has (rule 7).
	RealKnown bool

	// Real are the real Placement's decision groups (R).
	Real []Group

	// Proxy are the proxy's decision groups as last written (P): the durable state of
	// which clusters are listed.
	Proxy []Group

	// Previous are the cluster rows of the policy's status as last written: the durable
	// drain state. Empty when the status was lost; draining then starts over (rule 9).
	Previous []v1alpha1.ClusterStatus

	// ManagedClusters are the names of the ManagedClusters that exist. Nil means they are
	// not known, and then no cluster is removed for being gone (rule 6).
	ManagedClusters sets.Set[string]

	// GatewayReady are the clusters whose agent reports the target Gateway Programmed.
	// A cluster that is not in it is not ready.
	GatewayReady sets.Set[string]

	// Checks are the checks made in this sync, by cluster name. A check of a
	// cluster that was not due (see Due) is ignored, so that successes are counted from
	// checks at least an interval apart.
	Checks map[string]Check

	// ReplacementChecks are the replacement checks (spec.replacement.metricsQuery)
	// of Active clusters made in this sync, by cluster name. A check of a cluster that
	// DueReplacements did not list is ignored.
	ReplacementChecks map[string]Check

	// ForceRemove are the names from the force-remove annotation still to act on.
	ForceRemove []string

	// DNS, when set, is what the published DNS says (spec.dns with the DNSEndpoint
	// CRD served): a draining cluster's drain clock starts when its addresses left
	// DNS, and it stays until then. Nil: the drain clock starts when the cluster left
	// the real decisions.
	DNS *DNS
}

// DNS is what the policy's published DNS records say now.
type DNS struct {
	// Withdrawn are the clusters whose addresses the published records no longer hold,
	// in a generation that external-dns has read and, with spec.dns.verify mode
	// Authoritative, that every authoritative name server of the zone answers without
	// them. A draining cluster that is not in it is taken to be still in DNS.
	Withdrawn sets.Set[string]
	// Waiting says, by draining cluster not in Withdrawn, why it is still taken to be
	// in DNS (the name servers that still answer its addresses, or did not answer),
	// for its row's message; none says only that it is.
	Waiting map[string]string
}

// RemovalReason says why a cluster left the proxy. The values double as event reasons.
type RemovalReason string

const (
	// RemovalGatePassed: the cluster's removal gate passed (rule 3).
	RemovalGatePassed RemovalReason = "GatePassed"
	// RemovalForceRemoved: the force-remove annotation named the cluster.
	RemovalForceRemoved RemovalReason = "ForceRemoved"
	// RemovalManagedClusterGone: the cluster's ManagedCluster no longer exists (rule 6).
	RemovalManagedClusterGone RemovalReason = "ManagedClusterGone"
	// RemovalMaxDrainDuration: the cluster drained past maxDrainDuration and
	// onMaxDrainDuration is Remove (rule 8).
	RemovalMaxDrainDuration RemovalReason = "MaxDrainDurationRemove"
	// RemovalHubMaxDrainDuration: the cluster drained past the hub's ceiling, whose
	// action is Remove (rule 13).
	RemovalHubMaxDrainDuration RemovalReason = "HubMaxDrainDurationRemove"
)

// Removal is one cluster removed from the proxy by a decision.
type Removal struct {
	// Cluster is the removed cluster's name.
	Cluster string
	// Reason is why it was removed.
	Reason RemovalReason
}

// SkipReason says why a name of the force-remove annotation removed nothing. The values
// double as event reasons.
type SkipReason string

const (
	// SkipInRealDecisions: the cluster is in the real decisions, so removing it from the
	// proxy would add it back at once. The admin edits the real Placement first.
	SkipInRealDecisions SkipReason = "ForceRemoveInRealDecisions"
	// SkipNotInProxy: the proxy does not list the cluster.
	SkipNotInProxy SkipReason = "ForceRemoveNotInProxy"
	// SkipRealDecisionsUnknown: the real decisions cannot be read, so nothing is removed
	// (rule 7). The caller keeps the name and acts on it once they can be read.
	SkipRealDecisionsUnknown SkipReason = "ForceRemoveDeferred"
)

// ForceRemoveSkip is one name of the force-remove annotation that removed nothing.
type ForceRemoveSkip struct {
	// Cluster is the name from the annotation.
	Cluster string
	// Reason is why nothing was removed.
	Reason SkipReason
}

// Output is a decision: what to write and what to tell. Slices are nil when empty and
// sorted, so identical inputs give identical outputs and an unchanged state gives an
// output equal to what was last written.
type Output struct {
	// Proxy are the proxy's decision groups to write, sorted by index, each with its
	// clusters sorted.
	Proxy []Group

	// Clusters are the status rows to write, sorted by name: one per cluster of Proxy,
	// and one with phase Removed per cluster removed less than RemovedRowRetention ago.
	Clusters []v1alpha1.ClusterStatus

	// Removed are the clusters this decision removed, sorted by name; the caller records
	// an event for each.
	Removed []Removal

	// ForceRemoveSkipped are the names of ForceRemove that removed nothing, sorted by
	// name; the caller records an event for each. Every name of ForceRemove is either
	// here or in Removed (as ForceRemoved, or ManagedClusterGone when rule 6 removed it
	// anyway).
	ForceRemoveSkipped []ForceRemoveSkip

	// DNSWithdrawn are the draining clusters whose drain clock this decision started
	// because they left DNS (Input.DNS), sorted; the caller records an event for each.
	DNSWithdrawn []string

	// Restored are the draining clusters that the proxy had lost and this decision
	// lists again (rule 12), sorted; the caller records an event for each.
	Restored []string

	// RequeueAt is the earliest time after Now at which the decision changes with no
	// other change of its inputs: a draining cluster's next check, the end of its
	// minDrainDuration or its deadline, a Removed row's expiry. Zero when there is none.
	RequeueAt time.Time
}
