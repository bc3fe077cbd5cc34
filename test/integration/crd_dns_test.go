// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	typedtraffic "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/typed/traffic/v1alpha1"
)

// The validation rules of spec.dns, against the real kube-apiserver, with the field
// and the message a user sees.
func TestCRDValidationOfDNS(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-dns")
	client := policyClient(t).TrafficV1alpha1().TrafficMigrationPolicies(ns)
	withDNS := func(ttl string, hostnames ...string) func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		return func(p *trafficv1alpha1.TrafficMigrationPolicy) {
			p.Spec.DNS = &trafficv1alpha1.DNSPublishing{}
			for _, h := range hostnames {
				p.Spec.DNS.Hostnames = append(p.Spec.DNS.Hostnames, trafficv1alpha1.Hostname(h))
			}
			if ttl != "" {
				d, err := time.ParseDuration(ttl)
				if err != nil {
					t.Fatal(err)
				}
				p.Spec.DNS.TTL = &metav1.Duration{Duration: d}
			}
		}
	}
	const badName = "dns.hostnames must be fully qualified DNS names in lower case without the final dot"
	const badTTL = "dns.ttl must be between 1s and 24h"
	nine := make([]string, 9)
	for i := range nine {
		nine[i] = fmt.Sprintf("gw%d.example.com", i)
	}
	tests := map[string]dnsCase{
		"names, a wildcard and a TTL":   {mutate: withDNS("5m", "gw.example.com", "*.apps.example.com")},
		"the longest TTL":               {mutate: withDNS("24h", "gw.example.com")},
		"the shortest TTL":              {mutate: withDNS("1s", "gw.example.com")},
		"no hostname":                   {mutate: withDNS("", ""), wantErrors: []string{"spec.dns.hostnames[0]"}},
		"an empty list":                 {mutate: withDNS(""), wantErrors: []string{"spec.dns.hostnames"}},
		"upper case":                    {mutate: withDNS("", "GW.example.com"), wantErrors: []string{"spec.dns.hostnames[0]", badName}},
		"a single label":                {mutate: withDNS("", "gateway"), wantErrors: []string{badName}},
		"the final dot":                 {mutate: withDNS("", "gw.example.com."), wantErrors: []string{badName}},
		"a label of 64 characters":      {mutate: withDNS("", strings.Repeat("a", 64)+".example.com"), wantErrors: []string{badName}},
		"a wildcard inside":             {mutate: withDNS("", "gw.*.example.com"), wantErrors: []string{badName}},
		"the same name twice":           {mutate: withDNS("", "gw.example.com", "gw.example.com"), wantErrors: []string{"spec.dns.hostnames[1]", "Duplicate value"}},
		"more than 8 names":             {mutate: withDNS("", nine...), wantErrors: []string{"spec.dns.hostnames", "must have at most 8 items"}},
		"a TTL of zero":                 {mutate: withDNS("0s", "gw.example.com"), wantErrors: []string{"spec.dns.ttl", badTTL}},
		"a TTL above a day":             {mutate: withDNS("25h", "gw.example.com"), wantErrors: []string{"spec.dns.ttl", badTTL}},
		"a TTL in fractions of seconds": {mutate: withDNS("1500ms", "gw.example.com"), wantErrors: []string{"spec.dns.ttl", "dns.ttl must be a duration in whole seconds"}},
	}
	createEach(t, client, "dns", tests)

	t.Run("the TTL defaults to 60s", func(t *testing.T) {
		p := sharePolicy("dns-default")
		withDNS("", "gw.example.com")(p)
		created, err := client.Create(t.Context(), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := created.Spec.DNS.TTL; got == nil || got.Duration != time.Minute {
			t.Errorf("dns.ttl defaulted to %v, want 60s", got)
		}
	})
}

// The validation rules of spec.dns.verify, against the real kube-apiserver.
func TestCRDValidationOfDNSVerify(t *testing.T) {
	ns := bed.Hub.Namespace(t, "crd-dns-verify")
	client := policyClient(t).TrafficV1alpha1().TrafficMigrationPolicies(ns)
	withVerify := func(mode trafficv1alpha1.DNSVerificationMode, nameservers ...string) func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		return func(p *trafficv1alpha1.TrafficMigrationPolicy) {
			p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.example.com"},
				Verify: &trafficv1alpha1.DNSVerification{Mode: mode}}
			for _, n := range nameservers {
				p.Spec.DNS.Verify.Nameservers = append(p.Spec.DNS.Verify.Nameservers, trafficv1alpha1.Nameserver(n))
			}
		}
	}
	const badServer = "dns.verify.nameservers must be host or host:port"
	const badPort = "dns.verify.nameservers: the port must be between 1 and 65535"
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf("192.0.2.%d", i+1)
	}
	tests := map[string]dnsCase{
		"the zone's own servers": {mutate: withVerify("")},
		"ExternalDNS":            {mutate: withVerify(trafficv1alpha1.DNSVerifyExternalDNS)},
		"servers of every form": {mutate: withVerify(trafficv1alpha1.DNSVerifyAuthoritative,
			"ns1.example.com", "ns2.example.com:5353", "192.0.2.53", "192.0.2.54:53", "2001:db8::53", "[2001:db8::54]:5353")},
		"an unknown mode": {mutate: withVerify("Recursive"), wantErrors: []string{"spec.dns.verify.mode", "Unsupported value"}},
		"servers with ExternalDNS": {mutate: withVerify(trafficv1alpha1.DNSVerifyExternalDNS, "192.0.2.53"),
			wantErrors: []string{"dns.verify.nameservers goes with mode Authoritative"}},
		"more than 10 servers":  {mutate: withVerify("", eleven...), wantErrors: []string{"spec.dns.verify.nameservers", "must have at most 10 items"}},
		"a URL":                 {mutate: withVerify("", "udp://192.0.2.53"), wantErrors: []string{"spec.dns.verify.nameservers[0]", badServer}},
		"upper case":            {mutate: withVerify("", "NS1.example.com"), wantErrors: []string{badServer}},
		"a space":               {mutate: withVerify("", "ns1 example.com"), wantErrors: []string{badServer}},
		"port 0":                {mutate: withVerify("", "192.0.2.53:0"), wantErrors: []string{badPort}},
		"port 65536":            {mutate: withVerify("", "[2001:db8::53]:65536"), wantErrors: []string{badPort}},
		"the same server twice": {mutate: withVerify("", "192.0.2.53", "192.0.2.53"), wantErrors: []string{"Duplicate value"}},
	}
	createEach(t, client, "dns-verify", tests)

	t.Run("the mode defaults to Authoritative", func(t *testing.T) {
		p := sharePolicy("dns-verify-default")
		withVerify("", "192.0.2.53")(p)
		created, err := client.Create(t.Context(), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := created.Spec.DNS.Verify.Mode; got != trafficv1alpha1.DNSVerifyAuthoritative {
			t.Errorf("dns.verify.mode defaulted to %q, want Authoritative", got)
		}
	})
}

// dnsCase is a change to a valid trafficShare policy and the messages the API server
// refuses it with: none when it accepts it.
type dnsCase struct {
	mutate     func(p *trafficv1alpha1.TrafficMigrationPolicy)
	wantErrors []string
}

// createEach creates, in a subtest each, a trafficShare policy named <prefix>-<n>
// changed by a case, and checks that the API server accepts or refuses it as the case
// wants.
func createEach(t *testing.T, client typedtraffic.TrafficMigrationPolicyInterface, prefix string, tests map[string]dnsCase) {
	t.Helper()
	i := 0
	for name, tc := range tests {
		i++
		t.Run(name, func(t *testing.T) {
			p := sharePolicy(fmt.Sprintf("%s-%d", prefix, i))
			tc.mutate(p)
			_, err := client.Create(t.Context(), p, metav1.CreateOptions{})
			checkErrors(t, err, tc.wantErrors)
		})
	}
}
