// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// dns makes the decision follow DNS, with the given clusters withdrawn from it.
func (b *builder) dns(ttl time.Duration, withdrawn ...string) *builder {
	b.in.Policy.DNSTTL = ttl
	b.in.DNS = &DNS{Withdrawn: sets.New(withdrawn...)}
	return b
}

// waiting says why the cluster is still taken to be in DNS (DNS.Waiting).
func (b *builder) waiting(cluster, note string) *builder {
	if b.in.DNS.Waiting == nil {
		b.in.DNS.Waiting = map[string]string{}
	}
	b.in.DNS.Waiting[cluster] = note
	return b
}

// left sets when the cluster's addresses left DNS.
func (r row) left(t *metav1.Time) row {
	r.DNSWithdrawalTime = t
	return r
}

// dnsCases are the rules of a drain that follows DNS (spec.dns): the drain clock
// starts when DNS lets go of the cluster, and lasts at least the records' TTL.
var dnsCases = map[string]struct {
	in  *builder
	due []string
	out Output
}{
	"a cluster still in DNS stays, whatever its checks and its time say": {
		in: c2Leaves().dns(time.Minute).
			rows(active("c1"), draining("c2").started(ago(time.Hour)).checked(ago(30*time.Second), 2, pass)).
			eval("c2", pass, ""),
		due: []string{"c2"},
		out: c2Kept(30*time.Second,
			draining("c2").started(ago(time.Hour)).checked(ago(0), 3, pass).recorded().next(after(30*time.Second)).
				msg("still published in DNS; minimum drain duration not reached")),
	},
	"a cluster the name servers still answer says which, and what": {
		in: c2Leaves().dns(time.Minute).
			waiting("c2", "name server 192.0.2.53:53 answers 192.0.2.12 for gw.example.com A; and a semicolon").
			rows(active("c1"), draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 3, pass)),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 3, pass).next(after(20*time.Second)).
				msg("still published in DNS: name server 192.0.2.53:53 answers 192.0.2.12 for gw.example.com A, and a semicolon; minimum drain duration not reached")),
	},
	"the drain clock starts when DNS lets go": {
		in: c2Leaves().dns(time.Minute, "c2").
			rows(active("c1"), draining("c2").started(ago(time.Hour)).checked(ago(10*time.Second), 3, pass)),
		out: Output{
			Proxy: []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"),
				draining("c2").started(ago(time.Hour)).left(ago(0)).checked(ago(10*time.Second), 3, pass).
					next(after(20*time.Second)).msg("minimum drain duration not reached")),
			DNSWithdrawn: []string{"c2"},
			RequeueAt:    now.Add(20 * time.Second),
		},
	},
	"the minimum drain is never shorter than the TTL": {
		in: c2Leaves().dns(5*time.Minute, "c2").
			rows(active("c1"), draining("c2").started(ago(time.Hour)).left(ago(3*time.Minute)).
				checked(ago(10*time.Second), 3, pass)),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(time.Hour)).left(ago(3*time.Minute)).checked(ago(10*time.Second), 3, pass).
				next(after(20*time.Second)).msg("minimum drain duration not reached")),
	},
	"past the TTL and the checks passed, the cluster goes": {
		in: c2Leaves().dns(5*time.Minute).
			rows(active("c1"), draining("c2").started(ago(time.Hour)).left(ago(5*time.Minute)).
				checked(ago(10*time.Second), 3, pass)),
		out: c2Removed(RemovalGatePassed,
			removed("c2").started(ago(time.Hour)).left(ago(5*time.Minute)).checked(ago(10*time.Second), 3, pass).
				removedAt(ago(0)).msg("removed: the removal gate passed")),
	},
	"without DNS followed, a withdrawal time left in a row counts for nothing": {
		in: c2Leaves().rows(active("c1"), draining("c2").started(ago(time.Minute)).left(ago(time.Hour)).
			checked(ago(10*time.Second), 3, pass)),
		out: c2Kept(20*time.Second,
			draining("c2").started(ago(time.Minute)).checked(ago(10*time.Second), 3, pass).
				next(after(20*time.Second)).msg("minimum drain duration not reached")),
	},
	"a cluster back in the real decisions loses its DNS clock": {
		in: input().real("c1", "c2").proxy("c1", "c2").ready("c1").dns(time.Minute, "c2").
			rows(active("c1"), draining("c2").started(ago(time.Hour)).left(ago(time.Minute))),
		out: Output{
			Proxy:    []Group{grp(0, "", "c1", "c2")},
			Clusters: rows(active("c1"), active("c2")),
		},
	},
}

func TestDecideFollowsDNS(t *testing.T) {
	for name, tc := range dnsCases {
		t.Run(name, func(t *testing.T) {
			in := tc.in.build()
			checkEqual(t, "Due", Due(in), tc.due)
			out := Decide(in)
			checkEqual(t, "Decide", out, tc.out)
			// A second sync with the same inputs decides the same, and starts no clock
			// again.
			second := Decide(nextInput(t, in, out))
			checkEqual(t, "rows of the second decision", asJSON(second.Clusters), asJSON(out.Clusters))
			checkEqual(t, "clocks started by the second decision", second.DNSWithdrawn, []string(nil))
		})
	}
}

// DNSWaitingNote reads back, from a row's message, the note Decide wrote into it.
func TestDNSWaitingNote(t *testing.T) {
	note := "name server 192.0.2.53:53 did not answer"
	in := c2Leaves().dns(time.Minute).waiting("c2", note).
		rows(active("c1"), draining("c2").started(ago(time.Hour))).build()
	var message string
	for _, r := range Decide(in).Clusters {
		if r.Name == "c2" {
			message = r.Message
		}
	}
	if got := DNSWaitingNote(message); got != note {
		t.Errorf("DNSWaitingNote(%q) = %q, want %q", message, got, note)
	}
	for _, m := range []string{"", "still published in DNS", "minimum drain duration not reached"} {
		if got := DNSWaitingNote(m); got != "" {
			t.Errorf("DNSWaitingNote(%q) = %q, want none", m, got)
		}
	}
}
