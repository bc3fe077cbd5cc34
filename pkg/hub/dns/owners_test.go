// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"testing"
	"time"
)

func TestHoldsHostname(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	a := PolicyRef{Namespace: "team-a", Name: "gw", Created: t0}
	b := PolicyRef{Namespace: "team-b", Name: "gw", Created: t0.Add(time.Minute)}
	aTwin := PolicyRef{Namespace: "team-a", Name: "gx", Created: t0} // same time: by name
	pub := func(r PolicyRef) Publisher { return Publisher{Endpoint: r.Key(), Policy: &r} }
	orphan := Publisher{Endpoint: "team-c/old"}
	cases := map[string]struct {
		me         PolicyRef
		claimants  []PolicyRef
		publishers []Publisher
		want       Holder
	}{
		"alone, nothing published: it takes it":         {me: a, claimants: []PolicyRef{a}, want: Holder{Mine: true}},
		"the first claimant takes it":                   {me: b, claimants: []PolicyRef{a, b}, want: Holder{By: a.Key()}},
		"the first claimant, as the first sees it":      {me: a, claimants: []PolicyRef{b, a}, want: Holder{Mine: true}},
		"created at once: by namespace and name":        {me: aTwin, claimants: []PolicyRef{a, aTwin}, want: Holder{By: a.Key()}},
		"who publishes keeps it, though created later":  {me: b, claimants: []PolicyRef{a, b}, publishers: []Publisher{pub(b)}, want: Holder{Mine: true}},
		"an earlier claimant waits for the publisher":   {me: a, claimants: []PolicyRef{a, b}, publishers: []Publisher{pub(b)}, want: Holder{By: b.Key()}},
		"two publish: the first keeps it":               {me: a, claimants: []PolicyRef{a, b}, publishers: []Publisher{pub(a), pub(b)}, want: Holder{Mine: true}},
		"two publish: the later withdraws":              {me: b, claimants: []PolicyRef{a, b}, publishers: []Publisher{pub(a), pub(b)}, want: Holder{By: a.Key()}},
		"a deleted policy's DNSEndpoint keeps it":       {me: a, claimants: []PolicyRef{a}, publishers: []Publisher{orphan}, want: Holder{By: orphan.Endpoint, Orphan: true}},
		"a publisher yields to a deleted one's as well": {me: a, claimants: []PolicyRef{a}, publishers: []Publisher{pub(a), orphan}, want: Holder{By: orphan.Endpoint, Orphan: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HoldsHostname(tc.me, tc.claimants, tc.publishers); got != tc.want {
				t.Errorf("HoldsHostname = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestHoldsHostnameOneHolder checks that, for every set of claimants and publishers,
// at most one live policy holds a name, and one holds it whenever a claimant exists
// and nothing else publishes it.
func TestHoldsHostnameOneHolder(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	refs := []PolicyRef{
		{Namespace: "a", Name: "p", Created: t0.Add(2 * time.Minute)},
		{Namespace: "b", Name: "p", Created: t0},
		{Namespace: "c", Name: "p", Created: t0},
		{Namespace: "d", Name: "p", Created: t0.Add(time.Minute)},
	}
	for mask := range 1 << (2 * len(refs)) {
		var claimants []PolicyRef
		var publishers []Publisher
		for i, r := range refs {
			if mask&(1<<i) != 0 {
				claimants = append(claimants, r)
			}
			if mask&(1<<(len(refs)+i)) != 0 {
				publishers = append(publishers, Publisher{Endpoint: r.Key(), Policy: &r})
			}
		}
		holders := 0
		for _, me := range claimants {
			if HoldsHostname(me, claimants, publishers).Mine {
				holders++
			}
		}
		if holders > 1 || (len(claimants) > 0 && holders == 0 && len(publishers) == 0) {
			t.Fatalf("claimants %v, publishers %v: %d holders", claimants, publishers, holders)
		}
	}
}
