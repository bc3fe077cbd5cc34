// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
)

// A cluster's Gateway is published only once this manager has seen it Programmed, with
// an address, for dns.Settle; it waits again after it stopped being so.
func TestSettled(t *testing.T) {
	c := &Controller{memory: newMemories()}
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	t0 := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	agents := agentReports{ready: sets.New("c1", "c2"), addresses: map[string][]string{"c1": {"10.0.0.1"}}}

	d := &dnsState{}
	if got := c.settled(p, agents, t0, d); got.Len() != 0 || !d.settleAt.Equal(t0.Add(dns.Settle)) {
		t.Fatalf("at first sight: settled %v, next at %v; want none, next at %v", sets.List(got), d.settleAt, t0.Add(dns.Settle))
	}
	if dnsRequeue(d, t0) < dns.Settle {
		t.Errorf("requeued after %s, before the Gateway settles", dnsRequeue(d, t0))
	}
	d = &dnsState{}
	if got := c.settled(p, agents, t0.Add(dns.Settle), d); !got.Equal(sets.New("c1")) || !d.settleAt.IsZero() {
		t.Errorf("after dns.Settle: settled %v (c2 has no address), next at %v; want c1 alone, nothing next", sets.List(got), d.settleAt)
	}
	// c1 stops being Programmed, then is again: it waits anew.
	c.settled(p, agentReports{ready: sets.New[string](), addresses: agents.addresses}, t0.Add(time.Minute), &dnsState{})
	if got := c.settled(p, agents, t0.Add(time.Minute+time.Second), &dnsState{}); got.Len() != 0 {
		t.Errorf("back after a gap: settled %v at once, want none", sets.List(got))
	}
}
