// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"math"
	"strconv"
	"time"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// A drain that DNS let go of but whose traffic does not fall is stalled: the clients
// that still reach the cluster do not resolve the name again. Clients on long-lived
// connections (HTTP/2, gRPC, pooled keep-alive) keep the connection they have, and
// some resolvers ignore the TTL. Being stalled removes nothing: the cluster stays
// until its gate passes, its deadline or the hub's ceiling ends the drain, or it is
// force-removed. It only changes the row's message, sets its Stalled and drops its
// estimate.
const (
	// stallTTLGrace is added to the TTL: the time a client that honours the TTL
	// needs, past its cache's expiry, to open a new connection elsewhere.
	stallTTLGrace = 60 * time.Second
	// stallWindows is how many windows of the share's rate() the traffic gets to
	// fall: after that many, the rate holds no request from before the withdrawal.
	stallWindows = 4
	// stallFraction: a drain is stalled while its value is more than this fraction
	// of the value when DNS let go of it.
	stallFraction = 0.5
)

// msgStalled says a drain is stalled, its likely causes and what to do. It holds no
// value or time, as every row message.
const msgStalled = "drain stalled: its traffic has not fallen by half since DNS withdrew it; " +
	"likely, clients on long-lived connections (HTTP/2, gRPC, pooled keep-alive) or resolvers that ignore the TTL keep sending to it; " +
	"bound the Gateway's connection lifetime (Traefik keepAliveMaxTime, Envoy Gateway ClientTrafficPolicy, Istio, NGINX Gateway Fabric: " +
	"see docs/troubleshooting.md#stalled-drains), or end the drain with maxDrainDuration or the force-remove annotation"

// stallAfter is how long after DNS let go of a cluster its traffic must have fallen
// by half: the larger of the TTL plus stallTTLGrace and stallWindows windows of the
// share's rate() (intervals when the window is not known, with a metricsQuery).
func (p Policy) stallAfter() time.Duration {
	window := p.ShareWindow
	if window <= 0 {
		window = p.Interval
	}
	return max(p.DNSTTL+stallTTLGrace, stallWindows*window)
}

// keepWithdrawalChecks keeps, in the row of each draining cluster that DNS let go of,
// the first check with a value made at or after its withdrawal: the reference a stall
// is judged against, which the bounded history drops after a few checks. It is set
// with the check that it copies, so it never makes a status write of its own.
func (pl *plan) keepWithdrawalChecks() {
	if !pl.followDNS() {
		return
	}
	for _, d := range pl.draining {
		if d.row.DNSWithdrawalTime == nil || d.row.DNSWithdrawalCheck != nil {
			continue
		}
		for _, r := range d.row.History {
			if _, ok := checkValue(r); ok && !r.Time.Before(d.row.DNSWithdrawalTime) {
				ref := r
				d.row.DNSWithdrawalCheck = &ref
				break
			}
		}
	}
}

// stalled reports whether d's drain is stalled: DNS let go of it, and its latest check
// with a value, made more than stallAfter after that, did not pass and is more than
// half the value of the first check at or after the withdrawal. Only an expectation
// that the value falls under ("<" or "<=", as trafficShare's) says which way the
// traffic should go. Without a reference, a later check or a positive reference
// value, the drain is not stalled: the rule is careful in what it says.
//
// It reads the row's checks, not the clock: it changes with a check, whose status
// write carries the change.
func (pl *plan) stalled(d *drainRow) bool {
	c := pl.policy.Expectation
	withdrawn, ref := d.row.DNSWithdrawalTime, d.row.DNSWithdrawalCheck
	if !pl.followDNS() || withdrawn == nil || ref == nil || c == nil || (c.Operator != "<" && c.Operator != "<=") {
		return false
	}
	from, ok := checkValue(*ref)
	if !ok || from <= 0 {
		return false
	}
	for i := len(d.row.History) - 1; i >= 0; i-- {
		r := d.row.History[i]
		v, ok := checkValue(r)
		if !ok {
			continue
		}
		return r.Time.After(ref.Time.Time) && r.Time.After(withdrawn.Add(pl.policy.stallAfter())) &&
			!pl.policy.passes(r.Result) && v > stallFraction*from
	}
	return false
}

// checkValue is a check's value as a finite number; false when it has none.
func checkValue(r v1alpha1.CheckRecord) (float64, bool) {
	v, err := strconv.ParseFloat(r.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
