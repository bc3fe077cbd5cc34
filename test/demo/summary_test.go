// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/clients"
)

func TestSummaryPrint(t *testing.T) {
	good := summary{
		Form: "short", Clients: 25, Cluster1Removed: true, Cluster2Kept: true,
		DrainDuration: 13 * time.Second, MinDrainDuration: 10 * time.Second, ShareAtRemoval: "4.0000001", MaxPercent: 5,
		ChecksPassed: 3, ChecksNeeded: 3, RemovedAfter: 12740 * time.Millisecond, GatewayGoneAfter: 12810 * time.Millisecond,
		Requests: clients.Counts{Served: 5839, Retried: 1, ByCluster: map[string]int64{cluster1: 4280, cluster2: 1560}},
		Took:     62 * time.Second,
		Timeline: timeline{
			Edited:         milestone{After: 20 * time.Millisecond, Seen: true},
			Programmed:     milestone{After: 1830 * time.Millisecond, Seen: true},
			DNSMoved:       milestone{After: 2410 * time.Millisecond, Seen: true},
			DNSWithdrawn:   milestone{After: 1600 * time.Millisecond, Seen: true},
			UnderThreshold: milestone{After: 6600 * time.Millisecond, Seen: true}, UnderThresholdValue: "3.21",
		},
		RemovedAfterDNS: 11 * time.Second, DNSTTL: 5 * time.Second, LongestClientTTL: 90 * time.Second,
	}
	tests := map[string]struct {
		s       summary
		ok      bool
		want    []string
		notWant []string
	}{
		"a clean migration": {
			s:  good,
			ok: true,
			want: []string{
				"cluster1 left the proxy Placement 12.7s after the move: it drained for 13s by the policy's status (minDrainDuration 10s);",
				"its share of the traffic at removal: 4.0% in the policy's last check (threshold 5%), 3/3 checks passed in a row;",
				"  served                    5839\n",
				"  retried, then served         1  (",
				"  failed                       0\n",
				"  answered by cluster1      4280\n",
				"Lookups of gateway.demo.example by the demo's poll of CoreDNS that got no address: 0\n",
				"OK: the Gateway moved without a failed request or lookup. The demo took 1m2s.",
				"  t+0.0s    the administrator edited Placement gateway-placement to select cluster2\n",
				"  t+1.8s    cluster2's Gateway Programmed (",
				"  t+2.4s    CoreDNS answers gateway.demo.example with cluster2's address only (",
				"  t+1.6s    DNS let go of cluster1 (its row's dnsWithdrawalTime",
				"  t+6.6s    cluster1's share under the threshold: its first passing check, from the policy's history (3.2%)\n",
				"  t+12.7s   cluster1 removed from the proxy Placement gateway-placement-proxy\n",
				"cluster1 was removed 11s after DNS let go of it (its minimum drain counts from then, never less than the records' TTL, 5s), 1m19s before the longest client TTL (1m30s): ",
			},
			notWant: []string{"failure:", "NOT", "not seen", "no dnsWithdrawalTime"},
		},
		"removed after the longest client TTL": {
			s: func() summary {
				s := good
				s.RemovedAfterDNS = 95 * time.Second
				return s
			}(),
			ok:      true,
			want:    []string{"cluster1 was removed 1m35s after DNS let go of it, no sooner than the longest client TTL (1m30s): no client could still hold its address.\n"},
			notWant: []string{"before the longest client TTL"},
		},
		"DNS never let go of cluster1": {
			s: func() summary {
				s := good
				s.Timeline.DNSWithdrawn, s.Timeline.DNSMoved, s.RemovedAfterDNS = milestone{}, milestone{}, 0
				return s
			}(),
			ok: true,
			want: []string{
				"  not seen  CoreDNS answers gateway.demo.example with cluster2's address only (",
				"  not seen  DNS let go of cluster1 (",
				"cluster1's row has no dnsWithdrawalTime: DNS had not let go of it when it was removed.\n",
			},
		},
		"a failed request": {
			s: func() summary {
				s := good
				s.Requests.Failed = 1
				s.Requests.FailureSamples = []string{"client 3: connection refused"}
				return s
			}(),
			want: []string{"  failed                       1\n", "  failure: client 3: connection refused\n", "FAILED: see above."},
		},
		"a lookup without an address": {
			s: func() summary {
				s := good
				s.DNSLookups = dnsFailures{Count: 1, Samples: []string{"10:00:01.250: lookup gateway.demo.example.: no such host"}}
				return s
			}(),
			want: []string{"got no address: 1\n", "  failed lookup at 10:00:01.250: lookup gateway.demo.example.: no such host\n", "FAILED: see above."},
		},
		"removed too early": {
			s: func() summary {
				s := good
				s.DrainDuration = 9 * time.Second
				return s
			}(),
			want: []string{"FAILED"},
		},
		"cluster1 kept": {
			s: func() summary {
				s := good
				s.Cluster1Removed = false
				return s
			}(),
			want:    []string{"cluster1 was NOT removed.", "FAILED", "  not seen  cluster1 removed from the proxy Placement"},
			notWant: []string{"after DNS let go of it"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.s.ok(); got != tt.ok {
				t.Errorf("ok() = %v, want %v", got, tt.ok)
			}
			var b strings.Builder
			tt.s.print(&b)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("the summary lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("the summary has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestWrap(t *testing.T) {
	tests := map[string]struct {
		text, first, rest string
		width             int
		want              string
	}{
		"fits":          {text: "a b c", width: 10, want: "a b c\n"},
		"breaks":        {text: "aaa bbb ccc", width: 7, want: "aaa bbb\nccc\n"},
		"list item":     {text: "aaa bbb ccc", first: "- ", rest: "  ", width: 9, want: "- aaa bbb\n  ccc\n"},
		"long word":     {text: "a verylongword b", width: 6, want: "a\nverylongword\nb\n"},
		"spaces folded": {text: "  a \n  b  ", width: 10, want: "a b\n"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := wrap(tt.text, tt.width, tt.first, tt.rest); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
