// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package hostmatch matches host names and IP addresses against the entries of an
// allowlist that a hub admin writes: host names (ns1.example.com), wildcard hosts
// (*.example.com), CIDRs (10.0.0.0/8, fd00::/8) and single IP addresses. The
// allowlists of the manager's flags build on it and read their other entries (URL
// prefixes, "public") themselves.
package hostmatch

import (
	"errors"
	"net/netip"
	"strings"
)

// List is a set of host, wildcard, CIDR and IP address entries. Its zero value is
// empty and matches nothing.
//
// Names are matched without regard to case or a final dot. A wildcard host matches
// any name one or more labels under it: *.example.com matches a.example.com and
// a.b.example.com, not example.com. Addresses are matched after IPv4-mapped IPv6
// addresses (::ffff:10.0.0.1) are unmapped, and an IPv4-mapped CIDR
// (::ffff:10.0.0.0/104) reads as the IPv4 CIDR it maps (10.0.0.0/8).
type List struct {
	hosts    []string
	suffixes []string // of wildcards, with their leading dot: ".example.com"
	cidrs    []netip.Prefix
}

// Add reads one entry, without spaces around it: a host name, a wildcard host, a
// CIDR or an IP address.
//
// It returns false and no error when the entry is none of these and holds a "/" or a
// ":" (a URL, a host and port, a CIDR whose length is out of range…), for the caller
// to read it as an entry of its own or refuse it in its own words. It returns an
// error that says what is wrong when the entry is one of these but one it cannot
// take: an address with a zone, an IPv4-mapped CIDR shorter than /96, or a host
// name with a character other than letters, digits, "-" and "_", an empty label, or
// digits alone in its last label (a malformed IP address, not a name). So no IP
// address, written as a name, matches a host or wildcard entry.
func (l *List) Add(entry string) (bool, error) {
	if addr, _, isCIDR := strings.Cut(entry, "/"); isCIDR {
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return false, nil
		}
		if ip.Zone() != "" {
			return true, errors.New("a CIDR with a zone is not supported; remove the %zone")
		}
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return false, nil
		}
		if p.Addr().Is4In6() {
			if p.Bits() < 96 {
				return true, errors.New("an IPv4-mapped CIDR must be /96 or longer; write the IPv4 CIDR it means (::ffff:10.0.0.0/104 is 10.0.0.0/8)")
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		l.cidrs = append(l.cidrs, p.Masked())
		return true, nil
	}
	if ip, err := netip.ParseAddr(entry); err == nil {
		if ip.Zone() != "" {
			return true, errors.New("an IP address with a zone is not supported; remove the %zone")
		}
		ip = ip.Unmap()
		l.cidrs = append(l.cidrs, netip.PrefixFrom(ip, ip.BitLen()))
		return true, nil
	}
	if strings.Contains(entry, ":") {
		return false, nil
	}
	name, wildcard := strings.CutPrefix(entry, "*.")
	name, err := hostName(name)
	if err != nil {
		return true, err
	}
	if wildcard {
		l.suffixes = append(l.suffixes, "."+name)
	} else {
		l.hosts = append(l.hosts, name)
	}
	return true, nil
}

// maxNameLength is the longest a host name is, without its final dot.
const maxNameLength = 253

// hostName checks the host name of an entry and returns it in lower case, without
// its final dot.
func hostName(h string) (string, error) {
	h = normalize(h)
	if len(h) > maxNameLength {
		return "", errors.New("not a host name: longer than 253 characters")
	}
	var last string
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return "", errors.New("not a host name: its labels are letters, digits, - and _, separated by dots; a wildcard is *. and a name")
		}
		last = label
	}
	if strings.Trim(last, "0123456789") == "" {
		// 10.0.0.256 or 10.0.0.1.: a mistyped address, which as a name would match
		// the url or name server 10.0.0.1 written as an address (and *.0.1 would
		// match 10.0.0.1).
		return "", errors.New("neither an IP address nor a host name, whose last label is never digits alone")
	}
	return h, nil
}

// normalize is a name as compared: lower case, without its final dot.
func normalize(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// MatchName reports whether a host or wildcard entry matches name.
func (l *List) MatchName(name string) bool {
	if l == nil {
		return false
	}
	name = normalize(name)
	for _, h := range l.hosts {
		if h == name {
			return true
		}
	}
	for _, s := range l.suffixes {
		if len(name) > len(s) && strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// MatchAddr reports whether a CIDR or IP address entry holds ip, whatever its zone.
func (l *List) MatchAddr(ip netip.Addr) bool {
	if l == nil {
		return false
	}
	ip = ip.WithZone("").Unmap()
	for _, p := range l.cidrs {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// HasCIDRs reports whether the list has a CIDR or IP address entry.
func (l *List) HasCIDRs() bool { return l != nil && len(l.cidrs) > 0 }
