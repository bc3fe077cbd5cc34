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

// Endpoint is what a DNSEndpoint publishes: its records and the clusters whose
// addresses they hold.
type Endpoint struct {
	// Clusters are the clusters whose addresses the records hold, sorted.
	Clusters []string
	// Records are sorted by name, then type.
	Records []Record
}

// Equal reports whether two endpoints publish the same.
func (e Endpoint) Equal(o Endpoint) bool {
	return slices.Equal(e.Clusters, o.Clusters) && slices.EqualFunc(e.Records, o.Records, func(a, b Record) bool {
		return a.DNSName == b.DNSName && a.RecordType == b.RecordType && a.TTL == b.TTL && slices.Equal(a.Targets, b.Targets)
	})
}

// Input is what Plan needs.
type Input struct {
	// Hostnames are spec.dns.hostnames.
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
	Current *Endpoint
}

// Plan is what to publish.
type Plan struct {
	// Desired is what the DNSEndpoint must publish; nil when it must stay as it is
	// (or not be created).
	Desired *Endpoint
	// Unpublishable names the clusters of the real Placement with the Gateway
	// Programmed that have no IP address to publish, only host names or none, for the
	// condition's message.
	Unpublishable []string
}

// Decide decides what the policy's DNSEndpoint publishes. It is a pure function of
// its input: the same input gives the same plan, and a plan written and read back as
// Current gives a plan with nothing to write.
func Decide(in Input) Plan {
	var p Plan
	if !in.RealKnown {
		return p
	}
	var v4, v6 []string
	var published []string
	for _, cluster := range sortedUnique(in.Real) {
		if !in.Programmed.Has(cluster) {
			continue
		}
		ips := 0
		for _, a := range in.Addresses[cluster] {
			ip, err := netip.ParseAddr(a)
			if err != nil || ip.Zone() != "" {
				continue // a host name: never published (see docs/dns.md)
			}
			ips++
			if ip.Unmap().Is4() {
				v4 = append(v4, ip.Unmap().String())
			} else {
				v6 = append(v6, ip.String())
			}
		}
		if ips == 0 {
			p.Unpublishable = append(p.Unpublishable, cluster)
			continue
		}
		published = append(published, cluster)
	}
	if len(published) == 0 {
		// Make-before-break: nothing can take the traffic, so DNS keeps what it has.
		return p
	}
	desired := Endpoint{Clusters: published}
	ttl := int64(in.TTL / time.Second)
	for _, name := range sortedUnique(in.Hostnames) {
		if len(v4) > 0 {
			desired.Records = append(desired.Records, Record{DNSName: name, RecordType: RecordTypeA, TTL: ttl, Targets: sortedUnique(v4)})
		}
		if len(v6) > 0 {
			desired.Records = append(desired.Records, Record{DNSName: name, RecordType: RecordTypeAAAA, TTL: ttl, Targets: sortedUnique(v6)})
		}
	}
	if in.Current != nil && in.Current.Equal(desired) {
		return p
	}
	p.Desired = &desired
	return p
}

// Withdrawn returns which of clusters the published records no longer hold, once
// external-dns applied them; none while it has not, or while nothing is published.
func Withdrawn(current *Endpoint, applied bool, clusters []string) sets.Set[string] {
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
