// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// TestQueryOffset: a policy's offset is fixed by its UID and lies within the spread, and
// the offsets of 100 policies fill the second: no tenth of it holds more than a quarter
// of them, so policies due in one second do not query at once.
func TestQueryOffset(t *testing.T) {
	if got := queryOffset("uid", 0); got != 0 {
		t.Errorf("with no spread the offset is %s, want 0", got)
	}
	buckets := make([]int, 10)
	for i := range 100 {
		uid := types.UID(fmt.Sprintf("3f1c9a2e-%04d-4b7e-9c1d-policy", i))
		got := queryOffset(uid, time.Second)
		if got < 0 || got >= time.Second {
			t.Fatalf("offset of %s is %s, want it within [0, 1s)", uid, got)
		}
		if again := queryOffset(uid, time.Second); again != got {
			t.Fatalf("offset of %s is %s, then %s", uid, got, again)
		}
		buckets[got/(100*time.Millisecond)]++
	}
	for i, n := range buckets {
		if n == 0 || n > 25 {
			t.Errorf("%d of 100 offsets in the tenth %d of the second (all: %v), want 1-25", n, i, buckets)
		}
	}
}

// TestWaitQueryOffset: a round's queries wait on the controller's clock until the
// policy's offset past the second they are evaluated at, not past the round's start,
// and not at all once that time has passed; the manager's stop ends the wait.
func TestWaitQueryOffset(t *testing.T) {
	const uid = types.UID("policy-uid")
	offset := queryOffset(uid, time.Second)
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(at.Add(offset / 2))
	c := &Controller{clock: clk, limits: Limits{QuerySpread: time.Second}}

	done := make(chan bool, 1)
	go func() { done <- c.waitQueryOffset(context.Background(), uid, at) }()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the round did not wait for its offset")
		}
		time.Sleep(time.Millisecond)
	}
	clk.SetTime(at.Add(offset - time.Millisecond))
	select {
	case <-done:
		t.Fatalf("the round's queries went out before their offset %s", offset)
	default:
	}
	clk.SetTime(at.Add(offset))
	select {
	case ok := <-done:
		if !ok {
			t.Error("the wait reports a stop that did not happen")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the round still waits once its offset has come")
	}

	clk.SetTime(at.Add(2 * time.Second))
	if !c.waitQueryOffset(context.Background(), uid, at) {
		t.Error("a round whose offset has passed did not go at once")
	}

	clk.SetTime(at)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if offset > 0 && c.waitQueryOffset(ctx, uid, at) {
		t.Error("a stopped manager's round still waited for its offset")
	}
}
