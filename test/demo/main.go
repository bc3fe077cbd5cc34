// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command demo runs a complete, self-explaining migration of a Gateway between two
// clusters of a local OCM fleet: the test bed's real programs (etcd, kube-apiservers,
// Prometheus, an OCM hub and klusterlets joined with clusteradm), the traffic-migration
// manager and agents, and on each spoke's node Traefik (the Gateway API
// implementation), a backend and a Prometheus agent that remote-writes Traefik's
// metrics to the hub's Prometheus; CoreDNS, written by external-dns's engine from the
// policy's DNSEndpoint, which the manager publishes for the real Placement (spec.dns);
// and clients that resolve the Gateway's name through CoreDNS, cache its answers for
// their own TTL and send every request through Traefik. It moves the real Placement
// from cluster1 to cluster2, shows the traffic draining live until the proxy Placement
// drops cluster1 and its Gateway is deleted, and prints a summary: the move's timeline
// (cluster2 Programmed, CoreDNS answering cluster2 only, cluster1's first passing check,
// its removal), how long the drain took, cluster1's share at removal, and the client
// requests served, retried and failed (none may fail).
//
// With -fleet it starts the same fleet, with the clients sending to cluster1, and leaves
// it running until interrupted, for trying the product by hand ('make fleet').
//
// It finds the test bed's programs through the TESTBED_* variables that the Makefile
// sets: run it with 'make demo' (or 'make demo DEMO_FLAGS=-short') or 'make fleet'.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	short := flag.Bool("short", false, "run the short form: fewer clients, shorter TTLs, window, interval and minimum drain")
	seed := flag.Uint64("seed", 0, "seed of the clients' cache ages and request phases (default: the form's own)")
	fleet := flag.Bool("fleet", false, "start the demo's fleet and leave it running for trying the product by hand, until interrupted, instead of running the migration")
	flag.Parse()

	cfg := fullConfig()
	if *short {
		cfg = shortConfig()
	}
	if *seed != 0 {
		cfg.seed = *seed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *fleet {
		if err := runFleet(ctx, cfg, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			stop()
			os.Exit(1)
		}
		return
	}
	s, err := run(ctx, cfg, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		stop()
		os.Exit(1)
	}
	if !s.ok() {
		stop()
		os.Exit(1)
	}
}
