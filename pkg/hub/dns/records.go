// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package dns publishes a policy's Gateway in DNS (spec.dns): it decides, with a pure
// function, which records the policy's external-dns DNSEndpoint must hold, and reads
// and writes that DNSEndpoint on the hub.
//
// The rule: DNS follows the REAL Placement, make-before-break. The records hold the
// target Gateway's IP addresses on the clusters of the real Placement whose agent
// reports the Gateway Programmed. When no cluster of the real Placement is
// publishable, the records stay as last written, so a leaving cluster stays in DNS
// until another one can take its traffic, and the record set is never empty. The
// Gateway itself follows the proxy, which keeps the leaving cluster until its
// traffic is gone.
package dns

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// Record types the manager publishes: external-dns's names for them.
const (
	RecordTypeA    = "A"
	RecordTypeAAAA = "AAAA"
)

// maxNamesInMessage bounds how many cluster names a condition message lists.
const maxNamesInMessage = 10

// Record is one record set of a DNSEndpoint: external-dns's endpoint.
type Record struct {
	// DNSName is the name clients resolve.
	DNSName string
	// RecordType is A or AAAA.
	RecordType string
	// TTL is the record's time to live, in seconds.
	TTL int64
	// Targets are the addresses, sorted.
	Targets []string
}

// Publication is what a DNSEndpoint publishes: its records and the clusters whose
// addresses they hold.
type Publication struct {
	// Clusters are the clusters whose addresses the records hold, sorted.
	Clusters []string
	// Records are sorted by name, then type.
	Records []Record
}

// Equal reports whether two endpoints publish the same.
func (e Publication) Equal(o Publication) bool {
	return slices.Equal(e.Clusters, o.Clusters) && slices.EqualFunc(e.Records, o.Records, func(a, b Record) bool {
		return a.DNSName == b.DNSName && a.RecordType == b.RecordType && a.TTL == b.TTL && slices.Equal(a.Targets, b.Targets)
	})
}

// Input is what Plan needs.
type Input struct {
	// Hostnames are the names of spec.dns.hostnames that the policy may publish
	// (HoldsHostname); none withdraws what it published.
	Hostnames []string
	// TTL is spec.dns.ttl.
	TTL time.Duration
	// RealKnown is false when the real Placement's decisions cannot be read: then
	// nothing is written.
	RealKnown bool
	// Real are the clusters of the real Placement.
	Real []string
	// Programmed are the clusters whose agent reports the target Gateway Programmed.
	Programmed sets.Set[string]
	// Addresses are the target Gateway's addresses by cluster, as the agents report
	// them: IP addresses and host names.
	Addresses map[string][]string
	// Current is what the DNSEndpoint publishes now; nil when it does not exist.
	Current *Publication
	// Rules say which addresses may be published.
	Rules AddressRules
	// CurrentApplied: external-dns has taken Current's generation (and, where it is
	// verified, DNS serves it). Addresses are withdrawn only from an applied Current.
	CurrentApplied bool
}

// Plan is what to publish.
type Plan struct {
	// Desired is what the DNSEndpoint must publish; nil when it must stay as it is
	// (or not be created).
	Desired *Publication
	// Unpublishable names the clusters of the real Placement with the Gateway
	// Programmed that have no IP address to publish, only host names or none, for the
	// condition's message.
	Unpublishable []string
	// Refused are, by cluster of the real Placement with the Gateway Programmed, the
	// reported IP addresses that are never published (AddressRules.Refusal), sorted.
	Refused map[string][]Refused
	// OverLimit names the clusters that were not published because a record set had
	// MaxTargetsPerRecord addresses already.
	OverLimit []string
	// Step says where a switch stands: StepNone when none is under way.
	Step Step
}

// Step is where a switch of the published addresses stands. A switch from one set of
// addresses to another is made in two steps, so that no DNS provider ever leaves a
// name without an answer: the records first grow by the new addresses (StepAdd), and
// shrink by the old ones only once external-dns applied the records that hold both
// (StepWithdraw). Providers that apply an update as delete-then-create (external-dns's
// CoreDNS provider deletes the old target's key before it writes the new one) would
// otherwise answer NXDOMAIN for a moment.
type Step string

const (
	// StepNone: no switch is under way, or it ends with this plan.
	StepNone Step = ""
	// StepAdd: the plan publishes the new addresses beside the old ones.
	StepAdd Step = "Add"
	// StepWaitApplied: the old addresses are withdrawn once external-dns applied the
	// records that hold both; the plan writes nothing meanwhile.
	StepWaitApplied Step = "WaitApplied"
)

// Decide decides what the policy's DNSEndpoint publishes. It is a pure function of
// its input: the same input gives the same plan, and a plan written and read back as
// Current gives a plan with nothing to write.
func Decide(in Input) Plan {
	var p Plan
	if !in.RealKnown {
		return p
	}
	v4, v6 := sets.New[string](), sets.New[string]()
	var published []string
	for _, cluster := range sortedUnique(in.Real) {
		if !in.Programmed.Has(cluster) {
			continue
		}
		var c4, c6 []string
		for _, a := range in.Addresses[cluster] {
			ip, err := netip.ParseAddr(a)
			if err != nil || ip.Zone() != "" {
				continue // a host name: never published (see docs/dns.md)
			}
			if why := in.Rules.Refusal(a); why != "" {
				if p.Refused == nil {
					p.Refused = map[string][]Refused{}
				}
				p.Refused[cluster] = append(p.Refused[cluster], Refused{Address: ip.String(), Reason: why})
				continue
			}
			if ip = ip.Unmap(); ip.Is4() {
				c4 = append(c4, ip.String())
			} else {
				c6 = append(c6, ip.String())
			}
		}
		switch {
		case len(c4)+len(c6) == 0:
			p.Unpublishable = append(p.Unpublishable, cluster)
			continue
		case v4.Clone().Insert(c4...).Len() > MaxTargetsPerRecord || v6.Clone().Insert(c6...).Len() > MaxTargetsPerRecord:
			p.OverLimit = append(p.OverLimit, cluster)
			continue
		}
		v4.Insert(c4...)
		v6.Insert(c6...)
		published = append(published, cluster)
	}
	for c, refused := range p.Refused {
		slices.SortFunc(refused, func(a, b Refused) int { return strings.Compare(a.Address, b.Address) })
		p.Refused[c] = slices.CompactFunc(refused, func(a, b Refused) bool { return a.Address == b.Address })
	}
	if len(published) == 0 {
		// Make-before-break: nothing can take the traffic, so DNS keeps what it has.
		return p
	}
	hostnames := sortedUnique(in.Hostnames)
	desired := Publication{Clusters: published}
	if len(hostnames) == 0 {
		// The policy may publish none of its names (another policy holds them): what
		// it published is withdrawn, and nothing is created.
		if in.Current == nil || len(in.Current.Records) == 0 {
			return p
		}
		desired = Publication{}
	}
	ttl := int64(in.TTL / time.Second)
	for _, name := range hostnames {
		if v4.Len() > 0 {
			desired.Records = append(desired.Records, Record{DNSName: name, RecordType: RecordTypeA, TTL: ttl, Targets: sets.List(v4)})
		}
		if v6.Len() > 0 {
			desired.Records = append(desired.Records, Record{DNSName: name, RecordType: RecordTypeAAAA, TTL: ttl, Targets: sets.List(v6)})
		}
	}
	if in.Current == nil {
		p.Desired = &desired
		return p
	}
	if in.Current.Equal(desired) {
		return p
	}
	grows, shrinks := compare(*in.Current, desired)
	switch {
	case grows && shrinks:
		// Make-before-break in DNS too: the new addresses beside the old ones first.
		union := merge(*in.Current, desired)
		p.Desired, p.Step = &union, StepAdd
	case shrinks && !in.CurrentApplied:
		// The old addresses go once the records that hold the new ones are applied.
		p.Step = StepWaitApplied
	default:
		p.Desired = &desired
	}
	return p
}

// recordKey names a record set: its name and type.
type recordKey struct{ name, recordType string }

// targetsByRecord returns each record set's targets.
func targetsByRecord(e Publication) map[recordKey]sets.Set[string] {
	out := make(map[recordKey]sets.Set[string], len(e.Records))
	for _, r := range e.Records {
		k := recordKey{r.DNSName, r.RecordType}
		if out[k] == nil {
			out[k] = sets.New[string]()
		}
		out[k].Insert(r.Targets...)
	}
	return out
}

// Shrinks reports whether going from current to desired removes a target from some
// record set: the second step of a switch.
func Shrinks(current, desired Publication) bool {
	_, shrinks := compare(current, desired)
	return shrinks
}

// compare reports whether going from current to desired adds a target to some record
// set (grows) and removes one from some record set (shrinks). A change of TTL or of
// the published clusters alone does neither.
func compare(current, desired Publication) (grows, shrinks bool) {
	cur, des := targetsByRecord(current), targetsByRecord(desired)
	for k, ts := range des {
		if !cur[k].IsSuperset(ts) {
			grows = true
		}
	}
	for k, ts := range cur {
		if !des[k].IsSuperset(ts) {
			shrinks = true
		}
	}
	return grows, shrinks
}

// merge returns what publishes both current and desired: every record set of either,
// with the targets of both, at desired's TTL where desired has the record set, and
// the clusters of both.
func merge(current, desired Publication) Publication {
	ttl := map[recordKey]int64{}
	for _, r := range current.Records {
		ttl[recordKey{r.DNSName, r.RecordType}] = r.TTL
	}
	for _, r := range desired.Records {
		ttl[recordKey{r.DNSName, r.RecordType}] = r.TTL
	}
	targets := targetsByRecord(current)
	for k, ts := range targetsByRecord(desired) {
		if targets[k] == nil {
			targets[k] = sets.New[string]()
		}
		targets[k] = targets[k].Union(ts)
	}
	out := Publication{Clusters: sortedUnique(append(slices.Clone(current.Clusters), desired.Clusters...))}
	for k, ts := range targets {
		out.Records = append(out.Records, Record{DNSName: k.name, RecordType: k.recordType, TTL: ttl[k], Targets: sets.List(ts)})
	}
	slices.SortFunc(out.Records, func(a, b Record) int {
		if c := strings.Compare(a.DNSName, b.DNSName); c != 0 {
			return c
		}
		return strings.Compare(a.RecordType, b.RecordType)
	})
	return out
}

// Withdrawn returns which of clusters the published records no longer hold, once
// external-dns applied them; none while it has not, or while nothing is published.
func Withdrawn(current *Publication, applied bool, clusters []string) sets.Set[string] {
	out := sets.New[string]()
	if current == nil || !applied {
		return out
	}
	in := sets.New(current.Clusters...)
	for _, c := range clusters {
		if !in.Has(c) {
			out.Insert(c)
		}
	}
	return out
}

// UnpublishableMessage names the clusters that have the Gateway Programmed but no IP
// address, for a condition's message; "" when there are none.
func UnpublishableMessage(clusters []string) string {
	if len(clusters) == 0 {
		return ""
	}
	return fmt.Sprintf("; not publishable, with no IP address on their Gateway (host names are not published): %s",
		shortlist.Join(clusters, maxNamesInMessage))
}

// StepMessage says where a switch stands, for a condition's message; "" when none is
// under way.
func StepMessage(s Step) string {
	switch s {
	case StepAdd, StepWaitApplied:
		return "; switching in two steps: the new addresses are published beside the old ones, which are withdrawn once external-dns has applied both"
	}
	return ""
}

// PublishedMessage names the published clusters.
func PublishedMessage(clusters []string) string {
	return fmt.Sprintf("%d %s: %s", len(clusters), plural(len(clusters), "cluster", "clusters"), shortlist.Join(clusters, maxNamesInMessage))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sortedUnique returns a sorted copy of s without duplicates or empty strings.
func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(v string) bool { return strings.TrimSpace(v) == "" })
}

// Hostnames returns spec.dns.hostnames as strings.
func Hostnames(spec *trafficv1alpha1.DNSPublishing) []string {
	out := make([]string, 0, len(spec.Hostnames))
	for _, h := range spec.Hostnames {
		out = append(out, string(h))
	}
	return out
}

// OverLimitMessage names the clusters left out for MaxTargetsPerRecord, for a
// condition's message; "" when there are none.
func OverLimitMessage(clusters []string) string {
	if len(clusters) == 0 {
		return ""
	}
	return fmt.Sprintf("; not published, as a record set holds at most %d addresses: %s", MaxTargetsPerRecord, shortlist.Join(clusters, maxNamesInMessage))
}

// DescribeChange says what a write of the DNSEndpoint changes, for its event: the
// addresses published and withdrawn for each name, each with the clusters that report
// it (from addresses, by cluster), at most maxNamesInMessage of each.
func DescribeChange(previous *Publication, next Publication, addresses map[string][]string) string {
	owners := map[string][]string{}
	for _, cluster := range slices.Sorted(maps.Keys(addresses)) {
		for _, a := range addresses[cluster] {
			if ip, err := netip.ParseAddr(a); err == nil {
				owners[ip.Unmap().String()] = append(owners[ip.Unmap().String()], cluster)
			}
		}
	}
	name := func(target, hostname string) string {
		if cs := owners[target]; len(cs) > 0 {
			return strings.Join(slices.Compact(cs), "/") + "'s " + target + " for " + hostname
		}
		return target + " for " + hostname
	}
	before := map[recordKey]sets.Set[string]{}
	if previous != nil {
		before = targetsByRecord(*previous)
	}
	after := targetsByRecord(next)
	keys := sets.New[recordKey]()
	for k := range before {
		keys.Insert(k)
	}
	for k := range after {
		keys.Insert(k)
	}
	sorted := keys.UnsortedList()
	slices.SortFunc(sorted, func(a, b recordKey) int {
		return strings.Compare(a.name+" "+a.recordType, b.name+" "+b.recordType)
	})
	var published, withdrawn []string
	for _, k := range sorted {
		for _, t := range sets.List(after[k].Difference(before[k])) {
			published = append(published, name(t, k.name))
		}
		for _, t := range sets.List(before[k].Difference(after[k])) {
			withdrawn = append(withdrawn, name(t, k.name))
		}
	}
	var parts []string
	if len(published) > 0 {
		parts = append(parts, "Published "+shortlist.Join(published, maxNamesInMessage))
	}
	if len(withdrawn) > 0 {
		parts = append(parts, "Withdrew "+shortlist.Join(withdrawn, maxNamesInMessage))
	}
	if len(parts) == 0 {
		return "No address changed (TTL or clusters only)."
	}
	return strings.Join(parts, "; ") + "."
}
