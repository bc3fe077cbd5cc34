// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/clients"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

const (
	// readyTimeout bounds each wait of the set-up for the fleet to reach a state.
	readyTimeout = 3 * time.Minute
	// lead is how long the view shows the steady state before the move.
	lead = 3 * time.Second
)

// demo is one run of the demo: what it has started, so that it can stop it.
type demo struct {
	cfg       config
	con       *console
	bed       *testbed.Bed
	hub       *fixture.HubClients
	spokes    map[string]gatewayclient.Interface
	traefik   map[string]*testbed.Traefik // each spoke's Gateway API implementation
	clusterOf map[netip.Addr]string       // the spokes by their nodes' addresses
	dns       *testbed.DNS                // CoreDNS, written by external-dns's engine from the policy's DNSEndpoint
	clients   *clients.Fleet

	// parts runs the demo's own components (the view)
	// until stopParts; partsDone waits for them.
	parts     context.Context
	stopParts context.CancelFunc
	partsDone sync.WaitGroup
}

// run runs the demo and returns its summary. Whatever happens, everything it started is
// stopped before it returns. On failure the end of every program's log is written to
// errOut, and the programs' data and logs are kept.
func run(ctx context.Context, cfg config, out, errOut io.Writer) (_ *summary, err error) {
	d := newDemo(cfg, out)
	intro(d.con, cfg)
	stop, err := d.start(ctx, errOut)
	if err != nil {
		return nil, err
	}
	defer func() { stop(err) }()

	v, moveAt, err := d.migrate(ctx)
	if err != nil {
		return nil, err
	}
	d.stopOwnParts()
	s, err := summarize(ctx, d.hub, d.spokes, v, moveAt, d.clients, cfg)
	if err != nil {
		return nil, err
	}
	s.Components = fmt.Sprintf("Ran on: Traefik (%s) programming the Gateway on both spokes and serving every request; the check read %s{%s} that each spoke's Prometheus agent scraped from its Traefik and remote-wrote to the hub's Prometheus with cluster=<cluster name>; "+
		"the clients resolved %s through CoreDNS, written by external-dns's engine from the policy's DNSEndpoint, which the manager publishes for the REAL Placement.",
		testbed.Getenv(testbed.TraefikImageEnv), requestsMetric, requestsFilter, gatewayHostname)
	processes := len(d.bed.Processes())
	d.bed.Stop()
	s.Took = time.Since(d.con.start)
	s.print(out)
	fmt.Fprintf(out, "Stopped everything the demo started: %d processes, the nodes' pods (Traefik, the backends, the metrics agents, traffic-migration), CoreDNS and external-dns's engine, and the clients.\n", processes)
	return s, nil
}

func newDemo(cfg config, out io.Writer) *demo {
	return &demo{cfg: cfg, con: newConsole(out), clusterOf: map[netip.Addr]string{}, traefik: map[string]*testbed.Traefik{}}
}

// start starts the fleet and what the demo plays on it, and waits until it is steady:
// cluster1 serves the clients, the agents report and the policy is Ready. It returns
// the function that stops everything it started, to be called with the error the run
// ends with; on an error of its own it has stopped everything already.
func (d *demo) start(ctx context.Context, errOut io.Writer) (_ func(error), err error) {
	if err := testbed.CheckOCMHubPorts(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "traffic-migration-demo-")
	if err != nil {
		return nil, err
	}
	d.parts, d.stopParts = context.WithCancel(ctx)
	// stop is not the named result: a failed start returns nil, and the deferred call
	// below must still reach it.
	stop := func(err error) {
		d.stopOwnParts()
		failed := err != nil && ctx.Err() == nil // not interrupted
		if d.bed != nil {
			if failed {
				d.bed.DumpLogs(errOut, 8192)
			}
			d.bed.Stop()
		}
		if failed {
			fmt.Fprintf(errOut, "the programs' data and logs are kept in %s\n", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
		if ctx.Err() != nil {
			fmt.Fprintln(errOut, "interrupted: stopped everything the demo started")
		}
	}
	defer func() {
		if err != nil {
			stop(err)
		}
	}()
	if err := d.startFleet(ctx, dir); err != nil {
		return nil, err
	}
	if err := d.startPlayers(ctx); err != nil {
		return nil, err
	}
	if err := d.waitSteady(ctx); err != nil {
		return nil, err
	}
	return stop, nil
}

// startFleet starts the test bed's programs: the clusters and Prometheus, the OCM hub,
// the klusterlets (joined with clusteradm), and traffic-migration (installed from
// manifests/, enabled with clusteradm); then it creates what the fleet administrator
// has before the migration.
func (d *demo) startFleet(ctx context.Context, dir string) error {
	images, err := nodeImages()
	if err != nil {
		return err
	}
	d.con.step("starting the test bed: etcd, the hub and two spoke kube-apiservers, a node for each (containerd, kubelet, kube-proxy), importing the images built here: %s",
		strings.Join(images.refs, ", "))
	d.bed, err = testbed.New(ctx, testbed.Options{
		Spokes:     []string{cluster1, cluster2},
		Dir:        dir,
		Prometheus: &testbed.PrometheusOptions{RemoteWriteReceiver: true},
		Nodes:      &testbed.NodeOptions{Clusters: []string{"hub", cluster1, cluster2}, Images: images.archives},
	})
	if err != nil {
		return fmt.Errorf("start the test bed: %w", err)
	}
	d.spokes = map[string]gatewayclient.Interface{}
	for _, c := range []string{cluster1, cluster2} {
		var err error
		if d.spokes[c], err = gatewayclient.NewForConfig(d.bed.Spokes[c].Config); err != nil {
			return err
		}
		// What a spoke's platform team does before any Gateway arrives.
		d.traefik[c], err = d.bed.PrepareGatewaySpoke(ctx, c, testbed.GatewaySpokeOptions{
			Namespace: namespace, Backend: backendName, ClusterLabels: map[string]string{clusterLabel: c}})
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		ip, err := netip.ParseAddr(d.traefik[c].Address)
		if err != nil {
			return fmt.Errorf("the address of %s's node: %w", c, err)
		}
		d.clusterOf[ip] = c
		d.con.step("%s: Traefik %s runs on its node (%s): web entry point :%d, metrics :%d; GatewayClass %s; backend %s/%s; a Prometheus agent scrapes Traefik and remote-writes to the hub's Prometheus (%s) with cluster=%s",
			c, testbed.Getenv(testbed.TraefikImageEnv), d.traefik[c].Address, d.traefik[c].WebPort(), d.traefik[c].MetricsPort,
			testbed.TraefikGatewayClass, namespace, backendName, d.bed.Prometheus.URL, c)
	}

	if err := d.bed.StartOCMControlPlane(ctx, true); err != nil {
		return err
	}
	d.con.step("OCM hub running: registration controller, add-on manager and conversion webhook, placement controller, work manager (ManifestWorkReplicaSet)")
	if err := testbed.InstallDNSEndpointCRD(ctx, d.bed.Hub.Config); err != nil {
		return fmt.Errorf("install external-dns's DNSEndpoint CRD on the hub: %w", err)
	}
	d.con.step("external-dns's DNSEndpoint CRD (externaldns.k8s.io/v1alpha1) installed on the hub, as with an external-dns that reads DNSEndpoints (--source=crd)")
	if _, err := d.bed.JoinSpokes(ctx, cluster1, cluster2); err != nil {
		return fmt.Errorf("join the spokes: %w", err)
	}
	d.con.step("%s and %s joined with clusteradm and accepted; their registration and work agents run", cluster1, cluster2)

	manifests, err := testbed.ManifestsDir()
	if err != nil {
		return err
	}
	if _, err := testbed.ApplyKustomization(ctx, d.bed.Hub.Config, manifests,
		// The manager may ask the bed's CoreDNS, at a private address.
		testbed.ManagerArgs("--dns-nameserver-allowlist="+d.bed.ListenHost())); err != nil {
		return fmt.Errorf("install traffic-migration: %w", err)
	}
	for _, name := range []string{managerDeployment, addonManagerDeployment} {
		if err := d.bed.Hub.WaitDeploymentAvailable(ctx, managerNamespace, name); err != nil {
			return fmt.Errorf("start the traffic-migration manager (%s): %w", name, err)
		}
	}
	d.con.step("traffic-migration installed from manifests/ (server-side apply); on the hub's node, ready: its policy controllers as a pod of Deployment %s/%s, and the add-on manager that deploys the agents as one of %s, each under its own ServiceAccount", managerNamespace, managerDeployment, addonManagerDeployment)
	enable := []string{"addon", "enable", "--names", trafficv1alpha1.AddonName, "--clusters", cluster1 + "," + cluster2}
	if _, err := d.bed.Clusteradm(ctx, enable...); err != nil {
		return err
	}
	d.con.step("$ clusteradm %s", strings.Join(enable, " "))

	if d.hub, err = fixture.NewHubClients(d.bed.Hub.Config); err != nil {
		return err
	}
	// DNS before the policy: the policy asks its CoreDNS, the zone's authoritative
	// server, whether it let go of a cluster (spec.dns.verify.nameservers).
	if d.dns, err = startDNS(ctx, d.bed); err != nil {
		return err
	}
	d.con.step("CoreDNS serves %s at %s from the bed's etcd, where external-dns's engine (its planner, TXT registry and CoreDNS provider) writes the records of the DNSEndpoints in %s, as external-dns --source=crd --provider=coredns does",
		dnsZone, d.dns.Addr(), namespace)
	policy := policyObject(d.cfg, d.dns.Addr())
	if err := prepareHub(ctx, d.hub, policy, d.bed.Prometheus.URL); err != nil {
		return err
	}
	d.con.step("on the hub: ManagedClusterSet %s bound to %s, Placement %s (region=%s), Secret %s, ManifestWorkReplicaSet %s (the Gateway %s and HTTPRoute %s; follows %s), and the policy:",
		clusterSetName, namespace, placementName, regions[cluster1], secretName, mwrsName, gatewayName, routeName, proxyName)
	printPolicy(d.con, policy)
	return nil
}

// startPlayers waits until the DNS, real DNS software run by the test bed (CoreDNS,
// written by external-dns's engine from the policy's DNSEndpoint; startFleet started
// it), answers with cluster1's Gateway (Traefik's address on cluster1's node), which
// the manager publishes once cluster1's agent reports it Programmed, and starts the
// clients.
func (d *demo) startPlayers(ctx context.Context) error {
	cluster1IP := netip.MustParseAddr(d.traefik[cluster1].Address)
	var answer []netip.Addr
	err := waitFor(ctx, "CoreDNS to answer "+gatewayHostname+" with cluster1's Gateway", func(ctx context.Context) error {
		got, err := d.dns.Lookup(ctx, gatewayHostname)
		if err != nil {
			return err
		}
		if answer = got; len(answer) != 1 || answer[0] != cluster1IP {
			return fmt.Errorf("CoreDNS answers %v", answer)
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.con.step("the manager published cluster1's Gateway address in DNSEndpoint %s/%s (cluster1's agent reports it Programmed); external-dns's engine applied it: CoreDNS answers %s with %s",
		namespace, policyName, gatewayHostname, describeAddrs(answer, d.clusterOf))

	ttls := clients.TTLs(d.cfg.clients, d.cfg.shortTTL, d.cfg.longTTL, d.cfg.longClients)
	d.clients = clients.NewFleet(clients.Config{Hostname: gatewayHostname, TTLs: ttls, Every: d.cfg.requestEvery,
		Lookup: d.lookup, Port: testbed.TraefikWebPort, Seed: d.cfg.seed})
	if err := d.clients.Start(); err != nil {
		return err
	}
	d.con.step("%d clients send %.0f requests/s each to http://%s:%d/, resolving it through CoreDNS at %s and keeping the answer for their own TTL (whatever the record's %s): %s, and %s for %d of them",
		d.cfg.clients, float64(time.Second)/float64(d.cfg.requestEvery), gatewayHostname, testbed.TraefikWebPort, d.dns.Addr(),
		dnsRecordTTL, d.cfg.shortTTL, d.cfg.longTTL, d.cfg.longClients)
	return nil
}

// lookup asks CoreDNS for the gateway's A records, with Go's own DNS client, as the
// clients resolve it.
func (d *demo) lookup(ctx context.Context) ([]netip.Addr, error) {
	addrs, err := d.dns.Resolver().LookupNetIP(ctx, "ip4", gatewayHostname+".")
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, err
}

// waitSteady waits until the fleet is ready for the move and the clients have sent to
// cluster1 for the warm-up.
func (d *demo) waitSteady(ctx context.Context) error {
	warmedUp := time.Now().Add(d.cfg.warmUp)
	for _, c := range []string{cluster1, cluster2} {
		if err := d.bed.Spokes[c].WaitDeploymentAvailable(ctx, testbed.AgentAddonNamespace, agentDeployment); err != nil {
			return fmt.Errorf("start the traffic-migration agent of %s: %w", c, err)
		}
	}
	d.con.step("traffic-migration agents running on %s and %s: pods of the Deployment %s/%s that the add-on put there through ManifestWork, with the hub kubeconfig OCM wrote to each spoke",
		cluster1, cluster2, testbed.AgentAddonNamespace, agentDeployment)
	d.con.step("waiting for OCM to mark the add-on Available on both clusters (from the agents' Deployments, as the work agents report them) and for the policy to be Ready")
	if err := waitForFleet(ctx, d.con, d.hub); err != nil {
		return err
	}
	return sleep(ctx, time.Until(warmedUp))
}

// migrate shows the steady state for a moment, moves the real Placement, and shows the
// migration until cluster1 left the proxy and its gateway is gone, and the clients
// have sent for a little longer.
func (d *demo) migrate(ctx context.Context) (*view, time.Time, error) {
	v, err := newView(d.con, d.hub, d.spokes, d.bed.Prometheus.URL, d.clients, d.clusterOf, d.lookup, d.cfg)
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := v.start(d.parts); err != nil {
		return nil, time.Time{}, err
	}
	explainMove(d.con, d.cfg)
	moveAt := time.Now().Add(lead)
	d.con.scheduleMove(moveAt)
	v.header()
	d.goPart(v.run)
	if err := sleep(ctx, time.Until(moveAt)); err != nil {
		return nil, time.Time{}, err
	}
	if err := movePlacement(ctx, d.hub, regions[cluster2]); err != nil {
		return nil, time.Time{}, fmt.Errorf("move the Placement: %w", err)
	}
	v.moved(time.Now())
	d.con.event("the administrator moved Placement %s from region=%s (%s) to region=%s (%s)", placementName, regions[cluster1], cluster1, regions[cluster2], cluster2)

	select {
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	case <-time.After(d.cfg.migrationTimeout):
		return nil, time.Time{}, fmt.Errorf("cluster1 was not removed within %s of the move", d.cfg.migrationTimeout)
	case <-v.finished():
	}
	// The view saw the Gateway go; Traefik on cluster1 forgets its route.
	err = waitFor(ctx, "Traefik on cluster1 to route nothing for "+gatewayHostname, func(ctx context.Context) error {
		by, err := probeGateway(ctx, d.traefik[cluster1].WebAddress())
		if err == nil && by != "" {
			err = fmt.Errorf("the backend of %s still answers", by)
		}
		return err
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	d.con.step("cluster1's Gateway is gone and its Traefik routes nothing for %s; the clients send for %s more", gatewayHostname, d.cfg.settle)
	return v, moveAt, sleep(ctx, d.cfg.settle)
}

// goPart runs one of the demo's components until its parts are stopped.
func (d *demo) goPart(run func(context.Context)) {
	d.partsDone.Add(1)
	go func() {
		defer d.partsDone.Done()
		run(d.parts)
	}()
}

// stopOwnParts stops the clients (their requests in flight end first) and the demo's
// components; the bed stops the DNS. It is safe to call more than once.
func (d *demo) stopOwnParts() {
	if d.clients != nil {
		d.clients.Halt()
	}
	d.stopParts()
	d.partsDone.Wait()
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// summarize reads the outcome from the policy's status and the fleet.
func summarize(ctx context.Context, hub *fixture.HubClients, spokes map[string]gatewayclient.Interface, v *view, moveAt time.Time, fleet *clients.Fleet, cfg config) (*summary, error) {
	s := &summary{
		Form: cfg.name, Clients: cfg.clients, MinDrainDuration: cfg.minDrainDuration, MaxPercent: cfg.maxPercent,
		ChecksNeeded: cfg.consecutiveSuccesses, Requests: fleet.Counts(),
	}
	removedAt, goneAt, shareSeen := v.removal()
	s.RemovedAfter, s.GatewayGoneAfter, s.ShareSeen = removedAt.Sub(moveAt), goneAt.Sub(moveAt), shareSeen
	s.Timeline = v.timeline(moveAt)
	s.DNSLookups = v.lookupFailures()
	s.DNSTTL = dnsRecordTTL
	s.LongestClientTTL = slices.Max(clients.TTLs(cfg.clients, cfg.shortTTL, cfg.longTTL, cfg.longClients))

	policy, err := hub.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, policyName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the policy: %w", err)
	}
	proxy, err := fixture.DecisionClusters(ctx, hub.Cluster, namespace, proxyName)
	if err != nil {
		return nil, err
	}
	gateway := map[string]bool{}
	for _, c := range []string{cluster1, cluster2} {
		_, err := spokes[c].GatewayV1().Gateways(namespace).Get(ctx, gatewayName, metav1.GetOptions{})
		gateway[c] = err == nil
	}
	for _, row := range policy.Status.Clusters {
		if row.Name == cluster1 && row.Phase == trafficv1alpha1.ClusterRemoved && row.RemovalTime != nil && row.DrainStartTime != nil {
			s.Cluster1Removed = !gateway[cluster1] && len(proxy) == 1 && proxy[0] == cluster2
			s.DrainDuration = row.RemovalTime.Sub(row.DrainStartTime.Time)
			s.ShareAtRemoval, s.ChecksPassed, s.RemovalMessage = row.LastValue, row.ConsecutiveSuccesses, row.Message
			if row.DNSWithdrawalTime != nil {
				s.Timeline.DNSWithdrawn = milestone{After: row.DNSWithdrawalTime.Sub(moveAt), Seen: true}
				s.RemovedAfterDNS = row.RemovalTime.Sub(row.DNSWithdrawalTime.Time)
			}
		}
	}
	s.Cluster2Kept = gateway[cluster2] && len(proxy) == 1 && proxy[0] == cluster2
	return s, nil
}

// waitForFleet waits until the fleet is in its steady state before the move: both
// agents available and reporting the Gateway (cluster1's ready), the policy Ready with
// cluster1 Active, and Prometheus seeing all the traffic on cluster1.
func waitForFleet(ctx context.Context, con *console, hub *fixture.HubClients) error {
	gatewayCondition := trafficv1alpha1.GatewayConditionType(namespace, gatewayName)
	for _, c := range []string{cluster1, cluster2} {
		err := waitFor(ctx, "the add-on of "+c+" to be Available with the agent's report", func(ctx context.Context) error {
			a, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(c).Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
				return fmt.Errorf("ManagedClusterAddOn %s/%s is not Available", c, a.Name)
			}
			if !meta.IsStatusConditionTrue(a.Status.Conditions, trafficv1alpha1.ConditionClusterLabels) {
				return fmt.Errorf("the agent of %s has not reported its labels", c)
			}
			if c == cluster1 && !meta.IsStatusConditionTrue(a.Status.Conditions, gatewayCondition) {
				return fmt.Errorf("the agent of %s does not report the Gateway ready", c)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	con.step("ManagedClusterAddOns Available (the agents' Deployments are available), and the agents report: cluster1's Gateway Programmed, cluster2 has none yet")
	err := waitFor(ctx, "the policy to be Ready with cluster1 Active", func(ctx context.Context) error {
		p, err := hub.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, policyName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionReady) {
			return fmt.Errorf("policy not Ready: %+v", p.Status.Conditions)
		}
		if len(p.Status.Clusters) != 1 || p.Status.Clusters[0].Name != cluster1 || p.Status.Clusters[0].Phase != trafficv1alpha1.ClusterActive {
			return fmt.Errorf("policy rows: %+v", p.Status.Clusters)
		}
		return nil
	})
	if err != nil {
		return err
	}
	con.step("policy %s Ready: the proxy Placement %s lists cluster1, which is Active", policyName, proxyName)
	return nil
}

// waitFor polls check until it returns nil, for at most readyTimeout.
func waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last: %v)", what, err, last)
	}
	return nil
}

// probeGateway sends one request for the demo's name to a Gateway's address
// (host:port) and returns the cluster whose backend served it: none when Traefik
// answered itself, having no route for the name.
func probeGateway(ctx context.Context, address string) (servedBy string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/", nil)
	if err != nil {
		return "", err
	}
	req.Host = gatewayHostname
	resp, err := probeClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header.Get(clients.ServedByHeader), nil
}

// probeClient reaches the nodes' addresses directly, through no proxy of the
// environment.
var probeClient = &http.Client{Timeout: clients.RequestTimeout, Transport: &http.Transport{Proxy: nil}}

// intro says what the demo runs.
func intro(con *console, cfg config) {
	con.paragraph("", "", fmt.Sprintf("traffic-migration demo (%s form): move a Gateway from cluster1 to cluster2 of an OCM fleet and drop no request.", cfg.name))
	con.text("", "\nWhat runs, on this machine (no cluster of your own):")
	con.paragraph("  - ", "    ", "the test bed's real programs, as local processes: etcd, a hub and two spoke kube-apiservers, Prometheus 3, "+
		"an OCM hub (registration, placement, add-on manager, work manager) and, on each spoke, "+
		"OCM's registration and work agents, joined with clusteradm;")
	con.paragraph("  - ", "    ", "a real node for each cluster, in a network namespace of its own: containerd, runc, "+
		"the kubelet and kube-proxy, with the cluster's kube-scheduler and kube-controller-manager;")
	con.paragraph("  - ", "    ", "traffic-migration, as pods from the image that make image built: the manager on the hub "+
		"(installed from manifests/) and the agent of each spoke (put there by the add-on through ManifestWork, "+
		"with the hub kubeconfig that OCM wrote to the spoke);")
	con.paragraph("  - ", "    ", "on each spoke's node, as pods from images built here: Traefik ("+testbed.Getenv(testbed.TraefikImageEnv)+", the Gateway API "+
		"implementation: it programs the Gateway, routes its HTTPRoute to the backend, and counts every request in "+
		requestsMetric+"), a backend, and a Prometheus agent that scrapes Traefik and remote-writes to the hub's "+
		"Prometheus with the external label cluster=<cluster name>: the policy's check reads what the spokes wrote;")
	con.paragraph("  - ", "    ", "the DNS, real DNS software run by the test bed: CoreDNS serving "+dnsZone+" from etcd, written by "+
		"external-dns's own engine (its planner, TXT registry and CoreDNS provider) from the policy's DNSEndpoint, which "+
		"the traffic-migration manager publishes for the REAL Placement (spec.dns: the addresses of the Gateways its "+
		"clusters' agents report Programmed);")
	con.paragraph("  - ", "    ", fmt.Sprintf("played by the demo: %d clients that resolve %s through CoreDNS, keep its "+
		"answer for their own TTL and send every request through Traefik.", cfg.clients, gatewayHostname))
	con.text("", "")
}

// printPolicy prints the policy as the administrator wrote it.
func printPolicy(con *console, policy *trafficv1alpha1.TrafficMigrationPolicy) {
	p := policy.DeepCopy()
	p.Status = trafficv1alpha1.TrafficMigrationPolicyStatus{}
	b, err := yaml.Marshal(struct {
		APIVersion string                                     `json:"apiVersion"`
		Kind       string                                     `json:"kind"`
		Metadata   map[string]string                          `json:"metadata"`
		Spec       trafficv1alpha1.TrafficMigrationPolicySpec `json:"spec"`
	}{p.APIVersion, p.Kind, map[string]string{"name": p.Name, "namespace": p.Namespace}, p.Spec})
	if err != nil {
		con.step("(cannot print the policy: %v)", err)
		return
	}
	con.text("          ", string(b))
}

// explainMove says what is about to happen.
func explainMove(con *console, cfg config) {
	con.text("", "")
	con.paragraph("", "", fmt.Sprintf("The migration. The Gateway follows the PROXY Placement %s: the "+
		"ManifestWorkReplicaSet puts it on the clusters the proxy lists. The DNS follows the REAL "+
		"Placement %s: once the Placement moves to cluster2, the manager keeps cluster1's address in "+
		"the DNSEndpoint until cluster2's agent reports its Gateway Programmed (make-before-break), then "+
		"publishes cluster2's only, and external-dns's engine writes it into CoreDNS; but each client "+
		"keeps cluster1's address until its own TTL ends. The proxy keeps cluster1 until the policy's "+
		"check passes %d times in a row, at least %s apart (cluster1 carries at most %g%% of the "+
		"traffic over the last %s), and for at least %s after DNS let go of it (never less than the "+
		"records' TTL, %s). A client that still holds cluster1's address when its gateway is gone "+
		"resolves again and retries once.",
		proxyName, placementName, cfg.consecutiveSuccesses, cfg.interval, cfg.maxPercent, cfg.window, cfg.minDrainDuration, dnsRecordTTL))
	con.paragraph("", "", "Every second, per cluster: its share of the traffic and requests/s as "+
		"Prometheus computes them; how many clients' DNS caches hold its address; the policy's phase, "+
		"last check, passed checks in a row and time to the next check; whether the proxy lists it; "+
		"whether its Gateway exists.")
	con.text("", "")
}
