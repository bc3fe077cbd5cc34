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
		{time.Second, 1, 2 * time.Second},
		{time.Second, 2, 4 * time.Second},
		{time.Second, 8, 256 * time.Second},
		{time.Second, 9, maxCappedBackoff},
		{time.Second, 1000, maxCappedBackoff},
		{0, 1, 2 * time.Second}, // never below twice the shortest interval
		{30 * time.Second, 1, time.Minute},
		{10 * time.Minute, 1, maxCappedBackoff}, // never above the ceiling
	} {
		if got := cappedBackoff(tc.interval, tc.n); got != tc.want {
			t.Errorf("cappedBackoff(%s, %d) = %s, want %s", tc.interval, tc.n, got, tc.want)
		}
	}
}

// TestCappedChecks: a check whose answer is over the manager's limits is repeated
// without asking Prometheus until its backoff ends, a second such answer doubles the
// backoff, and an answer within the limits, a change of the spec or another policy of
// the name end it. Each check backs off on its own.
func TestCappedChecks(t *testing.T) {
	mem := newMemories()
	policy := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Generation: 1}}
	c1, c1Replacement := cappedKey{cluster: "c1"}, cappedKey{cluster: "c1", replacement: true}
	tooLarge := promcheck.Check{Result: trafficv1alpha1.EvaluationError, Reason: trafficv1alpha1.ReasonAnswerTooLarge, Message: "the answer is larger than 1048576 bytes"}
	t0 := time.Unix(1000, 0)

	if _, ok := mem.cappedRepeat("ns/p", policy, c1, t0); ok {
		t.Fatal("a check that never answered over the limits was repeated")
	}
	first := mem.noteCapped("ns/p", policy, c1, tooLarge, t0, time.Second)
	if !strings.HasPrefix(first.Message, tooLarge.Message) || !strings.Contains(first.Message, "asked again in 2s") {
		t.Errorf("the first answer over the limits says %q", first.Message)
	}
	repeatAt := func(k cappedKey, at time.Time) (promcheck.Check, bool) {
		t.Helper()
		return mem.cappedRepeat("ns/p", policy, k, at)
	}
	if ev, ok := repeatAt(c1, t0.Add(time.Second)); !ok || ev != first {
		t.Errorf("within the backoff the check was %v (repeated %v), want %v", ev, ok, first)
	}
	if _, ok := repeatAt(c1Replacement, t0.Add(time.Second)); ok {
		t.Error("the replacement check of the cluster backs off with its drain check")
	}
	if _, ok := repeatAt(c1, t0.Add(2*time.Second)); ok {
		t.Error("the check was repeated after its backoff")
	}

	second := mem.noteCapped("ns/p", policy, c1, tooLarge, t0.Add(2*time.Second), time.Second)
	if !strings.Contains(second.Message, "2 answers in a row") || !strings.Contains(second.Message, "asked again in 4s") {
		t.Errorf("the second answer over the limits says %q", second.Message)
	}
	if _, ok := repeatAt(c1, t0.Add(5*time.Second)); !ok {
		t.Error("the second answer over the limits did not double the backoff")
	}

	// A new spec may hold a new query: it is asked at once.
	changed := policy.DeepCopy()
	changed.Generation = 2
	if _, ok := mem.cappedRepeat("ns/p", changed, c1, t0.Add(5*time.Second)); ok {
		t.Error("the check was repeated for a changed spec")
	}
	other := policy.DeepCopy()
	other.UID = "u2"
	if _, ok := mem.cappedRepeat("ns/p", other, c1, t0.Add(5*time.Second)); ok {
		t.Error("the check was repeated for another policy of the name")
	}

	// An answer within the limits ends the backoff.
	pass := promcheck.Check{Result: trafficv1alpha1.EvaluationPass, Reason: trafficv1alpha1.ReasonQuerySucceeded}
	if got := mem.noteCapped("ns/p", policy, c1, pass, t0.Add(6*time.Second), time.Second); got != pass {
		t.Errorf("an answer within the limits was recorded as %v", got)
	}
	third := mem.noteCapped("ns/p", policy, c1, tooLarge, t0.Add(7*time.Second), time.Second)
	if !strings.Contains(third.Message, "this answer was over") {
		t.Errorf("an answer within the limits did not end the run: %q", third.Message)
	}

	mem.forget("ns/p")
	if _, ok := repeatAt(c1, t0.Add(8*time.Second)); ok {
		t.Error("forget kept the backoff")
	}
}
