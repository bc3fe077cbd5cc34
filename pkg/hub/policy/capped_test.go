// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

func TestCappedBackoff(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		n        int
		want     time.Duration
	}{
		{time.Second, 1, minCappedBackoff}, // never below the floor
		{time.Second, 2, 2 * minCappedBackoff},
		{time.Second, 4, 8 * minCappedBackoff},
		{time.Second, 5, maxCappedBackoff},
		{time.Second, 1000, maxCappedBackoff},
		{0, 1, minCappedBackoff},
		{20 * time.Second, 1, 40 * time.Second}, // twice the interval above the floor
		{20 * time.Second, 2, 80 * time.Second},
		{10 * time.Minute, 1, maxCappedBackoff}, // never above the ceiling
	} {
		if got := cappedBackoff(tc.interval, tc.n); got != tc.want {
			t.Errorf("cappedBackoff(%s, %d) = %s, want %s", tc.interval, tc.n, got, tc.want)
		}
	}
}

// TestCappedChecks: after an answer over the manager's limits, none of the policy's
// checks of that kind is sent to Prometheus until the backoff ends: each is recorded
// with the message of that answer and its own query. Answers of one round count once;
// a second round with one doubles the backoff. Another cluster's answer within the
// limits does not end it; the cluster's own does, and so do a change of the spec and
// another policy of the name. Drain and replacement checks back off apart.
func TestCappedChecks(t *testing.T) {
	mem := newMemories()
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Generation: 1}}
	tooLarge := promcheck.Check{Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonAnswerTooLarge, Message: "the answer is larger than 1048576 bytes", Query: "q1"}
	pass := promcheck.Check{Result: trafficv1alpha1.EvaluationPass, Reason: trafficv1alpha1.ReasonQuerySucceeded, Value: "0", Query: "q2"}
	t0 := time.Unix(1000, 0)
	repeat := func(p *trafficv1alpha1.TrafficMigrationPolicy, replacement bool, at time.Time) (promcheck.Check, bool) {
		t.Helper()
		return mem.cappedRepeat("ns/p", p, replacement, at)
	}

	if _, ok := repeat(policy, false, t0); ok {
		t.Fatal("a policy whose answers were never over the limits backs off")
	}
	// An interval whose double is above minCappedBackoff, so that the doubling shows.
	interval := 20 * time.Second
	first := mem.noteCapped("ns/p", policy, false, "c1", tooLarge, t0, interval)
	for _, want := range []string{"cluster c1: the answer is larger than 1048576 bytes", "sent to Prometheus for 40s"} {
		if !strings.Contains(first.Message, want) {
			t.Errorf("the first answer over the limits says %q, want %q in it", first.Message, want)
		}
	}
	// A second answer of the same round counts once.
	mem.noteCapped("ns/p", policy, false, "c3", tooLarge, t0, interval)
	ev, ok := repeat(policy, false, t0.Add(interval))
	if !ok || ev.Result != trafficv1alpha1.EvaluationError || ev.Reason != trafficv1alpha1.ReasonAnswerTooLarge || ev.Message != first.Message || ev.Query != "" || ev.Value != "" {
		t.Errorf("another cluster's check within the backoff was %+v (repeated %v), want an AnswerTooLarge error with the first message, and no value or query of another cluster", ev, ok)
	}
	if _, ok := repeat(policy, true, t0.Add(interval)); ok {
		t.Error("the replacement checks back off with the drain checks")
	}
	if _, ok := repeat(policy, false, t0.Add(2*interval)); ok {
		t.Error("a check was held back after the backoff")
	}

	// Another cluster's answer within the limits does not end the backoff.
	mem.noteCapped("ns/p", policy, false, "c2", pass, t0.Add(2*interval), interval)
	second := mem.noteCapped("ns/p", policy, false, "c1", tooLarge, t0.Add(2*interval), interval)
	if !strings.Contains(second.Message, "for 1m20s") {
		t.Errorf("the second round over the limits says %q, want a backoff of 1m20s", second.Message)
	}
	if _, ok := repeat(policy, false, t0.Add(5*interval)); !ok {
		t.Error("the second round over the limits did not double the backoff")
	}

	// A new spec may hold a new query, and another policy of the name is another
	// question: both are asked at once.
	changed := policy.DeepCopy()
	changed.Generation = 2
	if _, ok := repeat(changed, false, t0.Add(5*interval)); ok {
		t.Error("a changed spec's checks were held back")
	}
	other := policy.DeepCopy()
	other.UID = "u2"
	if _, ok := repeat(other, false, t0.Add(5*interval)); ok {
		t.Error("another policy of the name's checks were held back")
	}

	// The cluster that started it answering within the limits ends it.
	if got := mem.noteCapped("ns/p", policy, false, "c1", pass, t0.Add(6*interval), interval); got != pass {
		t.Errorf("an answer within the limits was recorded as %+v", got)
	}
	third := mem.noteCapped("ns/p", policy, false, "c2", tooLarge, t0.Add(7*interval), interval)
	if !strings.Contains(third.Message, "for 40s") {
		t.Errorf("a run after the end of the last started at %q, want a backoff of 40s", third.Message)
	}

	mem.forget("ns/p")
	if _, ok := repeat(policy, false, t0.Add(8*interval)); ok {
		t.Error("forget kept the backoff")
	}
}
