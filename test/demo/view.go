// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterlisters "open-cluster-management.io/api/client/cluster/listers/cluster/v1beta1"
	workinformers "open-cluster-management.io/api/client/work/informers/externalversions"
	worklisters "open-cluster-management.io/api/client/work/listers/work/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
	"open-cluster-management.io/traffic-migration/test/clients"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

const (
	// printEvery is how often the view prints a line per cluster.
	printEvery = time.Second
	// promQueryTimeout bounds one query of the view.
	promQueryTimeout = 2 * time.Second
)

// fleetState is what the view knows of the fleet at one moment.
type fleetState struct {
	real, proxy []string
	works       map[string]bool // the ManifestWorkReplicaSet's ManifestWork exists and is not deleted, by cluster
	gateways    map[string]bool // the Gateway exists on the spoke, by cluster
	// programmed are the addresses of the Gateway that Traefik has Programmed for its
	// current generation, by cluster; none while it is not.
	programmed map[string][]string
	policy     *trafficv1alpha1.TrafficMigrationPolicy
}

func (s *fleetState) row(cluster string) *trafficv1alpha1.ClusterStatus {
	if s.policy == nil {
		return nil
	}
	for i := range s.policy.Status.Clusters {
		if s.policy.Status.Clusters[i].Name == cluster {
			return &s.policy.Status.Clusters[i]
		}
	}
	return nil
}

// trafficSample is what the hub's Prometheus computes from the spokes' Traefik
// counters, by cluster.
type trafficSample struct {
	share map[string]float64 // percent
	rate  map[string]float64 // requests per second
}

// view watches the fleet (the Placements' decisions, the ManifestWorks, the policy on
// the hub, the Gateways on the spokes), polls what CoreDNS answers for the gateway's
// name, and prints every change as an event, as it happens. Every printEvery it prints
// one line per cluster: its share of the traffic and requests per second as
// Prometheus computes them, how many clients' DNS caches hold its address, the
// policy's phase, last check, run of passed checks and next check, and whether the
// proxy lists it and its Gateway exists.
type view struct {
	con       *console
	prom      promv1.API
	clients   *clients.Fleet
	clusterOf map[netip.Addr]string
	lookup    clients.LookupFunc // asks CoreDNS
	cfg       config

	hubInformers     clusterinformers.SharedInformerFactory
	workInformers    workinformers.SharedInformerFactory
	trafficInformers trafficinformers.SharedInformerFactory
	gatewayInformers map[string]gatewayinformers.SharedInformerFactory
	decisions        clusterlisters.PlacementDecisionLister
	works            worklisters.ManifestWorkLister
	policies         trafficlisters.TrafficMigrationPolicyLister
	gateways         map[string]gatewaylisters.GatewayLister
	synced           []cache.InformerSynced

	mu        sync.Mutex
	watching  bool // the watches have synced: changes from now on are events
	last      *fleetState
	removedAt time.Time // when the proxy was first seen without cluster1
	goneAt    time.Time // when cluster1's Gateway was first seen gone after removal
	shareSeen float64   // cluster1's share in the last line before its removal
	// The move's milestones, as the view saw them (zero: not yet).
	editedAt     time.Time                    // the administrator's edit of the real Placement
	programmedAt time.Time                    // cluster2's Gateway first seen Programmed after the move
	dnsMovedAt   time.Time                    // CoreDNS first answered cluster2's address only
	firstPass    *trafficv1alpha1.CheckRecord // cluster1's first passing check after the move
	answer       []netip.Addr                 // what CoreDNS answered last
	polled       bool                         // answer holds a first answer
	dnsErr       string                       // the last lookup's error, reported once
	dnsFailures  dnsFailures                  // the lookups that got no address
	done         chan struct{}
}

func newView(con *console, hub *fixture.HubClients, spokes map[string]gatewayclient.Interface, prometheusURL string,
	fleet *clients.Fleet, clusterOf map[netip.Addr]string, lookup clients.LookupFunc, cfg config) (*view, error) {
	c, err := promapi.NewClient(promapi.Config{Address: prometheusURL})
	if err != nil {
		return nil, err
	}
	v := &view{con: con, prom: promv1.NewAPI(c), clients: fleet, clusterOf: clusterOf, lookup: lookup, cfg: cfg, done: make(chan struct{}),
		hubInformers:     clusterinformers.NewSharedInformerFactoryWithOptions(hub.Cluster, 0, clusterinformers.WithNamespace(namespace)),
		workInformers:    workinformers.NewSharedInformerFactory(hub.Work, 0),
		trafficInformers: trafficinformers.NewSharedInformerFactoryWithOptions(hub.Traffic, 0, trafficinformers.WithNamespace(namespace)),
		gatewayInformers: map[string]gatewayinformers.SharedInformerFactory{},
		gateways:         map[string]gatewaylisters.GatewayLister{},
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { v.changed() },
		UpdateFunc: func(any, any) { v.changed() },
		DeleteFunc: func(any) { v.changed() },
	}
	informers := []cache.SharedIndexInformer{
		v.hubInformers.Cluster().V1beta1().PlacementDecisions().Informer(),
		v.workInformers.Work().V1().ManifestWorks().Informer(),
		v.trafficInformers.Traffic().V1alpha1().TrafficMigrationPolicies().Informer(),
	}
	v.decisions = v.hubInformers.Cluster().V1beta1().PlacementDecisions().Lister()
	v.works = v.workInformers.Work().V1().ManifestWorks().Lister()
	v.policies = v.trafficInformers.Traffic().V1alpha1().TrafficMigrationPolicies().Lister()
	for cluster, client := range spokes {
		f := gatewayinformers.NewSharedInformerFactoryWithOptions(client, 0, gatewayinformers.WithNamespace(namespace))
		v.gatewayInformers[cluster] = f
		v.gateways[cluster] = f.Gateway().V1().Gateways().Lister()
		informers = append(informers, f.Gateway().V1().Gateways().Informer())
	}
	for _, inf := range informers {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, err
		}
		v.synced = append(v.synced, inf.HasSynced)
	}
	return v, nil
}

// start starts watching; the fleet as it is then is the baseline of the events.
func (v *view) start(ctx context.Context) error {
	v.hubInformers.Start(ctx.Done())
	v.workInformers.Start(ctx.Done())
	v.trafficInformers.Start(ctx.Done())
	for _, f := range v.gatewayInformers {
		f.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), v.synced...) {
		return fmt.Errorf("the view's watches did not sync: %w", ctx.Err())
	}
	v.mu.Lock()
	v.watching = true
	v.mu.Unlock()
	v.changed()
	return nil
}

// header is printed once, above the lines.
func (v *view) header() {
	v.con.text("", fmt.Sprintf("%-8s %-9s %6s %7s %6s  %-8s %-12s %-6s %-5s %-5s %s",
		"time", "cluster", "share", "req/s", "cached", "phase", "last check", "checks", "next", "proxy", "Gateway"))
}

// run prints a line per cluster every printEvery, and polls CoreDNS every
// dnsPollEvery, until ctx ends.
func (v *view) run(ctx context.Context) {
	var polling sync.WaitGroup
	polling.Add(1)
	go func() {
		defer polling.Done()
		v.pollDNS(ctx)
	}()
	defer polling.Wait()
	tick := time.NewTicker(printEvery)
	defer tick.Stop()
	for {
		v.print(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// state reads the fleet's state from the watches.
func (v *view) state() *fleetState {
	st := &fleetState{works: map[string]bool{}, gateways: map[string]bool{}, programmed: map[string][]string{}}
	st.real = v.clustersOf(placementName)
	st.proxy = v.clustersOf(proxyName)
	if p, err := v.policies.TrafficMigrationPolicies(namespace).Get(policyName); err == nil {
		st.policy = p
	}
	for _, cluster := range []string{cluster1, cluster2} {
		// A deleted ManifestWork stays until the work agent has deleted what it applied.
		if w, err := v.works.ManifestWorks(cluster).Get(mwrsName); err == nil && w.DeletionTimestamp == nil {
			st.works[cluster] = true
		}
		if gw, err := v.gateways[cluster].Gateways(namespace).Get(gatewayName); err == nil {
			st.gateways[cluster] = true
			st.programmed[cluster] = programmedAddresses(gw)
		}
	}
	return st
}

// clustersOf lists the clusters in a Placement's decisions, sorted.
func (v *view) clustersOf(placement string) []string {
	ds, err := v.decisions.PlacementDecisions(namespace).List(labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement}))
	if err != nil {
		return nil
	}
	return proxy.Clusters(ds)
}

// changed reports what changed since the last state, and notes the removal.
func (v *view) changed() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.watching {
		return // the watches' first lists: the baseline is taken once they are all in
	}
	st := v.state()
	old := v.last
	v.last = st
	if old == nil {
		return
	}
	if !slices.Equal(old.real, st.real) {
		v.con.event("real Placement %s now selects %s (the manager's DNSEndpoint follows it, make-before-break)", placementName, list(st.real))
	}
	if !slices.Equal(old.proxy, st.proxy) {
		v.con.event("proxy Placement %s now lists %s (the ManifestWorkReplicaSet follows it)", proxyName, list(st.proxy))
	}
	for _, cluster := range []string{cluster1, cluster2} {
		if old.works[cluster] != st.works[cluster] {
			if st.works[cluster] {
				v.con.event("work manager created ManifestWork %s in namespace %s: the work agent of %s applies the Gateway", mwrsName, cluster, cluster)
			} else {
				v.con.event("work manager deleted ManifestWork %s in namespace %s: the work agent of %s deletes the Gateway, then the ManifestWork goes", mwrsName, cluster, cluster)
			}
		}
		if len(old.programmed[cluster]) == 0 && len(st.programmed[cluster]) > 0 {
			v.con.event("Traefik programmed %s's Gateway: its status.addresses %s (%s's agent reports it; the manager publishes the REAL Placement's Programmed clusters)",
				cluster, strings.Join(st.programmed[cluster], ", "), cluster)
		}
		oldRow, row := old.row(cluster), st.row(cluster)
		if row != nil && (oldRow == nil || oldRow.Phase != row.Phase) {
			from := "-"
			if oldRow != nil {
				from = string(oldRow.Phase)
			}
			msg := ""
			if row.Message != "" {
				msg = " (message: " + row.Message + ")"
			}
			v.con.event("policy: %s %s -> %s%s", cluster, from, row.Phase, msg)
		}
	}
	now := time.Now()
	if v.programmedAt.IsZero() && !v.editedAt.IsZero() && len(st.programmed[cluster2]) > 0 {
		v.programmedAt = now
	}
	if row := st.row(cluster1); row != nil && !v.editedAt.IsZero() {
		for _, h := range row.History {
			if h.Result == trafficv1alpha1.EvaluationPass && (v.firstPass == nil || h.Time.Before(&v.firstPass.Time)) {
				v.firstPass = h.DeepCopy()
			}
		}
	}
	if v.removedAt.IsZero() && v.con.sinceMove(now) > 0 && !slices.Contains(st.proxy, cluster1) && len(st.proxy) > 0 {
		v.removedAt = now
	}
	if !v.removedAt.IsZero() && v.goneAt.IsZero() && !st.gateways[cluster1] {
		v.goneAt = now
	}
	if !v.goneAt.IsZero() && st.gateways[cluster2] && slices.Equal(st.proxy, []string{cluster2}) {
		select {
		case <-v.done:
		default:
			close(v.done)
		}
	}
}

// maxDNSFailureSamples bounds the failed lookups the summary quotes.
const maxDNSFailureSamples = 3

// dnsFailures counts the view's lookups of the gateway's name that got no address: an
// error (NXDOMAIN, an empty answer, no answer) is a moment at which a client that
// resolved then would have failed, whatever the clients happened to do.
type dnsFailures struct {
	Count   int
	Samples []string
}

func (f *dnsFailures) add(at time.Time, err error) {
	f.Count++
	if len(f.Samples) < maxDNSFailureSamples {
		f.Samples = append(f.Samples, fmt.Sprintf("%s: %v", at.Format("15:04:05.000"), err))
	}
}

// lookupFailures returns the failed lookups so far.
func (v *view) lookupFailures() dnsFailures {
	v.mu.Lock()
	defer v.mu.Unlock()
	return dnsFailures{Count: v.dnsFailures.Count, Samples: slices.Clone(v.dnsFailures.Samples)}
}

// moved notes when the administrator edited the real Placement.
func (v *view) moved(at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.editedAt = at
}

// pollDNS asks CoreDNS for the gateway's name every dnsPollEvery until ctx ends,
// reports each change of its answer, and notes when, after the move, it first
// answered cluster2's address only.
func (v *view) pollDNS(ctx context.Context) {
	tick := time.NewTicker(dnsPollEvery)
	defer tick.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, clients.ResolveTimeout)
		addrs, err := v.lookup(lctx)
		cancel()
		now := time.Now()
		if ctx.Err() != nil {
			return
		}
		slices.SortFunc(addrs, netip.Addr.Compare)
		v.mu.Lock()
		if err == nil && len(addrs) == 0 {
			err = fmt.Errorf("CoreDNS answered no address for %s", gatewayHostname)
		}
		if err != nil {
			v.dnsFailures.add(now, err)
		}
		switch {
		case err != nil:
			if err.Error() != v.dnsErr {
				v.con.event("view: CoreDNS: %v", err)
			}
			v.dnsErr = err.Error()
		case !v.polled:
			v.answer, v.polled = addrs, true
		case !slices.Equal(addrs, v.answer):
			v.con.event("CoreDNS now answers %s with %s (was %s)", gatewayHostname, describeAddrs(addrs, v.clusterOf), describeAddrs(v.answer, v.clusterOf))
			v.answer, v.dnsErr = addrs, ""
		}
		if err == nil && v.dnsMovedAt.IsZero() && !v.editedAt.IsZero() && len(addrs) == 1 && v.clusterOf[addrs[0]] == cluster2 {
			v.dnsMovedAt = now
		}
		v.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// timeline is the move's milestones that the view saw, since moveAt.
func (v *view) timeline(moveAt time.Time) timeline {
	v.mu.Lock()
	defer v.mu.Unlock()
	since := func(t time.Time) milestone {
		if t.IsZero() {
			return milestone{}
		}
		return milestone{After: t.Sub(moveAt), Seen: true}
	}
	tl := timeline{Edited: since(v.editedAt), Programmed: since(v.programmedAt), DNSMoved: since(v.dnsMovedAt)}
	if v.firstPass != nil {
		tl.UnderThreshold, tl.UnderThresholdValue = since(v.firstPass.Time.Time), v.firstPass.Value
	}
	return tl
}

// programmedAddresses are the addresses of a Gateway that Traefik has Programmed for
// its current generation, from its status; none while it is not.
func programmedAddresses(gw *gatewayv1.Gateway) []string {
	c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	if gw.DeletionTimestamp != nil || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
		return nil
	}
	out := make([]string, 0, len(gw.Status.Addresses))
	for _, a := range gw.Status.Addresses {
		out = append(out, a.Value)
	}
	return out
}

// finished is closed once cluster1 left the proxy, its Gateway is gone and cluster2's
// Gateway is there.
func (v *view) finished() <-chan struct{} { return v.done }

// print prints one line per cluster.
func (v *view) print(ctx context.Context) {
	sample, err := v.query(ctx)
	if err != nil && ctx.Err() == nil {
		v.con.event("view: Prometheus: %v", err)
	}
	v.mu.Lock()
	st := v.last
	v.mu.Unlock()
	if st == nil {
		return
	}
	holding := map[string]int{}
	for addr, n := range v.clients.Holding() {
		holding[v.clusterOf[addr]] += n
	}
	var lines []string
	for i, cluster := range []string{cluster1, cluster2} {
		share, rate := "-", "-"
		if s, ok := sample.share[cluster]; ok {
			share = fmt.Sprintf("%.1f%%", s)
		}
		if r, ok := sample.rate[cluster]; ok {
			rate = fmt.Sprintf("%.1f", r)
		}
		phase, last, checks, next := "-", "-", "-", "-"
		if row := st.row(cluster); row != nil {
			phase = string(row.Phase)
			if row.LastResult != "" {
				last = fmt.Sprintf("%s %s", percent(row.LastValue), row.LastResult)
			}
			if row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld {
				checks = fmt.Sprintf("%d/%d", row.ConsecutiveSuccesses, st.policy.Spec.ConsecutiveSuccesses)
				if row.NextEvaluationTime != nil {
					next = fmt.Sprintf("%.1fs", max(0, time.Until(row.NextEvaluationTime.Time).Seconds()))
				}
			}
		}
		stamp := ""
		if i == 0 {
			stamp = fmt.Sprintf("t%+.0fs", v.con.sinceMove(time.Now()).Round(time.Second).Seconds())
		}
		lines = append(lines, fmt.Sprintf("%-8s %-9s %6s %7s %6d  %-8s %-12s %-6s %-5s %-5s %s",
			stamp, cluster, share, rate, holding[cluster], phase, last, checks, next, yesNo(slices.Contains(st.proxy, cluster)), yesNo(st.gateways[cluster])))
	}
	v.con.text("", strings.Join(lines, "\n"))

	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := sample.share[cluster1]; ok && v.removedAt.IsZero() {
		v.shareSeen = s
	}
}

// query asks Prometheus for each cluster's share of the Traefik traffic and its
// request rate, over the policy's window.
func (v *view) query(ctx context.Context) (trafficSample, error) {
	sample := trafficSample{share: map[string]float64{}, rate: map[string]float64{}}
	selector := fmt.Sprintf("%s{%s}", requestsMetric, requestsFilter)
	rate := fmt.Sprintf("sum by (%s) (rate(%s[%s]))", clusterLabel, selector, v.cfg.window)
	share := fmt.Sprintf("100 * %s / scalar(sum(rate(%s[%s])))", rate, selector, v.cfg.window)
	for _, q := range []struct {
		query string
		into  map[string]float64
	}{{rate, sample.rate}, {share, sample.share}} {
		qctx, cancel := context.WithTimeout(ctx, promQueryTimeout)
		val, _, err := v.prom.Query(qctx, q.query, time.Now())
		cancel()
		if err != nil {
			return sample, err
		}
		vec, ok := val.(model.Vector)
		if !ok {
			return sample, fmt.Errorf("query %s returned a %s, not a vector", q.query, val.Type())
		}
		for _, s := range vec {
			q.into[string(s.Metric[model.LabelName(clusterLabel)])] = float64(s.Value)
		}
	}
	return sample, nil
}

// removal says when the proxy dropped cluster1 and its Gateway went, as the view saw
// it, and cluster1's share in the last line printed before.
func (v *view) removal() (removedAt, goneAt time.Time, shareSeen float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.removedAt, v.goneAt, v.shareSeen
}

func list(clusters []string) string {
	if len(clusters) == 0 {
		return "no cluster"
	}
	return strings.Join(clusters, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// percent formats a value that the policy's check returned (a percentage).
func percent(value string) string {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return value
	}
	return fmt.Sprintf("%.1f%%", f)
}
