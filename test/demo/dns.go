// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

const (
	// gatewayHostname is the name the clients resolve, in the policy's spec.dns.
	gatewayHostname = "gateway.demo.example"
	// dnsZone is the zone CoreDNS serves, and external-dns's domain filter.
	dnsZone = "demo.example."
	// dnsRecordTTL is the records' TTL, the policy's spec.dns.ttl. The clients, like
	// many real ones (stub resolvers, JVMs, apps with their own caches), keep an
	// answer for a TTL of their own.
	dnsRecordTTL = 5 * time.Second
	// dnsPollEvery is how often the view asks CoreDNS what it answers.
	dnsPollEvery = 200 * time.Millisecond
)

// dnsSpec is the policy's spec.dns: the manager keeps one DNSEndpoint of the policy's
// name with the addresses of the REAL Placement's Programmed Gateways, and starts a
// leaving cluster's drain clock once nameserver (the bed's CoreDNS, the zone's
// authoritative server) no longer answers its address.
func dnsSpec(nameserver string) *trafficv1alpha1.DNSPublishing {
	return &trafficv1alpha1.DNSPublishing{
		Hostnames: []trafficv1alpha1.Hostname{gatewayHostname},
		TTL:       &metav1.Duration{Duration: dnsRecordTTL},
		Verify:    &trafficv1alpha1.DNSVerification{Nameservers: []trafficv1alpha1.Nameserver{trafficv1alpha1.Nameserver(nameserver)}},
	}
}

// startDNS starts the test bed's real DNS for the demo's zone: CoreDNS serving it from
// etcd, written by external-dns's engine (planner, TXT registry, CoreDNS provider) from
// the DNSEndpoints of the hub's namespace, as external-dns with --source=crd
// --provider=coredns does. The hub must serve the DNSEndpoint CRD.
func startDNS(ctx context.Context, bed *testbed.Bed) (*testbed.DNS, error) {
	dns, err := bed.StartDNS(ctx, testbed.DNSOptions{Zones: []string{dnsZone}, Namespace: namespace, OwnerID: "traffic-migration-demo"})
	if err != nil {
		return nil, fmt.Errorf("start CoreDNS and external-dns's engine: %w", err)
	}
	return dns, nil
}

// describeAddrs names addresses with their clusters.
func describeAddrs(addrs []netip.Addr, clusterOf map[netip.Addr]string) string {
	if len(addrs) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(addrs))
	for _, a := range addrs {
		c := clusterOf[a]
		if c == "" {
			c = "not a spoke's"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", a, c))
	}
	return strings.Join(parts, ", ")
}
