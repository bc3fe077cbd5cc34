// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"time"

	"github.com/prometheus/common/model"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// Defaults of the policy's fields, as the CRD declares them. PolicyFromSpec applies them
// too, so a policy that was never defaulted by an API server (a fake client, an old
// object) behaves the same.
const (
	// DefaultInterval is the default of spec.interval.
	DefaultInterval = 30 * time.Second
	// MinInterval is the shortest interval between two checks of a cluster.
	MinInterval = time.Second
	// DefaultConsecutiveSuccesses is the default of spec.consecutiveSuccesses.
	DefaultConsecutiveSuccesses int32 = 3
	// DefaultMinDrainDuration is the default of spec.minDrainDuration.
	DefaultMinDrainDuration = 2 * time.Minute
	// DefaultDNSTTL is the default of spec.dns.ttl.
	DefaultDNSTTL = 60 * time.Second
)

// Policy is what the rules need of a TrafficMigrationPolicySpec, with its defaults
// applied. Decide reads a zero or negative Interval or ConsecutiveSuccesses as the
// default, an Interval below MinInterval as MinInterval, any OnMaxDrainDuration other
// than Remove as Hold and any NoDataPolicy other than Pass as Hold: the safe side.
type Policy struct {
	// Suspend stops removals by the gate and by the deadline.
	Suspend bool
	// Interval is the least time between two checks of a draining cluster.
	Interval time.Duration
	// ConsecutiveSuccesses is how many passed checks in a row open the gate.
	ConsecutiveSuccesses int32
	// MinDrainDuration is the least time a cluster drains. Zero is allowed.
	MinDrainDuration time.Duration
	// MaxDrainDuration is the drain's deadline; nil when there is none.
	MaxDrainDuration *time.Duration
	// OnMaxDrainDuration is what happens at the deadline: Hold or Remove.
	OnMaxDrainDuration v1alpha1.DeadlineAction
	// NoDataPolicy is how a check without data counts: Hold (failed) or Pass.
	NoDataPolicy v1alpha1.NoDataPolicy
	// DNSTTL is the TTL of the records the manager publishes (spec.dns); zero without
	// spec.dns. While DNS is followed (Input.DNS), a drain lasts at least this long
	// after the cluster left DNS.
	DNSTTL time.Duration
	// ShareWindow is the range of the rate() of spec.trafficShare (its window); zero
	// with a metricsQuery, whose window is not known. It sets when a drain that DNS
	// let go of is stalled (see stallAfter).
	ShareWindow time.Duration
	// Ceiling is the hub admin's bound on every drain; nil when there is none.
	Ceiling *Ceiling
	// MinReadyClusters is how many Active clusters must have the Gateway ready for a
	// draining cluster to leave (spec.replacement); zero without it.
	MinReadyClusters int32
	// ReplacementCheck: spec.replacement has a metricsQuery, which an Active cluster
	// must pass to count toward MinReadyClusters (see DueReplacements).
	ReplacementCheck bool
	// Expectation is what a check's value must meet, for the removal estimate only;
	// nil when the spec's does not parse (then no check passes anyway).
	Expectation *v1alpha1.Comparison
}

// Ceiling is the hub admin's bound on how long any policy keeps a cluster draining
// (the manager's --max-drain-duration): the last word over a tenant's spec. Past it,
// counted from when the cluster left the real decisions, Action applies whatever the
// policy says: Remove removes the cluster even when the policy is suspended or its
// minimum drain or checks say otherwise (never the last cluster with the Gateway
// ready, never while the real decisions cannot be read); Hold marks it Held. A policy
// whose own maxDrainDuration comes first keeps its own deadline and action until the
// ceiling.
type Ceiling struct {
	// MaxDrainDuration is the longest drain; a ceiling of zero or less is none.
	MaxDrainDuration time.Duration
	// Action is Hold or Remove; anything else is read as Hold.
	Action v1alpha1.DeadlineAction
}

// PolicyFromSpec takes the rules' inputs from a policy's spec and applies the defaults
// the CRD declares for fields that are unset.
func PolicyFromSpec(spec *v1alpha1.TrafficMigrationPolicySpec) Policy {
	p := Policy{
		Suspend:              spec.Suspend,
		Interval:             DefaultInterval,
		ConsecutiveSuccesses: spec.ConsecutiveSuccesses,
		MinDrainDuration:     DefaultMinDrainDuration,
		OnMaxDrainDuration:   spec.OnMaxDrainDuration,
		NoDataPolicy:         spec.NoDataPolicy,
	}
	if spec.Interval != nil {
		p.Interval = spec.Interval.Duration
	}
	if spec.MinDrainDuration != nil {
		p.MinDrainDuration = spec.MinDrainDuration.Duration
	}
	if spec.MaxDrainDuration != nil {
		d := spec.MaxDrainDuration.Duration
		p.MaxDrainDuration = &d
	}
	if spec.Replacement != nil {
		p.MinReadyClusters = max(spec.Replacement.MinReadyClusters, 1)
		p.ReplacementCheck = spec.Replacement.Check() != nil
	}
	if c, err := spec.Expectation(); err == nil {
		p.Expectation = &c
	}
	if spec.TrafficShare != nil {
		// A window that does not parse fails every check anyway.
		if d, err := model.ParseDuration(spec.TrafficShare.WithDefaults().Window); err == nil {
			p.ShareWindow = time.Duration(d)
		}
	}
	if spec.DNS != nil {
		p.DNSTTL = DefaultDNSTTL
		if spec.DNS.TTL != nil {
			p.DNSTTL = spec.DNS.TTL.Duration
		}
	}
	return p.normalized()
}

// CheckDueAfter is when a cluster checked at last is due to be checked again: an
// interval later, rounded up to a whole second.
func (p Policy) CheckDueAfter(last time.Time) time.Time {
	return ceilSecond(last.Add(p.normalized().Interval))
}

// normalized returns the policy with the defaults and safe readings applied.
func (p Policy) normalized() Policy {
	if p.Interval <= 0 {
		p.Interval = DefaultInterval
	}
	if p.Interval < MinInterval {
		p.Interval = MinInterval
	}
	if p.ConsecutiveSuccesses <= 0 {
		p.ConsecutiveSuccesses = DefaultConsecutiveSuccesses
	}
	if p.MinDrainDuration < 0 {
		p.MinDrainDuration = 0
	}
	if p.MaxDrainDuration != nil {
		d := max(*p.MaxDrainDuration, 0)
		p.MaxDrainDuration = &d
	}
	if p.OnMaxDrainDuration != v1alpha1.DeadlineRemove {
		p.OnMaxDrainDuration = v1alpha1.DeadlineHold
	}
	if p.NoDataPolicy != v1alpha1.NoDataPass {
		p.NoDataPolicy = v1alpha1.NoDataHold
	}
	if p.DNSTTL < 0 {
		p.DNSTTL = 0
	}
	if p.ShareWindow < 0 {
		p.ShareWindow = 0
	}
	if p.Ceiling != nil {
		c := *p.Ceiling
		if c.Action != v1alpha1.DeadlineRemove {
			c.Action = v1alpha1.DeadlineHold
		}
		p.Ceiling = &c
		if c.MaxDrainDuration <= 0 {
			p.Ceiling = nil
		}
	}
	return p
}

// CeilingBinds reports whether the hub's ceiling can end a drain of this policy:
// whether it comes before the policy's own deadline, or the policy has none.
func (p Policy) CeilingBinds() bool {
	p = p.normalized()
	if p.Ceiling == nil {
		return false
	}
	if p.MaxDrainDuration == nil {
		return true
	}
	own := max(*p.MaxDrainDuration, p.MinDrainDuration)
	return p.Ceiling.MaxDrainDuration < own ||
		(p.Ceiling.MaxDrainDuration == own && p.Ceiling.Action == v1alpha1.DeadlineRemove && p.OnMaxDrainDuration != v1alpha1.DeadlineRemove)
}

// minDrain is the least time a cluster drains, counted from its drain clock: with DNS
// followed, never shorter than the records' TTL, which clients may still be caching
// when the records go.
func (p Policy) minDrain(followDNS bool) time.Duration {
	if followDNS {
		return max(p.MinDrainDuration, p.DNSTTL)
	}
	return p.MinDrainDuration
}

// MinDrainEnd is when the minimum drain of a row that holds a drain is over: minDrain
// after its drain clock. The clock starts when DNS let go of the cluster while DNS is
// followed (Input.DNS), else when the cluster left the real decisions, and never
// before that, whatever a status says. Zero while DNS still publishes the cluster.
func (p Policy) MinDrainEnd(row *v1alpha1.ClusterStatus, followDNS bool) time.Time {
	clock := row.DrainStartTime
	if followDNS && (row.DNSWithdrawalTime == nil || row.DrainStartTime.Before(row.DNSWithdrawalTime)) {
		clock = row.DNSWithdrawalTime
	}
	if clock == nil {
		return time.Time{}
	}
	return clock.Add(p.minDrain(followDNS))
}

// Deadline is when the drain of a row passes maxDrainDuration, counted from its
// drainStartTime and never before its minDrainDuration; zero without maxDrainDuration.
// The hub's ceiling is apart (Ceiling).
func (p Policy) Deadline(row *v1alpha1.ClusterStatus) time.Time {
	if p.MaxDrainDuration == nil || row.DrainStartTime == nil {
		return time.Time{}
	}
	return row.DrainStartTime.Add(max(*p.MaxDrainDuration, p.MinDrainDuration))
}

// passes reports whether a check with this result counts as a success.
func (p Policy) passes(r v1alpha1.EvaluationResult) bool {
	return r == v1alpha1.EvaluationPass || (r == v1alpha1.EvaluationNoData && p.NoDataPolicy == v1alpha1.NoDataPass)
}
