// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package policy is the hub manager's policy controller: for each
// TrafficMigrationPolicy it keeps the proxy Placement and its PlacementDecisions true to
// the rules of the proxy decision (package decision), checks draining clusters against
// Prometheus (package promcheck) and reports in the policy's status.
//
// A sync gathers its inputs (listers, the agents' conditions, the results of the last
// round of checks), decides what DNS publishes (with spec.dns, package dns) and then the
// proxy with one pure function each, applies the proxy, then DNS, and writes the status
// once. The mechanisms around it that need care when the code changes follow.
//
// # Expectations of the controller's own writes (expectations.go, write.go)
//
// The policy, the proxy Placement, the proxy's PlacementDecisions and the DNSEndpoint
// come from four informers fed by separate watches, and one may show the previous
// sync's writes before another. A sync that read the new status (a cluster Removed)
// with the old decisions (the cluster still listed) would start draining the removed
// cluster again; one that read the old status with the new decisions could act on
// drain state that was reset and remove a cluster early. So the controller records
// each of its writes, as Kubernetes' ControllerExpectations do, and a sync reads
// nothing until the caches show every write of the policy's earlier syncs. The
// invariants:
//
//   - Every write goes through a writer (write.go), or the DNSEndpoint's Apply: creates,
//     patches through sdk-go's patcher, deletes with preconditions. Each records
//     (uid, resourceVersion) of what the API server returned, or the deletion, under
//     the policy's key; nothing else writes these objects.
//   - A sync starts by asking the expectations whether the caches show them
//     (resourceversion.CompareResourceVersion; another uid of the name counts as
//     shown). While one does not, the sync writes nothing and returns: the watch event
//     that brings the write wakes the policy (observe), and a requeue after
//     expectationTTL bounds the wait when no event ever will.
//   - Every write carries the resourceVersion it was decided from (the patcher's, the
//     delete's precondition), so a write from a stale view conflicts and the sync runs
//     again, rather than overwrite what it did not see.
//   - The proxy's decisions are written before the status (additions before
//     removals), and the status says what the decisions now are: the status is the
//     durable drain state that goes with them (rule 9). A status write that conflicts
//     is made again on the policy as it is now (patchPolicy), so no removal goes
//     unrecorded.
//
// # Check rounds (evaluator.go)
//
// A slow or hung Prometheus must delay nothing but its own checks: additions reach the
// proxy at once (rule 1) and other policies keep syncing. So a sync never queries
// Prometheus. It starts a round of checks of the policy's due clusters and returns;
// the round runs apart, bounded by maxParallelQueries over all policies (shared fairly
// by namespace, then by policy: package slots), and wakes the policy when it is done;
// the next sync takes its results into the decision. The invariants:
//
//   - At most one round per policy is in flight; a sync while it runs decides without
//     new checks.
//   - A round's results are dropped when the policy was deleted or its spec changed
//     (UID or generation) since it started: they answered another question.
//   - The decision counts a result only for a cluster that is still due, stamped with
//     the time its queries were evaluated at, so successes stay an interval apart.
//   - A round writes nothing: its checks reach the API in the next sync's one status
//     write, with the row's history (a bounded ring of checks), never in a write of
//     their own.
//
// # Status writes that wait (statuswrites.go)
//
// So that a check is not a write (at a thousand draining policies, a write per check
// would hold the checks to the API server's rate limit), a status that differs from
// the written one only in what checks report of a row (values, times, query, detail,
// history, estimate, message: checkResultsOnly) is written while a budget of such
// writes allows (StatusWrites), and otherwise kept in memory. The budget is shared by
// namespace as the query slots are (writebudget.go): a tenant alone has all of it, and
// a tenant within a quarter of it is never held back by another. The invariants:
//
//   - A change of the proxy, a phase, a drain's start, DNS withdrawal, stall, removal,
//     run of passes, check result, condition or generation is written at once: what
//     decides a removal is never only in memory, and a crash loses only checks that
//     a restart makes again.
//   - The next sync decides from the kept status (withUnwritten) only while the cache
//     shows the policy at the resourceVersion the status followed; any other version
//     drops it. A write patches the written status, so the kept checks reach the API
//     with it.
//   - A kept status waits at most StatusWrites.FlushInterval after the policy's last
//     write: the sync requeues the policy for then.
//
// # Name server rounds (verify.go)
//
// With spec.dns.verify mode Authoritative, a leaving cluster's drain clock starts only
// once the zone's authoritative name servers answer without its addresses. A sync
// never asks them: like the checks, the queries run in a round apart (nameServerChecks),
// at most one per policy in flight and one started per interval, each query bounded
// (dns.QueryTimeout) and the round too (dns.RoundTimeout). The last round's result is
// kept per policy with its question (the DNSEndpoint's generation, read by external-dns
// before the round started, the hostnames and the servers), and answers no other. A
// round wakes its policy when it ends; a withdrawal that waits requeues the policy for
// the next round.
//
// # DNS as a stage (dns.go)
//
// With spec.dns, drains follow DNS: a leaving cluster's drain clock starts when DNS let
// go of it. gather reads the policy's DNSEndpoint (dns.Endpoints, an informer started
// with the manager) and which hostnames the policy may publish (claimHostnames);
// decideDNS decides, with dns.Decide beside decision.Decide, what the DNSEndpoint must
// publish and which draining clusters it no longer holds (decision.DNS.Withdrawn), kept
// by the name server rounds above when they must confirm it; applyDNS writes the
// DNSEndpoint after the proxy, so that a cluster is published once the Gateway the proxy
// put on it is Programmed and withdrawn while the proxy still keeps it. The record set
// only grows or shrinks by addresses (dns.Shrinks): it never swaps one for another. A
// DNSEndpoint that cannot be read, or is not the manager's, withdraws nothing: drains
// wait, the safe side.
//
// # Notifications (package notify)
//
// This controller sends nothing. Notifications (a drain that starts, stalls or is held,
// a cluster removed, an error) are the notify controller's: the Argo notifications
// engine runs each policy's subscribed triggers on the status this controller wrote,
// and records what it sent in the policy's notified.notifications.argoproj.io
// annotation. So what a notification says is what the status says; that annotation is
// no input of this controller, whose only annotation is the force-remove one.
package policy
