// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Settle is how long a cluster's Gateway must have been reported Programmed, with its
// addresses and a route, before DNS sends clients to it: Gateway implementations apply
// their configuration a moment after they write the status (Traefik throttles its
// providers' updates by 2s by default), and a client that DNS sends there meanwhile
// gets "no route". The time is the manager's own view, so clocks of the spokes do not
// matter; a manager that restarts waits again (later, never earlier).
const Settle = 5 * time.Second

// Settled returns the clusters whose target Gateway has been ready, with an address
// reported, for Settle as this manager saw it, and when the next one will have (zero
// when none waits). seen is when the manager first saw each cluster so, kept up to
// date here: a cluster that stops being ready, or loses its addresses, waits again.
func Settled(seen map[string]time.Time, ready sets.Set[string], addresses map[string][]string, now time.Time) (settled sets.Set[string], next time.Time) {
	settled = sets.New[string]()
	for cluster := range seen {
		if !ready.Has(cluster) || len(addresses[cluster]) == 0 {
			delete(seen, cluster)
		}
	}
	for cluster := range ready {
		if len(addresses[cluster]) == 0 {
			continue
		}
		since, ok := seen[cluster]
		if !ok {
			since = now
			seen[cluster] = now
		}
		if at := since.Add(Settle); now.Before(at) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		settled.Insert(cluster)
	}
	return settled, next
}
