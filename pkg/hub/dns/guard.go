// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// What a hub admin bounds: which namespaces may publish which names (Domains), which
// addresses are ever published (AddressRules), and how large a record set grows.

// MaxTargetsPerRecord is the most addresses one record set (a name and a type)
// publishes. The clusters of the real Placement are taken in name order until it is
// reached; the others are not published, and say so.
const MaxTargetsPerRecord = 64

// Domains says which namespaces may publish which names: the hub admin's
// --dns-domains. A nil *Domains allows every namespace every name (a hub of one
// tenant).
type Domains struct {
	rules []domainRule
}

// domainRule lets namespace ("*": any) publish names matching pattern.
type domainRule struct {
	namespace string
	pattern   string // lower case, without the final dot; "*.d" for names under d
}

// ParseDomains reads --dns-domains: each entry "<namespace>=<pattern>", where
// namespace is a namespace's name or "*" for every namespace, and pattern is a name
// (shop.example.com: that name only) or "*." and a name (*.a.example.com: every name
// under a.example.com, wildcards included, but not a.example.com itself). Repeat a
// namespace for several patterns. No entry returns nil: every namespace may publish
// every name.
func ParseDomains(entries []string) (*Domains, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	d := &Domains{}
	for _, e := range entries {
		ns, pattern, ok := strings.Cut(strings.TrimSpace(e), "=")
		ns, pattern = strings.TrimSpace(ns), normalizeName(pattern)
		if !ok || ns == "" || pattern == "" {
			return nil, fmt.Errorf("%q is not <namespace>=<domain>, such as team-a=*.a.example.com", e)
		}
		if ns != "*" {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				return nil, fmt.Errorf("%q: %q is not a namespace name: %s", e, ns, strings.Join(msgs, "; "))
			}
		}
		name := strings.TrimPrefix(pattern, "*.")
		if strings.Contains(name, "*") {
			return nil, fmt.Errorf("%q: a domain may start with \"*.\" and hold no other \"*\"", e)
		}
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || !strings.Contains(name, ".") {
			return nil, fmt.Errorf("%q: %q is not a fully qualified domain name such as example.com", e, name)
		}
		d.rules = append(d.rules, domainRule{namespace: ns, pattern: pattern})
	}
	return d, nil
}

// Allows reports whether namespace may publish hostname.
func (d *Domains) Allows(namespace, hostname string) bool {
	if d == nil {
		return true
	}
	hostname = normalizeName(hostname)
	return slices.ContainsFunc(d.rules, func(r domainRule) bool {
		return (r.namespace == "*" || r.namespace == namespace) && matchDomain(r.pattern, hostname)
	})
}

// matchDomain reports whether a name matches a pattern: the name itself, or, for
// "*.d", any name that ends in ".d" (a wildcard name "*.x.d" too).
func matchDomain(pattern, name string) bool {
	if under, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(name, "."+under) && len(name) > len(under)+1
	}
	return name == pattern
}

// normalizeName is a DNS name as compared: lower case, without spaces or the final
// dot.
func normalizeName(s string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// AddressRules says which reported addresses may be published.
type AddressRules struct {
	// RefusePrivate refuses the private ranges (10/8, 172.16/12, 192.168/16,
	// 100.64/10, fc00::/7) too: --dns-allow-private=false.
	RefusePrivate bool
}

// Reasons an address is refused, as the row and the event say them.
const (
	RefusedNotAnAddress = "not an IP address"
	RefusedUnspecified  = "unspecified"
	RefusedLoopback     = "loopback"
	RefusedLinkLocal    = "link-local"
	RefusedMulticast    = "multicast"
	RefusedBroadcast    = "broadcast"
	RefusedMetadata     = "a cloud metadata address"
	RefusedPrivate      = "private (the hub admin allows no private address)"
)

// metadataAddresses are the documented addresses of the clouds' instance metadata
// services: 169.254.169.254 (AWS, Azure, Google Cloud, OpenStack and others),
// 169.254.170.2 (AWS ECS task metadata), 100.100.100.200 (Alibaba Cloud) and
// fd00:ec2::254 (AWS IMDS over IPv6). Other link-local addresses are refused as such.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
}

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT), counted as
// private.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// broadcast is the limited broadcast address.
var broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// Refusal says why an address reported for a Gateway is never published, "" when it
// may be: a client can reach a Gateway at none of these, and a compromised or broken
// agent must not point a name at them.
func (r AddressRules) Refusal(a string) string {
	ip, err := netip.ParseAddr(strings.TrimSpace(a))
	if err != nil || ip.Zone() != "" {
		return RefusedNotAnAddress
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return RefusedUnspecified
	case ip.IsLoopback():
		return RefusedLoopback
	case ip == broadcast:
		return RefusedBroadcast
	case slices.Contains(metadataAddresses, ip):
		return RefusedMetadata
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return RefusedLinkLocal
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return RefusedMulticast
	case r.RefusePrivate && (ip.IsPrivate() || sharedAddressSpace.Contains(ip)):
		return RefusedPrivate
	}
	return ""
}

// Refused is an address that is not published, and why.
type Refused struct {
	Address string
	Reason  string
}

func (r Refused) String() string { return r.Address + " (" + r.Reason + ")" }
