// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"net/netip"
	"strings"
	"testing"
)

func TestRefusal(t *testing.T) {
	cases := map[string]struct {
		addr          string
		want          string
		refusePrivate bool
	}{
		"a public address":             {addr: "192.0.2.60"},
		"a public IPv6 address":        {addr: "2001:db8::60"},
		"a private address by default": {addr: "10.1.2.3"},
		"a private address refused":    {addr: "10.1.2.3", refusePrivate: true, want: RefusedPrivate},
		"172.16/12 refused":            {addr: "172.20.0.1", refusePrivate: true, want: RefusedPrivate},
		"192.168/16 refused":           {addr: "192.168.1.1", refusePrivate: true, want: RefusedPrivate},
		"carrier-grade NAT refused":    {addr: "100.64.0.1", refusePrivate: true, want: RefusedPrivate},
		"unique local IPv6 refused":    {addr: "fd12::1", refusePrivate: true, want: RefusedPrivate},
		"0.0.0.0":                      {addr: "0.0.0.0", want: RefusedUnspecified},
		"::":                           {addr: "::", want: RefusedUnspecified},
		"127.0.0.1":                    {addr: "127.0.0.1", want: RefusedLoopback},
		"127.8.9.10":                   {addr: "127.8.9.10", want: RefusedLoopback},
		"::1":                          {addr: "::1", want: RefusedLoopback},
		"IPv4-mapped loopback":         {addr: "::ffff:127.0.0.1", want: RefusedLoopback},
		"the metadata service":         {addr: "169.254.169.254", want: RefusedMetadata},
		"ECS task metadata":            {addr: "169.254.170.2", want: RefusedMetadata},
		"Alibaba's metadata service":   {addr: "100.100.100.200", want: RefusedMetadata},
		"AWS's IPv6 metadata service":  {addr: "fd00:ec2::254", want: RefusedMetadata},
		"link-local":                   {addr: "169.254.1.1", want: RefusedLinkLocal},
		"fe80::1":                      {addr: "fe80::1", want: RefusedLinkLocal},
		"link-local multicast":         {addr: "224.0.0.251", want: RefusedLinkLocal},
		"ff02::1":                      {addr: "ff02::1", want: RefusedLinkLocal},
		"multicast":                    {addr: "239.1.1.1", want: RefusedMulticast},
		"IPv6 multicast":               {addr: "ff05::2", want: RefusedMulticast},
		"broadcast":                    {addr: "255.255.255.255", want: RefusedBroadcast},
		"a zone":                       {addr: "fe80::1%eth0", want: RefusedNotAnAddress},
		"a host name":                  {addr: "lb.example.com", want: RefusedNotAnAddress},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (AddressRules{RefusePrivate: tc.refusePrivate}).Refusal(tc.addr); got != tc.want {
				t.Errorf("Refusal(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}

// FuzzRefusal checks that no address a client cannot reach a Gateway at is ever
// accepted, whatever its spelling.
func FuzzRefusal(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "0.0.0.0", "::ffff:169.254.169.254", "fe80::1%eth0", "224.0.0.251", "10.0.0.1", "::1", "x"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, refusePrivate bool) {
		why := AddressRules{RefusePrivate: refusePrivate}.Refusal(s)
		ip, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || ip.Zone() != "" {
			if why != RefusedNotAnAddress {
				t.Fatalf("%q is no address, yet Refusal says %q", s, why)
			}
			return
		}
		ip = ip.Unmap()
		unreachable := ip.IsUnspecified() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsMulticast() || ip == broadcast || (refusePrivate && ip.IsPrivate())
		if unreachable && why == "" {
			t.Fatalf("%q is accepted", s)
		}
	})
}

func TestDomains(t *testing.T) {
	d, err := ParseDomains([]string{"team-a=*.a.example.com", "team-a=a.example.com", "team-b=shop.example.com", "*=*.shared.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		namespace, hostname string
		want                bool
	}{
		{"team-a", "www.a.example.com", true},
		{"team-a", "x.y.a.example.com", true},
		{"team-a", "*.a.example.com", true},
		{"team-a", "a.example.com", true},
		{"team-a", "WWW.A.Example.com.", true},
		{"team-a", "evila.example.com", false},
		{"team-a", "a.example.com.evil.com", false},
		{"team-a", "shop.example.com", false},
		{"team-b", "shop.example.com", true},
		{"team-b", "www.shop.example.com", false},
		{"team-b", "www.a.example.com", false},
		{"team-c", "x.shared.example.com", true},
		{"team-c", "shared.example.com", false},
		{"team-c", "shop.example.com", false},
	}
	for _, tc := range cases {
		if got := d.Allows(tc.namespace, tc.hostname); got != tc.want {
			t.Errorf("Allows(%s, %s) = %v, want %v", tc.namespace, tc.hostname, got, tc.want)
		}
	}
	var none *Domains
	if !none.Allows("any", "any.example.com") {
		t.Error("no --dns-domains must allow every name")
	}
}

func TestParseDomainsErrors(t *testing.T) {
	for _, bad := range []string{"team-a", "=a.example.com", "team-a=", "Team_A=a.example.com", "team-a=a.*.example.com",
		"team-a=com", "team-a=**.example.com", "team-a=exa mple.com"} {
		if _, err := ParseDomains([]string{bad}); err == nil {
			t.Errorf("ParseDomains(%q) took it", bad)
		}
	}
	if d, err := ParseDomains(nil); d != nil || err != nil {
		t.Errorf("ParseDomains(nil) = %v, %v; want nil, nil", d, err)
	}
}

// FuzzDomains checks the matcher's invariants: a name matches a wildcard only if it
// ends in the pattern's domain after a dot, and an exact pattern only itself.
func FuzzDomains(f *testing.F) {
	f.Add("*.a.example.com", "www.a.example.com")
	f.Add("shop.example.com", "shop.example.com")
	f.Add("*.a.example.com", "xa.example.com")
	f.Fuzz(func(t *testing.T, pattern, hostname string) {
		d, err := ParseDomains([]string{"ns=" + pattern})
		if err != nil {
			return
		}
		p, h := normalizeName(pattern), normalizeName(hostname)
		got := d.Allows("ns", hostname)
		if d.Allows("other", hostname) {
			t.Fatalf("namespace other may publish %q under ns=%q", hostname, pattern)
		}
		if under, ok := strings.CutPrefix(p, "*."); ok {
			if got != (strings.HasSuffix(h, "."+under) && h != "."+under) {
				t.Fatalf("ns=%q allows %q: %v", pattern, hostname, got)
			}
			return
		}
		if got != (h == p) {
			t.Fatalf("ns=%q allows %q: %v", pattern, hostname, got)
		}
	})
}
