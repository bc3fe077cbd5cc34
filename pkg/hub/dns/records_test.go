// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

func TestDecide(t *testing.T) {
	addrs := map[string][]string{
		"c1": {"10.0.0.1"},
		"c2": {"10.0.0.2", "fd00::2"},
		"c3": {"lb.example.com"},
		"c4": {"10.0.0.1"}, // shares c1's address
	}
	published := func(clusters []string, records ...Record) *Publication {
		return &Publication{Clusters: clusters, Records: records}
	}
	a := func(targets ...string) Record {
		return Record{DNSName: "gw.example.com", RecordType: RecordTypeA, TTL: 60, Targets: targets}
	}
	aaaa := func(targets ...string) Record {
		return Record{DNSName: "gw.example.com", RecordType: RecordTypeAAAA, TTL: 60, Targets: targets}
	}
	cases := map[string]struct {
		in          Input
		realUnknown bool
		want        Plan
	}{
		"the real Placement's Programmed clusters are published": {
			in:   Input{Real: []string{"c2", "c1"}, Programmed: sets.New("c1", "c2")},
			want: Plan{Desired: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2"))},
		},
		"a cluster not Programmed is not published": {
			in:   Input{Real: []string{"c1", "c2"}, Programmed: sets.New("c1")},
			want: Plan{Desired: published([]string{"c1"}, a("10.0.0.1"))},
		},
		"make-before-break: with nothing publishable, DNS keeps what it has": {
			in: Input{Real: []string{"c2"}, Programmed: sets.New("c1"),
				Current: published([]string{"c1"}, a("10.0.0.1"))},
			want: Plan{},
		},
		"nothing publishable and nothing published: nothing is created": {
			in:   Input{Real: []string{"c2"}},
			want: Plan{},
		},
		"the move, step 1: the new cluster is published beside the leaving one": {
			in: Input{Real: []string{"c2"}, Programmed: sets.New("c1", "c2"),
				Current: published([]string{"c1"}, a("10.0.0.1")), CurrentApplied: true},
			want: Plan{Desired: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2")), Step: StepAdd},
		},
		"the move, step 2 waits until external-dns applied both": {
			in: Input{Real: []string{"c2"}, Programmed: sets.New("c1", "c2"),
				Current: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2"))},
			want: Plan{Step: StepWaitApplied},
		},
		"the move, step 2: the leaving cluster goes once both are applied": {
			in: Input{Real: []string{"c2"}, Programmed: sets.New("c1", "c2"),
				Current: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2")), CurrentApplied: true},
			want: Plan{Desired: published([]string{"c2"}, a("10.0.0.2"), aaaa("fd00::2"))},
		},
		"a switch never swaps, even from records external-dns has not applied": {
			in: Input{Real: []string{"c2"}, Programmed: sets.New("c2"),
				Current: published([]string{"c1"}, a("10.0.0.1"))},
			want: Plan{Desired: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2")), Step: StepAdd},
		},
		"growing needs no wait": {
			in: Input{Real: []string{"c1", "c2"}, Programmed: sets.New("c1", "c2"),
				Current: published([]string{"c1"}, a("10.0.0.1"))},
			want: Plan{Desired: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2"))},
		},
		"shrinking waits for the records it shrinks to be applied": {
			in: Input{Real: []string{"c1"}, Programmed: sets.New("c1", "c2"),
				Current: published([]string{"c1", "c2"}, a("10.0.0.1", "10.0.0.2"), aaaa("fd00::2"))},
			want: Plan{Step: StepWaitApplied},
		},
		"a new TTL alone is written at once": {
			in: Input{Real: []string{"c1"}, Programmed: sets.New("c1"),
				Current: published([]string{"c1"}, Record{DNSName: "gw.example.com", RecordType: RecordTypeA, TTL: 5, Targets: []string{"10.0.0.1"}})},
			want: Plan{Desired: published([]string{"c1"}, a("10.0.0.1"))},
		},
		"host names are not published, and said so": {
			in:   Input{Real: []string{"c1", "c3"}, Programmed: sets.New("c1", "c3")},
			want: Plan{Desired: published([]string{"c1"}, a("10.0.0.1")), Unpublishable: []string{"c3"}},
		},
		"shared addresses are listed once": {
			in:   Input{Real: []string{"c1", "c4"}, Programmed: sets.New("c1", "c4")},
			want: Plan{Desired: published([]string{"c1", "c4"}, a("10.0.0.1"))},
		},
		"unchanged: nothing to write": {
			in: Input{Real: []string{"c1"}, Programmed: sets.New("c1"),
				Current: published([]string{"c1"}, a("10.0.0.1"))},
			want: Plan{},
		},
		"real decisions unknown: nothing is written": {
			in:          Input{Real: []string{"c1"}, Programmed: sets.New("c1")},
			realUnknown: true,
			want:        Plan{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			in.RealKnown = !tc.realUnknown
			in.Hostnames = []string{"gw.example.com"}
			in.TTL = time.Minute
			in.Addresses = addrs
			got := Decide(in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
			if got.Desired != nil {
				in.Current, in.CurrentApplied = got.Desired, false
				if again := Decide(in); again.Desired != nil {
					t.Errorf("what was written is written again: %+v", again.Desired)
				}
			}
		})
	}
}

// TestDecideSwitchNeverSwaps follows a move as the manager and external-dns make it,
// each write applied before the next sync, and checks that every record set only grows
// or shrinks: no write removes an address and adds another at once, and no record set
// is ever empty.
func TestDecideSwitchNeverSwaps(t *testing.T) {
	in := Input{RealKnown: true, Hostnames: []string{"gw.example.com", "www.example.com"}, TTL: time.Minute,
		Addresses: map[string][]string{"c1": {"10.0.0.1", "fd00::1"}, "c2": {"10.0.0.2"}, "c3": {"10.0.0.3", "fd00::3"}}}
	moves := [][]string{{"c1"}, {"c2"}, {"c3"}, {"c1", "c2"}, {"c3"}, {"c2"}}
	var writes int
	for _, real := range moves {
		in.Real, in.Programmed = real, sets.New("c1", "c2", "c3")
		for range 4 {
			for _, applied := range []bool{false, true} {
				in.CurrentApplied = applied
				p := Decide(in)
				if p.Desired == nil {
					continue
				}
				if in.Current != nil {
					if grows, shrinks := compare(*in.Current, *p.Desired); grows && shrinks {
						t.Fatalf("to %v: a write swaps %+v for %+v", real, in.Current.Records, p.Desired.Records)
					}
				}
				if len(p.Desired.Records) == 0 {
					t.Fatalf("to %v: a write publishes nothing", real)
				}
				in.Current = p.Desired
				writes++
			}
		}
		if want := sets.New(real...); !sets.New(in.Current.Clusters...).Equal(want) {
			t.Fatalf("to %v: published %v at the end", real, in.Current.Clusters)
		}
	}
	if writes < len(moves) {
		t.Errorf("%d writes for %d moves", writes, len(moves))
	}
}

func TestWithdrawn(t *testing.T) {
	current := &Publication{Clusters: []string{"c2"}}
	if got := Withdrawn(current, true, []string{"c1", "c2"}); !got.Equal(sets.New("c1")) {
		t.Errorf("applied: withdrawn %v, want c1", sets.List(got))
	}
	if got := Withdrawn(current, false, []string{"c1", "c2"}); got.Len() != 0 {
		t.Errorf("not applied: withdrawn %v, want none", sets.List(got))
	}
	if got := Withdrawn(nil, true, []string{"c1"}); got.Len() != 0 {
		t.Errorf("nothing published: withdrawn %v, want none", sets.List(got))
	}
}
