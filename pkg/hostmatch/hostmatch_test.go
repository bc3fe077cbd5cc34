// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hostmatch

import (
	"net/netip"
	"strings"
	"testing"
)

func mustList(t *testing.T, entries ...string) *List {
	t.Helper()
	var l List
	for _, e := range entries {
		if ok, err := l.Add(e); !ok || err != nil {
			t.Fatalf("entry %q: taken %t, %v", e, ok, err)
		}
	}
	return &l
}

func TestAdd(t *testing.T) {
	tests := []struct {
		entry string
		taken bool
		err   string // a part of the error; "": none
	}{
		{"ns1.example.com", true, ""},
		{"NS1.Example.COM.", true, ""},
		{"thanos-querier.openshift-monitoring.svc", true, ""},
		{"_dns._udp.example.com", true, ""},
		{"localhost", true, ""},
		{"10-0-0-1.default.pod.cluster.local", true, ""},
		{"0.example.com1", true, ""},
		{"*.example.com", true, ""},
		{"*.Example.COM.", true, ""},
		{"10.0.0.0/8", true, ""},
		{"10.1.2.3/8", true, ""},
		{"fd00::/8", true, ""},
		{"::ffff:10.0.0.0/104", true, ""},
		{"::ffff:0.0.0.0/96", true, ""},
		{"192.0.2.53", true, ""},
		{"2001:db8::53", true, ""},
		{"::ffff:192.0.2.53", true, ""},
		{strings.Repeat("a", 63) + ".example", true, ""},

		// Neither: for the caller.
		{"10.0.0.0/33", false, ""},
		{"10.0.0.0/", false, ""},
		{"ns1.example.com:53", false, ""},
		{"192.0.2.53:53", false, ""},
		{"[2001:db8::53]", false, ""},
		{"[2001:db8::53]:53", false, ""},
		{"udp://192.0.2.53", false, ""},
		{"https://prom.example/", false, ""},
		{"prom.example/path", false, ""},

		// One of these, malformed.
		{"fe80::1%eth0", true, "an IP address with a zone is not supported"},
		{"fe80::1%eth0/64", true, "a CIDR with a zone is not supported"},
		{"::ffff:10.0.0.0/80", true, "an IPv4-mapped CIDR must be /96 or longer"},
		{"", true, "not a host name"},
		{"*", true, "not a host name"},
		{"*.", true, "not a host name"},
		{"*.*.example.com", true, "not a host name"},
		{"a.*.example.com", true, "not a host name"},
		{"a..b", true, "not a host name"},
		{".example.com", true, "not a host name"},
		{"example.com..", true, "not a host name"},
		{"ns1 example.com", true, "not a host name"},
		{"ns1\texample.com", true, "not a host name"},
		{"ns1!.example.com", true, "not a host name"},
		{`ns1\.example.com`, true, "not a host name"},
		{"ñ.example", true, "not a host name"},
		{"[abc]", true, "not a host name"},
		{strings.Repeat("a", 64) + ".example", true, "not a host name"},
		{"10.0.0.256", true, "neither an IP address nor a host name"},
		{"10.0.0.1.", true, "neither an IP address nor a host name"},
		{"*.0.1", true, "neither an IP address nor a host name"},
		{"*.10.0.0.1", true, "neither an IP address nor a host name"},
		{"example.123", true, "neither an IP address nor a host name"},
		{strings.Repeat("abcdefgh.", 29) + "com", true, "longer than 253"},
	}
	for _, tc := range tests {
		var l List
		taken, err := l.Add(tc.entry)
		if taken != tc.taken {
			t.Errorf("%q: taken %t, want %t", tc.entry, taken, tc.taken)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v, want no error", tc.entry, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one with %q", tc.entry, err, tc.err)
		}
		if (!taken || err != nil) && (l.HasCIDRs() || l.MatchName(tc.entry) || len(l.hosts)+len(l.suffixes) > 0) {
			t.Errorf("%q: refused but added", tc.entry)
		}
	}
}

func TestMatchName(t *testing.T) {
	tests := []struct {
		entries []string
		name    string
		want    bool
	}{
		{[]string{"ns1.example.com"}, "ns1.example.com", true},
		{[]string{"ns1.example.com"}, "NS1.Example.COM", true},
		{[]string{"ns1.example.com"}, "ns1.example.com.", true},
		{[]string{"NS1.Example.COM."}, "ns1.example.com", true},
		{[]string{"ns1.example.com"}, "ns2.example.com", false},
		{[]string{"ns1.example.com"}, "a.ns1.example.com", false},
		{[]string{"ns1.example.com"}, "ns1.example.com.evil", false},
		{[]string{"ns1.example.com"}, "ns1.example.com..", false},
		{[]string{"ns1.example.com"}, "", false},

		{[]string{"*.example.com"}, "a.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", true},
		{[]string{"*.example.com"}, "A.Example.COM.", true},
		{[]string{"*.Example.COM."}, "a.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*.example.com"}, "example.com.", false},
		{[]string{"*.example.com"}, ".example.com", false},
		{[]string{"*.example.com"}, "evilexample.com", false},
		{[]string{"*.example.com"}, "a.example.com.evil", false},

		{[]string{"10.0.0.0/8", "192.0.2.53"}, "10.0.0.1", false},
		{[]string{"ns1.example.com", "*.awsdns-01.org"}, "ns-7.awsdns-01.org", true},
		{nil, "ns1.example.com", false},
	}
	for _, tc := range tests {
		if got := mustList(t, tc.entries...).MatchName(tc.name); got != tc.want {
			t.Errorf("%q matching %q: %t, want %t", tc.entries, tc.name, got, tc.want)
		}
	}
	var none *List
	if none.MatchName("ns1.example.com") {
		t.Errorf("a nil List matches a name")
	}
}

func TestMatchAddr(t *testing.T) {
	tests := []struct {
		entries []string
		addr    string
		want    bool
	}{
		{[]string{"10.0.0.0/8"}, "10.1.2.3", true},
		{[]string{"10.0.0.0/8"}, "10.255.255.255", true},
		{[]string{"10.0.0.0/8"}, "11.0.0.1", false},
		{[]string{"10.0.0.0/8"}, "::ffff:10.1.2.3", true},
		{[]string{"10.0.0.0/8"}, "::ffff:11.0.0.1", false},
		{[]string{"10.1.2.3/8"}, "10.9.9.9", true},
		{[]string{"fd00::/8"}, "fd12:3456::1", true},
		{[]string{"fd00::/8"}, "fe80::1", false},
		{[]string{"fd00::/8"}, "10.0.0.1", false},
		{[]string{"fe80::/10"}, "fe80::1%eth0", true},

		// IPv4-mapped CIDRs read as IPv4 ones.
		{[]string{"::ffff:10.0.0.0/104"}, "10.9.9.9", true},
		{[]string{"::ffff:10.0.0.0/104"}, "::ffff:10.9.9.9", true},
		{[]string{"::ffff:10.0.0.0/104"}, "11.0.0.1", false},
		{[]string{"::ffff:0.0.0.0/96"}, "192.0.2.1", true},
		{[]string{"::ffff:0.0.0.0/96"}, "2001:db8::1", false},
		{[]string{"::/0"}, "2001:db8::1", true},

		{[]string{"192.0.2.53"}, "192.0.2.53", true},
		{[]string{"192.0.2.53"}, "::ffff:192.0.2.53", true},
		{[]string{"192.0.2.53"}, "192.0.2.54", false},
		{[]string{"::ffff:192.0.2.53"}, "192.0.2.53", true},
		{[]string{"2001:db8::53"}, "2001:db8::53", true},
		{[]string{"2001:db8::53"}, "2001:db8::54", false},
		{[]string{"::1"}, "::1", true},
		{[]string{"::1"}, "127.0.0.1", false},

		{[]string{"ns1.example.com", "*.example.com"}, "10.0.0.1", false},
		{nil, "10.0.0.1", false},
	}
	for _, tc := range tests {
		if got := mustList(t, tc.entries...).MatchAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("%q holding %s: %t, want %t", tc.entries, tc.addr, got, tc.want)
		}
	}
	var none *List
	if none.MatchAddr(netip.MustParseAddr("10.0.0.1")) {
		t.Errorf("a nil List matches an address")
	}
}

func TestHasCIDRs(t *testing.T) {
	tests := []struct {
		entries []string
		want    bool
	}{
		{nil, false},
		{[]string{"ns1.example.com", "*.example.com"}, false},
		{[]string{"ns1.example.com", "10.0.0.0/8"}, true},
		{[]string{"192.0.2.53"}, true},
	}
	for _, tc := range tests {
		if got := mustList(t, tc.entries...).HasCIDRs(); got != tc.want {
			t.Errorf("%q: HasCIDRs %t, want %t", tc.entries, got, tc.want)
		}
	}
	var none *List
	if none.HasCIDRs() {
		t.Errorf("a nil List has CIDRs")
	}
}
