// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestFormatGatewayAddresses(t *testing.T) {
	cases := map[string]struct {
		in       GatewayAddresses
		max      int
		want     string
		complete bool
	}{
		"none": {in: nil, max: 100, want: "", complete: true},
		"sorted by key, addresses in status order": {
			in: GatewayAddresses{
				"b/gw":  {"10.0.0.2", "10.0.0.1"},
				"a/gw2": {"lb.example.com"},
			},
			max: 1000, want: "a/gw2=lb.example.com;b/gw=10.0.0.2,10.0.0.1", complete: true,
		},
		"canonical forms": {
			in:  GatewayAddresses{"ns/gw": {"FD00:0::1", "LB.Example.COM"}},
			max: 1000, want: "ns/gw=fd00::1,lb.example.com", complete: true,
		},
		"invalid addresses and gateways without addresses left out": {
			in: GatewayAddresses{
				"ns/gw":    {"10.0.0.1", "not an address", "a;b", "fe80::1%eth0"},
				"ns/empty": nil,
				"bad key":  {"10.0.0.3"},
			},
			max: 1000, want: "ns/gw=10.0.0.1", complete: true,
		},
		"what does not fit is left out": {
			in:  GatewayAddresses{"a/gw": {"10.0.0.1"}, "b/gw": {"10.0.0.2"}, "c/g": {"10.0.0.3"}},
			max: len("a/gw=10.0.0.1;c/g=10.0.0.3"), want: "a/gw=10.0.0.1;c/g=10.0.0.3", complete: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, complete := FormatGatewayAddresses(tc.in, tc.max)
			if got != tc.want || complete != tc.complete {
				t.Errorf("FormatGatewayAddresses = %q, %v; want %q, %v", got, complete, tc.want, tc.complete)
			}
		})
	}
}

func TestParseGatewayAddresses(t *testing.T) {
	cases := map[string]struct {
		in   string
		want GatewayAddresses
	}{
		"empty":  {in: "", want: GatewayAddresses{}},
		"two":    {in: "a/gw=10.0.0.1,fd00::1;b/gw=lb.example.com", want: GatewayAddresses{"a/gw": {"10.0.0.1", "fd00::1"}, "b/gw": {"lb.example.com"}}},
		"prose":  {in: "Addresses: 10.0.0.1, 10.0.0.2", want: GatewayAddresses{}},
		"no key": {in: "=10.0.0.1", want: GatewayAddresses{}},
		"bad address dropped, good kept": {
			in: "a/gw=10.0.0.1,evil address,10.0.0.2", want: GatewayAddresses{"a/gw": {"10.0.0.1", "10.0.0.2"}},
		},
		"a non-canonical IP is not read as another": {in: "a/gw=010.0.0.1", want: GatewayAddresses{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseGatewayAddresses(tc.in)
			if !maps.EqualFunc(got, tc.want, slices.Equal[[]string]) {
				t.Errorf("ParseGatewayAddresses(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzGatewayAddresses checks the contract's invariants on any message: parsing never
// yields an address that is not valid, and what is parsed formats back to a message
// that parses to the same addresses.
func FuzzGatewayAddresses(f *testing.F) {
	f.Add("a/gw=10.0.0.1,fd00::1;b/gw=lb.example.com")
	f.Add("ns/gw=")
	f.Add(";;=;a/=1.2.3.4")
	f.Add("x/y=1.2.3.4,1.2.3.4;x/y=5.6.7.8")
	f.Fuzz(func(t *testing.T, message string) {
		parsed := ParseGatewayAddresses(message)
		for key, addrs := range parsed {
			if !validGatewayKey(key) || len(addrs) == 0 {
				t.Fatalf("parsed key %q with %v from %q", key, addrs, message)
			}
			for _, a := range addrs {
				if !ValidGatewayAddress(a) || strings.ContainsAny(a, ";,=/") {
					t.Fatalf("parsed address %q from %q", a, message)
				}
			}
		}
		again, complete := FormatGatewayAddresses(parsed, 1<<20)
		if !complete {
			t.Fatalf("format of %v incomplete", parsed)
		}
		if reparsed := ParseGatewayAddresses(again); !maps.EqualFunc(reparsed, parsed, slices.Equal[[]string]) {
			t.Fatalf("round trip of %q: %v, then %q, then %v", message, parsed, again, reparsed)
		}
	})
}
