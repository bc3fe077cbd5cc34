// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestQuerierCacheLetsGo: a client is reused while its Secret is unchanged, rebuilt
// when it changes, and dropped when its Secret is deleted or it sat unused past
// querierIdleTTL.
func TestQuerierCacheLetsGo(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	q := newQuerierCache(clk, Limits{})
	secret := func(name, uid, rv string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-" + uid), ResourceVersion: rv},
			Data:       map[string][]byte{"url": []byte("http://127.0.0.1:9090")},
		}
	}
	first, err := q.get(secret("a", "1", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := q.get(secret("a", "1", "1")); again != first {
		t.Error("an unchanged Secret got a new client")
	}
	if changed, _ := q.get(secret("a", "1", "2")); changed == first {
		t.Error("a changed Secret kept its old client")
	}
	if _, err := q.get(secret("b", "2", "1")); err != nil {
		t.Fatal(err)
	}
	q.forget("ns", "a")
	if got := q.len(); got != 1 {
		t.Errorf("after Secret a was deleted %d clients are kept, want 1", got)
	}
	clk.Step(querierIdleTTL + time.Second)
	if _, err := q.get(secret("c", "3", "1")); err != nil {
		t.Fatal(err)
	}
	if got := q.len(); got != 1 {
		t.Errorf("after b sat unused past the TTL %d clients are kept, want only c's", got)
	}
}
