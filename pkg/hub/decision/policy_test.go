// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func duration(d time.Duration) *time.Duration { return &d }

// defaultPolicy is the Policy of a spec that sets nothing, changed by edit.
func defaultPolicy(edit func(*Policy)) Policy {
	p := Policy{
		Interval:             DefaultInterval,
		ConsecutiveSuccesses: DefaultConsecutiveSuccesses,
		MinDrainDuration:     DefaultMinDrainDuration,
		OnMaxDrainDuration:   v1alpha1.DeadlineHold,
		NoDataPolicy:         v1alpha1.NoDataHold,
	}
	if edit != nil {
		edit(&p)
	}
	return p
}

// shareOf5 is the Policy of a spec that sets only a trafficShare of maxPercent 5, whose
// window is read as window (0: not known).
func shareOf5(window time.Duration) Policy {
	return defaultPolicy(func(p *Policy) {
		p.ShareWindow = window
		p.Expectation = &v1alpha1.Comparison{Operator: "<=", Threshold: 5}
	})
}

func TestPolicyFromSpec(t *testing.T) {
	for name, tc := range map[string]struct {
		spec v1alpha1.TrafficMigrationPolicySpec
		want Policy
	}{
		"unset fields take the CRD's defaults": {
			spec: v1alpha1.TrafficMigrationPolicySpec{},
			want: defaultPolicy(nil),
		},
		"set fields are kept": {
			spec: v1alpha1.TrafficMigrationPolicySpec{
				Suspend:              true,
				Interval:             &metav1.Duration{Duration: time.Minute},
				ConsecutiveSuccesses: 5,
				MinDrainDuration:     &metav1.Duration{},
				MaxDrainDuration:     &metav1.Duration{Duration: time.Hour},
				OnMaxDrainDuration:   v1alpha1.DeadlineRemove,
				NoDataPolicy:         v1alpha1.NoDataPass,
			},
			want: Policy{
				Suspend:              true,
				Interval:             time.Minute,
				ConsecutiveSuccesses: 5,
				MinDrainDuration:     0,
				MaxDrainDuration:     duration(time.Hour),
				OnMaxDrainDuration:   v1alpha1.DeadlineRemove,
				NoDataPolicy:         v1alpha1.NoDataPass,
			},
		},
		"a zero maxDrainDuration is a deadline, not none": {
			spec: v1alpha1.TrafficMigrationPolicySpec{MaxDrainDuration: &metav1.Duration{}},
			want: defaultPolicy(func(p *Policy) { p.MaxDrainDuration = duration(0) }),
		},
		"values the CRD rejects are read on the safe side": {
			spec: v1alpha1.TrafficMigrationPolicySpec{
				Interval:             &metav1.Duration{Duration: 10 * time.Millisecond},
				ConsecutiveSuccesses: -1,
				MinDrainDuration:     &metav1.Duration{Duration: -time.Second},
				MaxDrainDuration:     &metav1.Duration{Duration: -time.Second},
				OnMaxDrainDuration:   "Delete",
				NoDataPolicy:         "Ignore",
			},
			want: Policy{
				Interval:             MinInterval,
				ConsecutiveSuccesses: DefaultConsecutiveSuccesses,
				MinDrainDuration:     0,
				MaxDrainDuration:     duration(0),
				OnMaxDrainDuration:   v1alpha1.DeadlineHold,
				NoDataPolicy:         v1alpha1.NoDataHold,
			},
		},
		"trafficShare's window, by default 5m, sets when a drain stalls": {
			spec: v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{Metric: "m", MaxPercent: 5}},
			want: shareOf5(5 * time.Minute),
		},
		"a window that does not parse is not known": {
			spec: v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{Metric: "m", Window: "5x", MaxPercent: 5}},
			want: shareOf5(0),
		},
		"a set window is kept": {
			spec: v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{Metric: "m", Window: "1h30s", MaxPercent: 5}},
			want: shareOf5(time.Hour + 30*time.Second),
		},
	} {
		t.Run(name, func(t *testing.T) {
			checkEqual(t, "PolicyFromSpec", PolicyFromSpec(&tc.spec), tc.want)
		})
	}
}

// TestDrainWindow: the minimum drain ends minDrainDuration after the drain clock, with
// DNS followed the TTL at least after DNS let go (and never before the drain started);
// the deadline is maxDrainDuration after the drain started, never before the minimum.
func TestDrainWindow(t *testing.T) {
	start := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	p := Policy{MinDrainDuration: 2 * time.Minute, DNSTTL: 5 * time.Minute, MaxDrainDuration: duration(time.Minute)}
	row := v1alpha1.ClusterStatus{DrainStartTime: at(0)}
	for name, tc := range map[string]struct {
		withdrawal *metav1.Time
		followDNS  bool
		want       time.Time
	}{
		"without DNS":             {want: start.Add(2 * time.Minute)},
		"still published in DNS":  {followDNS: true},
		"out of DNS":              {withdrawal: at(time.Minute), followDNS: true, want: start.Add(6 * time.Minute)},
		"out of DNS before start": {withdrawal: at(-time.Hour), followDNS: true, want: start.Add(5 * time.Minute)},
	} {
		row.DNSWithdrawalTime = tc.withdrawal
		if got := p.MinDrainEnd(&row, tc.followDNS); !got.Equal(tc.want) {
			t.Errorf("%s: minimum drain ends %v, want %v", name, got, tc.want)
		}
	}
	if got := p.Deadline(&row); !got.Equal(start.Add(2 * time.Minute)) {
		t.Errorf("a deadline shorter than the minimum drain: %v, want the minimum's end", got)
	}
	if got := (Policy{}).Deadline(&row); !got.IsZero() {
		t.Errorf("no maxDrainDuration, yet a deadline %v", got)
	}
}
