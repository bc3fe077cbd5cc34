// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ConditionGatewayAddresses is the agent's condition that lists the addresses of its
// cluster's Gateways in a machine-readable form, which the hub reads to publish DNS
// (spec.dns). It is True with reason AgentReasonReported, or AgentReasonTruncated when
// not every Gateway fit in a condition's message. Its message is FormatGatewayAddresses'
// form:
//
//	<namespace>/<name>=<address>,<address>;<namespace>/<name>=<address>
//
// one entry per Gateway that has addresses and at least one attached route (a Gateway
// is Programmed before its routes are, and DNS must not send clients to a Gateway that
// answers "no route"), sorted by namespace/name, each with the
// Gateway's IPAddress and Hostname addresses in the order of its status. Namespaces,
// names, IP addresses and host names hold none of '/', '=', ',' and ';', so the form
// needs no quoting.
const ConditionGatewayAddresses = GroupName + "/GatewayAddresses"

// AgentReasonTruncated: the GatewayAddresses message holds the first Gateways by
// namespace/name only, as the others did not fit; the hub knows no address of those.
const AgentReasonTruncated = "Truncated"

// MaxGatewayAddressesMessage is the longest GatewayAddresses message the agent writes,
// within the 32768 bytes a condition's message may hold.
const MaxGatewayAddressesMessage = 32000

// GatewayAddresses are the addresses of a cluster's Gateways, by "<namespace>/<name>".
type GatewayAddresses map[string][]string

// GatewayKey is the key of a Gateway in GatewayAddresses.
func GatewayKey(namespace, name string) string { return namespace + "/" + name }

// FormatGatewayAddresses writes addresses as the GatewayAddresses condition's message,
// with as many Gateways, by namespace/name, as fit in max bytes; complete is false when
// some did not fit. IP addresses are written in their canonical form and host names in
// lower case; Gateways without addresses and addresses that are neither an IP address
// nor a host name are left out.
func FormatGatewayAddresses(addresses GatewayAddresses, max int) (message string, complete bool) {
	keys := make([]string, 0, len(addresses))
	for k := range addresses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	complete = true
	for _, k := range keys {
		if !validGatewayKey(k) {
			continue
		}
		var values []string
		for _, a := range addresses[k] {
			if a = canonicalAddress(a); ValidGatewayAddress(a) {
				values = append(values, a)
			}
		}
		if len(values) == 0 {
			continue
		}
		entry := k + "=" + strings.Join(values, ",")
		sep := 0
		if b.Len() > 0 {
			sep = 1
		}
		if b.Len()+sep+len(entry) > max {
			complete = false
			continue
		}
		if sep == 1 {
			b.WriteByte(';')
		}
		b.WriteString(entry)
	}
	return b.String(), complete
}

// ParseGatewayAddresses reads the GatewayAddresses condition's message. It is strict
// about what it keeps and lenient about the rest: an entry without "=", with a key
// that is not "<namespace>/<name>", or an address that is neither an IP address nor a
// host name is left out, so a malformed message can only make the hub know fewer
// addresses, never other ones.
func ParseGatewayAddresses(message string) GatewayAddresses {
	out := GatewayAddresses{}
	if message == "" {
		return out
	}
	for _, entry := range strings.Split(message, ";") {
		key, list, ok := strings.Cut(entry, "=")
		if !ok || !validGatewayKey(key) {
			continue
		}
		var values []string
		for _, a := range strings.Split(list, ",") {
			if ValidGatewayAddress(a) {
				values = append(values, a)
			}
		}
		if len(values) > 0 {
			out[key] = values
		}
	}
	return out
}

// canonicalAddress writes an IP address in its canonical form (lower case, shortest
// IPv6, IPv4 without leading zeros) and a host name in lower case.
func canonicalAddress(a string) string {
	if ip, err := netip.ParseAddr(a); err == nil {
		return ip.String()
	}
	return strings.ToLower(a)
}

// ValidGatewayAddress tells whether a is an IP address (without zone) or a host name
// (a DNS subdomain), the address types that GatewayAddresses carries.
func ValidGatewayAddress(a string) bool {
	if ip, err := netip.ParseAddr(a); err == nil {
		return ip.Zone() == "" && ip.String() == a
	}
	// A host name's last label is never all digits (RFC 3696): what looks like a
	// malformed IP address is neither.
	last := a[strings.LastIndexByte(a, '.')+1:]
	return !strings.ContainsAny(a, ":;,=/") && len(validation.IsDNS1123Subdomain(a)) == 0 &&
		strings.Trim(last, "0123456789") != ""
}

func validGatewayKey(k string) bool {
	ns, name, ok := strings.Cut(k, "/")
	return ok && len(validation.IsDNS1123Label(ns)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0
}
