// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// allowLoopback lets the tests' verifiers ask the servers they run on the loopback.
var allowLoopback = mustAllow("127.0.0.0/8")

func mustAllow(entries ...string) *NameserverAllowlist {
	a, err := ParseNameserverAllowlist(entries)
	if err != nil {
		panic(err)
	}
	return a
}

func TestParseNameserverAllowlist(t *testing.T) {
	for _, good := range [][]string{nil, {"public"}, {"ns1.example.com"}, {"*.awsdns-01.org"}, {"10.0.0.0/8", "fd00::/8"},
		{"192.0.2.53"}, {"2001:db8::53"}, {"public", " NS1.Example.COM. "}, {"::ffff:10.0.0.0/104"}} {
		if _, err := ParseNameserverAllowlist(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range [][]string{{""}, {"ns1.example.com:53"}, {"192.0.2.53:53"}, {"udp://192.0.2.53"}, {"fe80::1%eth0"},
		{"*.*.example.com"}, {"a..b"}, {"*"}, {"ns1 example.com"}, {"[2001:db8::53]"}, {"10.0.0.256"}, {"*.0.1"},
		{"fe80::1%eth0/64"}, {"::ffff:10.0.0.0/80"}} {
		a, err := ParseNameserverAllowlist(bad)
		if err == nil {
			t.Errorf("%q: parsed as %s, want an error", bad, a)
			continue
		}
		if !strings.Contains(err.Error(), "entry") {
			t.Errorf("%q: the error %q does not name the entry", bad, err)
		}
	}
}

// The default allows public addresses on port 53 and nothing else; entries allow what
// they name on any port, and public only when listed.
func TestNameserverAllowlistAllows(t *testing.T) {
	type server struct {
		addr, port string
		want       bool
	}
	tests := map[string]struct {
		allow   *NameserverAllowlist
		servers []server
	}{
		"the default": {allow: nil, servers: []server{
			{"192.0.2.53", "53", true}, {"2001:db8::53", "53", true}, {"::ffff:192.0.2.53", "53", true},
			{"192.0.2.53", "5353", false},
			{"127.0.0.1", "53", false}, {"::1", "53", false}, {"10.0.0.53", "53", false}, {"172.16.0.53", "53", false},
			{"192.168.1.53", "53", false}, {"100.64.0.53", "53", false}, {"fd00::53", "53", false},
			{"169.254.169.254", "53", false}, {"169.254.1.1", "53", false}, {"fe80::1", "53", false}, {"0.0.0.0", "53", false},
			{"224.0.0.251", "53", false}, {"255.255.255.255", "53", false}, {"100.100.100.200", "53", false},
		}},
		"public listed": {allow: mustAllow("public"), servers: []server{{"192.0.2.53", "53", true}, {"10.0.0.53", "53", false}}},
		"a CIDR only": {allow: mustAllow("10.0.0.0/8"), servers: []server{
			{"10.1.2.3", "53", true}, {"10.1.2.3", "5353", true}, {"::ffff:10.1.2.3", "53", true},
			{"192.0.2.53", "53", false}, {"11.0.0.1", "53", false},
		}},
		"public and one address": {allow: mustAllow("public", "127.0.0.1"), servers: []server{
			{"192.0.2.53", "53", true}, {"127.0.0.1", "15353", true}, {"127.0.0.2", "53", false},
		}},
		"a mapped CIDR":                 {allow: mustAllow("::ffff:10.0.0.0/104"), servers: []server{{"10.9.9.9", "53", true}, {"11.0.0.1", "53", false}}},
		"a host name allows no address": {allow: mustAllow("ns1.example.com"), servers: []server{{"192.0.2.53", "53", false}}},
	}
	for name, tc := range tests {
		for _, s := range tc.servers {
			if got := tc.allow.AllowsAddr(netip.MustParseAddr(s.addr), s.port); got != s.want {
				t.Errorf("%s: %s port %s: allowed %v, want %v", name, s.addr, s.port, got, s.want)
			}
		}
	}
	names := mustAllow("NS1.example.com", "*.awsdns-01.org")
	for name, want := range map[string]bool{"ns1.example.com": true, "ns1.example.com.": true, "NS1.EXAMPLE.COM": true,
		"ns2.example.com": false, "ns-7.awsdns-01.org": true, "a.b.awsdns-01.org.": true, "awsdns-01.org": false, "xawsdns-01.org": false} {
		if got := names.AllowsName(name); got != want {
			t.Errorf("name %s: allowed %v, want %v", name, got, want)
		}
	}
	var none *NameserverAllowlist
	if none.AllowsName("ns1.example.com") || none.String() != "public" {
		t.Errorf("the default allows a name, or says %q, not public", none.String())
	}
}

// A name server the allowlist refuses is never asked, whether a policy names it by
// address or by name, or the manager finds it as a zone's NS server: the cluster stays
// published, and the note says the hub admin's allowlist refused it, without the
// address a name resolved to.
func TestObserveRefusesNameservers(t *testing.T) {
	ns := mustStart(t, "gw.example.test. 60 IN A "+newA)
	_, port, _ := net.SplitHostPort(ns.addr)
	resolver := mustStart(t,
		"example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. 1 60 60 60 60",
		"example.test. 60 IN NS ns1.example.test.",
		"ns1.example.test. 60 IN A 127.0.0.1",
		"ns.example.test. 60 IN A 127.0.0.1",
	)
	observe := func(allow *NameserverAllowlist, nameservers ...string) (bool, string) {
		v := &NameServers{Allow: allow, Resolvers: []string{resolver.addr}, Timeout: 300 * time.Millisecond, nsPort: port}
		confirmed, waiting := Confirm(v.Observe(context.Background(), []string{"gw.example.test"}, nameservers), published, leaving)
		return confirmed.Has("cluster1"), waiting["cluster1"]
	}
	tests := map[string]struct {
		allow       *NameserverAllowlist
		nameservers []string
		want        string // "": confirmed
	}{
		"by address, the default": {nameservers: []string{ns.addr},
			want: "name server " + ns.addr + " is not in the hub admin's name server allowlist (--dns-nameserver-allowlist: public)"},
		"by address, another CIDR": {allow: mustAllow("10.0.0.0/8"), nameservers: []string{ns.addr},
			want: "name server " + ns.addr + " is not in the hub admin's name server allowlist (--dns-nameserver-allowlist: 10.0.0.0/8)"},
		"by name, the default": {nameservers: []string{"ns.example.test:" + port},
			want: "name server ns.example.test:" + port + " resolves to an address that is not in the hub admin's name server allowlist"},
		"the zone's NS, the default": {
			want: "name server ns1.example.test of example.test resolves to an address that is not in the hub admin's name server allowlist"},
		"by address, allowed":                  {allow: mustAllow("127.0.0.1"), nameservers: []string{ns.addr}},
		"by name, allowed by name":             {allow: mustAllow("ns.example.test"), nameservers: []string{"ns.example.test:" + port}},
		"by name, allowed by a CIDR":           {allow: mustAllow("127.0.0.0/8"), nameservers: []string{"ns.example.test:" + port}},
		"the zone's NS, allowed by a wildcard": {allow: mustAllow("*.example.test")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := ns.asked("udp")
			confirmed, note := observe(tc.allow, tc.nameservers...)
			asked := ns.asked("udp") - before
			if tc.want == "" {
				if !confirmed || asked == 0 {
					t.Errorf("allowed: confirmed %v after %d queries, note %q; want confirmed", confirmed, asked, note)
				}
				return
			}
			if confirmed || asked != 0 {
				t.Errorf("refused: confirmed %v after %d queries; want it published and the server not asked", confirmed, asked)
			}
			if !strings.Contains(note, tc.want) || !strings.Contains(note, "ask the hub admin") {
				t.Errorf("note %q; want it to say %q and what to do", note, tc.want)
			}
			if len(tc.nameservers) == 0 || !strings.HasPrefix(tc.nameservers[0], "127.") {
				if strings.Contains(note, "127.0.0.1") {
					t.Errorf("note %q names the address a name resolved to", note)
				}
			}
		})
	}
	if got := sets.New(ns.recursion().UnsortedList()...); got.Has(true) {
		t.Errorf("the name server was asked with recursion")
	}
}
