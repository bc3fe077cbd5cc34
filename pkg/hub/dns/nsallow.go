// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"open-cluster-management.io/traffic-migration/pkg/hostmatch"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// AllowPublic is the entry of a NameserverAllowlist that allows any public address
// on port 53: the rule of an empty allowlist.
const AllowPublic = "public"

// NameserverAllowlist is which name servers the manager may ask whether a cluster
// left DNS: the hub admin's bound on spec.dns.verify.nameservers, which tenants
// write, and on the NS servers of a zone that the manager finds itself. Its entries
// (--dns-nameserver-allowlist) are:
//
//   - public: any public address, on port 53; not an unspecified, loopback, private
//     (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local, multicast,
//     broadcast or cloud metadata address;
//   - a host name, such as ns1.example.com: that server, at whatever addresses it
//     resolves to, on any port;
//   - a wildcard host, such as *.awsdns-01.org: any name one or more labels under it;
//   - a CIDR, such as 10.96.0.0/12 or fd00::/8, or a single IP address: any port.
//
// Host names are matched without regard to case. A server named by a host name that
// no host entry allows is asked only at the addresses it resolves to that the other
// entries allow; if it resolves to any other, it is not asked at all, and the round
// fails closed. A nil or empty NameserverAllowlist is "public".
type NameserverAllowlist struct {
	entries []string
	public  bool
	list    hostmatch.List // the host, wildcard, CIDR and IP address entries
}

// ParseNameserverAllowlist reads the entries of a NameserverAllowlist. An error names
// the first entry that is not one. No entry returns nil: public name servers only.
func ParseNameserverAllowlist(entries []string) (*NameserverAllowlist, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	a := &NameserverAllowlist{}
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if err := a.add(e); err != nil {
			return nil, fmt.Errorf("entry %q: %w", raw, err)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// add reads one entry.
func (a *NameserverAllowlist) add(e string) error {
	if e == AllowPublic {
		a.public = true
		return nil
	}
	if e == "" {
		return errors.New("empty; give public, a host name, a wildcard host (*.example.com), a CIDR or an IP address")
	}
	if taken, err := a.list.Add(e); taken || err != nil {
		return err
	}
	return errors.New("neither public, a CIDR, an IP address nor a host name (an entry has no port: it allows every port of what it names)")
}

// AllowsName reports whether a host or wildcard entry allows the name server name,
// whatever it resolves to.
func (a *NameserverAllowlist) AllowsName(name string) bool {
	return a != nil && a.list.MatchName(normalizeName(name))
}

// AllowsAddr reports whether the manager may ask a name server at ip on port: a
// CIDR entry holds ip, or the public rule allows it (a public address, port 53).
func (a *NameserverAllowlist) AllowsAddr(ip netip.Addr, port string) bool {
	ip = ip.WithZone("").Unmap()
	if a == nil || a.public {
		if port == "53" && (AddressRules{RefusePrivate: true}).Refusal(ip.String()) == "" {
			return true
		}
	}
	return a != nil && a.list.MatchAddr(ip)
}

// String lists the entries, for flags' help and messages.
func (a *NameserverAllowlist) String() string {
	if a == nil || len(a.entries) == 0 {
		return AllowPublic
	}
	return shortlist.Join(a.entries, maxListedEntries)
}

// maxListedEntries bounds how many entries of the allowlist a message lists.
const maxListedEntries = 10

// refusedNameserver says that a name server is not asked, for a row's message: what
// the hub admin allows and what to do. It never holds an address the server's name
// resolved to.
func (a *NameserverAllowlist) refusedNameserver(server string, resolved bool) string {
	what := "is not"
	if resolved {
		what = "resolves to an address that is not"
	}
	return fmt.Sprintf("name server %s %s in the hub admin's name server allowlist (--dns-nameserver-allowlist: %s), so it is not asked: ask the hub admin, list an allowed server in dns.verify.nameservers, or use dns.verify.mode ExternalDNS",
		server, what, a.String())
}
