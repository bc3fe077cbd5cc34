// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"slices"
	"strings"
	"time"
)

// A hostname is published by one policy only. external-dns merges the records of every
// DNSEndpoint that names a hostname, so two policies publishing one name would send
// one's clients to the other's clusters.
//
// The rule, a pure function of the policies and the DNSEndpoints as the manager reads
// them, so that every sync, every restart and every leader reaches the same answer:
//
//   - A policy may claim a hostname only if the hub admin lets its namespace publish
//     it (Domains). The DNSEndpoints of other namespaces count only where theirs may.
//   - The policy whose DNSEndpoint publishes the hostname keeps it. When several do (an
//     older release, a hand edit), the first policy in order keeps it and the others
//     withdraw it; a DNSEndpoint whose policy is gone is never withdrawn by the
//     manager (it is left as last written, like a proxy Placement), so the live ones
//     yield to it.
//   - When no DNSEndpoint publishes it, the first claimant in order takes it.
//
// Order: the policy created first, then by namespace and name. A hostname therefore
// moves to another policy only once its holder's DNSEndpoint no longer publishes it:
// never to two at once, and with no moment without a publisher while a holder keeps it.

// PolicyRef names a policy and when it was created, for the order.
type PolicyRef struct {
	Namespace, Name string
	Created         time.Time
}

// Key is "<namespace>/<name>".
func (r PolicyRef) Key() string { return r.Namespace + "/" + r.Name }

// before orders policies: the one created first, then by namespace and name.
func (r PolicyRef) before(o PolicyRef) bool {
	if !r.Created.Equal(o.Created) {
		return r.Created.Before(o.Created)
	}
	return r.Key() < o.Key()
}

// Publisher is a DNSEndpoint of the manager's that publishes a hostname.
type Publisher struct {
	// Endpoint is the DNSEndpoint's "<namespace>/<name>", which is its policy's key.
	Endpoint string
	// Policy is its policy, nil when that policy is gone.
	Policy *PolicyRef
}

// Holder is who publishes a hostname, as a policy's claim sees it.
type Holder struct {
	// Mine: the policy publishes it.
	Mine bool
	// By is the key of the policy (or of the DNSEndpoint of a gone policy) that holds
	// it instead, "" when Mine.
	By string
	// Orphan: By is a DNSEndpoint whose policy is gone.
	Orphan bool
}

// HoldsHostname decides who publishes a hostname that me claims: claimants are the
// live policies that claim it (me among them or not) and publishers the DNSEndpoints
// that publish it now, each only where its namespace may publish it.
func HoldsHostname(me PolicyRef, claimants []PolicyRef, publishers []Publisher) Holder {
	var mine bool
	var others []Publisher
	for _, p := range publishers {
		if p.Endpoint == me.Key() {
			mine = true
		} else {
			others = append(others, p)
		}
	}
	// A gone policy's DNSEndpoint keeps the name; the first of several keeps it.
	slices.SortFunc(others, func(a, b Publisher) int {
		switch {
		case (a.Policy == nil) != (b.Policy == nil):
			if a.Policy == nil {
				return -1
			}
			return 1
		case a.Policy != nil && !a.Policy.Created.Equal(b.Policy.Created):
			return a.Policy.Created.Compare(b.Policy.Created)
		}
		return strings.Compare(a.Endpoint, b.Endpoint)
	})
	switch {
	case len(others) == 0 && mine:
		return Holder{Mine: true}
	case len(others) > 0:
		first := others[0]
		if mine && first.Policy != nil && me.before(*first.Policy) {
			return Holder{Mine: true}
		}
		return Holder{By: first.Endpoint, Orphan: first.Policy == nil}
	}
	first := me
	for _, c := range claimants {
		if c.before(first) {
			first = c
		}
	}
	if first.Key() == me.Key() {
		return Holder{Mine: true}
	}
	return Holder{By: first.Key()}
}
