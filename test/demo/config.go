// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"time"

	"open-cluster-management.io/traffic-migration/test/clients"
)

// config is the demo's scenario. The timings of a real migration (minutes of DNS
// caching, a 5m rate window, checks every 30s) are compressed through the policy's
// own fields and the clients' TTLs; nothing in the product knows it runs a demo.
type config struct {
	// name says which form this is, in the output.
	name string

	// clients is the number of clients; each sends a request every requestEvery.
	clients      int
	requestEvery time.Duration
	// Most clients keep a DNS answer for a TTL in shortTTL; longClients of them keep
	// it for a TTL in longTTL.
	shortTTL    clients.TTLRange
	longTTL     clients.TTLRange
	longClients int

	// The policy: trafficShare over window, maxPercent, checked every interval,
	// consecutiveSuccesses passes in a row, never before minDrainDuration.
	window               string
	maxPercent           float64
	interval             time.Duration
	consecutiveSuccesses int32
	minDrainDuration     time.Duration

	// warmUp is how long the clients send to the first cluster before the move, at
	// least a full rate window, so the shares start from a steady state.
	warmUp time.Duration
	// settle is how long the clients keep sending after the old Gateway is gone, so
	// that those still holding its address meet the closed gateway and retry.
	settle time.Duration
	// migrationTimeout bounds the time from the move to the old Gateway's removal.
	migrationTimeout time.Duration
	// seed makes the clients' cache ages and request phases repeatable.
	seed uint64
}

// fullConfig is the demo as 'make demo' runs it: 40 clients, TTLs of 2-20s and four of
// 40-60s, a 5% threshold on a 5s window checked every 2s, and 30s minimum drain.
func fullConfig() config {
	return config{
		name:                 "full",
		clients:              40,
		requestEvery:         200 * time.Millisecond,
		shortTTL:             clients.TTLRange{Min: 2 * time.Second, Max: 20 * time.Second},
		longTTL:              clients.TTLRange{Min: 40 * time.Second, Max: 60 * time.Second},
		longClients:          4,
		window:               "5s",
		maxPercent:           5,
		interval:             2 * time.Second,
		consecutiveSuccesses: 3,
		minDrainDuration:     30 * time.Second,
		warmUp:               7 * time.Second,
		settle:               3 * time.Second,
		migrationTimeout:     3 * time.Minute,
		seed:                 1,
	}
}

// shortConfig is the same scenario, shorter: 25 clients with TTLs of 1-6s, one of 12s
// and one of 90s (4% of the traffic, which may stay on cluster1 until its gateway is
// gone), a 4s window checked every second, and 10s minimum drain.
func shortConfig() config {
	c := fullConfig()
	c.name = "short"
	c.clients = 25
	c.shortTTL = clients.TTLRange{Min: 1 * time.Second, Max: 6 * time.Second}
	c.longTTL = clients.TTLRange{Min: 12 * time.Second, Max: 90 * time.Second}
	c.longClients = 2
	c.window = "4s"
	c.interval = time.Second
	c.minDrainDuration = 10 * time.Second
	c.warmUp = 5 * time.Second
	c.settle = 2 * time.Second
	c.migrationTimeout = 2 * time.Minute
	return c
}
