// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// runFleet is 'make fleet': it starts the demo's fleet as the demo does (the same
// code), with the clients sending to cluster1's Gateway, prints how to reach it and
// what to try, and leaves it running until ctx ends (SIGINT or SIGTERM). Then it stops
// everything it started.
func runFleet(ctx context.Context, cfg config, out, errOut io.Writer) error {
	d := newDemo(cfg, out)
	fleetIntro(d.con)
	stop, err := d.start(ctx, errOut)
	if err != nil {
		return err
	}
	text, err := tryIt(d.bed.Hub.KubeconfigPath, d.dns.Addr())
	if err != nil {
		stop(err)
		return err
	}
	fmt.Fprint(out, text)
	<-ctx.Done()
	processes := len(d.bed.Processes())
	stop(nil)
	fmt.Fprintf(out, "Stopped everything the fleet started: %d processes, the nodes' pods (Traefik, the backends, the metrics agents, traffic-migration), CoreDNS and external-dns's engine, and the clients.\n", processes)
	return nil
}

// fleetIntro says what 'make fleet' starts.
func fleetIntro(con *console) {
	con.paragraph("", "", "traffic-migration fleet: the demo's local OCM fleet, left running for you to try the product by hand.")
	con.paragraph("", "", "It starts etcd, a hub and two spoke kube-apiservers, Prometheus 3, an OCM hub and klusterlets joined with clusteradm, "+
		"the traffic-migration manager and agents, Traefik, a backend and a Prometheus agent (remote-writing to the hub's Prometheus) on each spoke, "+
		"CoreDNS serving "+gatewayHostname+" (written by external-dns's engine from the policy's DNSEndpoint, which the manager publishes for the REAL Placement), "+
		"and clients resolving it there and sending through Traefik to the Gateway on cluster1. Nothing of the demo's migration runs: you move the Placement.")
	con.text("", "")
}

// tryIt is what the fleet prints once it is steady: how to reach it, and commands to
// try on it; dnsAddr is CoreDNS's host:port.
func tryIt(kubeconfig, dnsAddr string) (string, error) {
	bin, err := testbed.ProgramTrafficMigration.Path()
	if err != nil {
		return "", err
	}
	dnsHost, dnsPort, err := net.SplitHostPort(dnsAddr)
	if err != nil {
		return "", fmt.Errorf("CoreDNS's address %q: %w", dnsAddr, err)
	}
	patch := func(region string) (string, error) {
		b, err := json.Marshal(map[string]any{"spec": map[string]any{"predicates": regionPredicates(region)}})
		return string(b), err
	}
	toCluster2, err := patch(regions[cluster2])
	if err != nil {
		return "", err
	}
	toCluster1, err := patch(regions[cluster1])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `
The fleet is running. In another terminal:

  export KUBECONFIG=%s
  export PATH=%s:$PATH

Then try:

  # the policy, and the fleet by cluster
  traffic-migration status %[3]s -n %[4]s
  traffic-migration status --clusters

  # a dry run of the policy's check: each cluster's query, share and what its removal would wait for
  traffic-migration check %[3]s -n %[4]s

  # what CoreDNS answers for the Gateway's name, and the DNSEndpoint the manager keeps for it
  dig @%[12]s -p %[13]s %[14]s +noall +answer
  kubectl -n %[4]s get dnsendpoint %[3]s -o yaml

  # move the Gateway from %[5]s (region=%[6]s) to %[7]s (region=%[8]s), and watch %[5]s drain
  # (CoreDNS answers %[7]s's address once its Gateway is Programmed)
  kubectl -n %[4]s patch placement %[9]s --type=merge -p '%[10]s'
  traffic-migration status %[3]s -n %[4]s --watch

  # and back
  kubectl -n %[4]s patch placement %[9]s --type=merge -p '%[11]s'

Press Ctrl-C to stop everything the fleet started.
`, kubeconfig, filepath.Dir(bin), policyName, namespace, cluster1, regions[cluster1], cluster2, regions[cluster2], placementName, toCluster2, toCluster1,
		dnsHost, dnsPort, gatewayHostname)
	return b.String(), nil
}
