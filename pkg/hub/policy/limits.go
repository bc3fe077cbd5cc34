// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// Limits are the hub admin's bounds on every policy, from the manager's flags: where
// checks may connect, how much of an answer they read, and how long any drain lasts.
// The zero value bounds nothing but what promcheck's defaults bound.
type Limits struct {
	// Allowlist is where checks may connect; nil allows any URL.
	Allowlist *promcheck.Allowlist
	// MaxAnswerBytes and MaxSeries bound one answer of a Prometheus; zero is promcheck's
	// default.
	MaxAnswerBytes int64
	MaxSeries      int
	// Ceiling bounds every drain; nil is none.
	Ceiling *decision.Ceiling
	// DNSDomains say which namespaces may publish which names; nil allows all.
	DNSDomains *dns.Domains
	// DNSAddresses say which reported addresses may be published.
	DNSAddresses dns.AddressRules
	// DNSVerifier asks the zones' authoritative name servers whether they still
	// answer a leaving cluster's addresses (spec.dns.verify, mode Authoritative); nil
	// is dns.NameServers with the system's resolver (/etc/resolv.conf) and
	// DNSNameservers.
	DNSVerifier dns.Verifier
	// DNSNameservers are the name servers DNSVerifier's default may ask; nil: public
	// addresses on port 53.
	DNSNameservers *dns.NameserverAllowlist
	// StatusWrites bound the status writes that carry only check results; the zero
	// value writes every check.
	StatusWrites StatusWrites
	// QuerySpread spreads the policies' queries over this much of the second their
	// checks are evaluated at (queryOffset); zero sends each round's queries at once.
	QuerySpread time.Duration
}

// policyOf is what the decision needs of a spec, under the hub's ceiling.
func (l Limits) policyOf(spec *trafficv1alpha1.TrafficMigrationPolicySpec) decision.Policy {
	p := decision.PolicyFromSpec(spec)
	p.Ceiling = l.Ceiling
	return p
}

// ceilingNote says, for a condition's message, that the hub's ceiling can end the
// policy's drains; "" when it cannot (none, or the policy's own deadline comes first).
func (l Limits) ceilingNote(spec *trafficv1alpha1.TrafficMigrationPolicySpec) string {
	if !l.policyOf(spec).CeilingBinds() {
		return ""
	}
	return fmt.Sprintf("; the hub admin bounds every drain at %s, then %s", l.Ceiling.MaxDrainDuration, l.Ceiling.Action)
}
