// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package decision computes what the proxy Placement of a TrafficMigrationPolicy lists:
// the rules of section 6 of docs/design.md, as one pure function of its inputs and
// the time. It makes no calls and reads no clock; the policy controller gathers the
// inputs (the real and proxy decisions, the policy's status, the ManagedClusters, the
// agents' Gateway readiness, the metrics checks), calls Decide and writes what it
// returns.
//
// Let R be the clusters of the real Placement's decisions, P those of the proxy's as
// last written, and D = P \ R the draining clusters. Decide applies these rules:
//
//  1. Every cluster of R is in the output proxy, in its real decision group.
//  2. A cluster of D stays in the proxy, in the group it had in P, until it is removed.
//  3. The removal gate of a draining cluster passes when the policy is not suspended,
//     it has drained for at least minDrainDuration, its last consecutiveSuccesses
//     checks passed (each made when the cluster was due, so at least interval apart),
//     and a cluster left in the proxy after its removal has the Gateway ready. When
//     several pass at once they are taken in name order and the removals stop short of
//     leaving no ready cluster.
//  4. A check that fails, errs or (with noDataPolicy Hold) finds no data starts the run
//     of successes over; what it reported stays in the row's lastCheckDetail (and its
//     message) until the next check.
//  5. A draining cluster that is in R again is Active, its drain state dropped.
//  6. A draining cluster whose ManagedCluster is gone is removed at once.
//  7. When R cannot be read the proxy keeps what it has.
//  8. Past maxDrainDuration a cluster is Held, or removed when onMaxDrainDuration is
//     Remove.
//  9. P and the drain state are read back from the proxy decisions and the policy
//     status; a draining cluster without a row starts draining now.
//  12. A cluster whose row says Draining or Held but that P lost (someone deleted the
//     proxy Placement or one of its decisions) is draining again, with its row's
//     state, and listed again in the proxy (Output.Restored).
//  13. Past the hub's ceiling (Policy.Ceiling), counted from drainStartTime, a
//     cluster is Held, or removed when the ceiling's action is Remove: whatever its
//     checks, DNS, minDrainDuration and suspend say, but never the last cluster with
//     the Gateway ready, and not while R cannot be read.
//  14. A draining cluster that DNS let go of is stalled when its latest check with a
//     value, made more than the larger of (TTL + 60s, 4 × trafficShare.window, or 4
//     intervals with a metricsQuery) after the withdrawal, did not pass and is still
//     more than half the value of the first check at or after the withdrawal
//     (stall.go). A stall removes nothing: it sets the row's stalled, says why in its
//     message and leaves it without an estimate.
//
// Where the design leaves a choice open, Decide takes the safer side:
//
//   - Rule 1 wins over rule 6: a cluster of R whose ManagedCluster is gone stays listed
//     (the placement controller drops it from R soon); rule 6 applies to draining
//     clusters only. A nil ManagedClusters set means "not known" and removes nothing.
//     A cluster whose ManagedCluster is gone never counts as having the Gateway ready.
//   - Suspend blocks the removal gate and the deadline's Remove. It does not block rule 6
//     (nothing is left to drain) nor an explicit force-remove (the admin named the
//     cluster; the annotation says "whatever their gate says").
//   - The deadline's Remove overrides the metrics and nothing else: it waits for
//     minDrainDuration too, and never removes the last cluster with the Gateway ready.
//     A cluster kept past its deadline, for whatever reason, has phase Held.
//   - A force-remove is not limited by readiness: it may remove the last ready cluster.
//     It is skipped for a cluster of R (it would come back at once), for a cluster the
//     proxy does not list, and while R cannot be read (deferred: the caller asks again).
//   - When R cannot be read (rule 7) nothing is added, no check is asked for or
//     recorded, and no gate, deadline or force-remove removes anything. The clusters
//     whose row says Draining or Held are still taken as draining, and rule 6 still
//     removes those whose ManagedCluster is gone; every other cluster of P is taken as
//     Active, so a cluster believed active is never removed.
//   - Groups are keyed by index, so indexes stay unique: a draining cluster keeps its
//     group's index from P, and its group's name unless R has a group with that index,
//     whose name then wins. The groups of R (and, when R cannot be read, of P) are
//     written even when empty, so an empty real decision is mirrored.
//   - Times written into rows are rounded up to whole seconds, the precision of
//     metav1.Time, so a status read back equals the one written and rounding never
//     makes a drain or an interval shorter.
//   - Messages hold no timestamps or values, so a row changes only when its state does.
//   - State that must survive from one sync to the next lives in fields of the row,
//     never in its message: a message is rebuilt each time from the fields.
//   - Each recorded check is appended to the row's history, oldest first, at most
//     v1alpha1.MaxCheckHistory (a bounded ring). The history lives in the same row, so
//     it is written with the same status write as the check itself; a Removed row
//     keeps it, an Active row has none.
//   - Rule 12 takes the status's word over P's: a crash between the write of the
//     proxy and that of the status after a removal lists the removed cluster again,
//     to drain again. That costs a drain; the opposite choice drops traffic.
//   - The removal gate is the ordered list removalGate (gate.go): one walk gives both
//     the verdict and the row's list of what the removal still waits for.
package decision
