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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterlisters "open-cluster-management.io/api/client/cluster/listers/cluster/v1beta1"
	workinformers "open-cluster-management.io/api/client/work/informers/externalversions"
	worklisters "open-cluster-management.io/api/client/work/listers/work/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
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
	policy      *trafficv1alpha1.TrafficMigrationPolicy
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
// the hub, the Gateways on the spokes) and prints every change as an event, as it
// happens. Every printEvery it prints one line per cluster: its share of the traffic
// and requests per second as Prometheus computes them, how many clients' DNS caches
// hold its address, the policy's phase, last check, run of passed checks and next
// check, and whether the proxy lists it and its Gateway exists.
type view struct {
	con       *console
	prom      promv1.API
	clients   *clientFleet
	clusterOf map[netip.Addr]string
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
	done      chan struct{}
}

func newView(con *console, hub *hubClients, spokes map[string]gatewayclient.Interface, prometheusURL string,
	clients *clientFleet, clusterOf map[netip.Addr]string, cfg config) (*view, error) {
	c, err := promapi.NewClient(promapi.Config{Address: prometheusURL})
	if err != nil {
		return nil, err
	}
	v := &view{con: con, prom: promv1.NewAPI(c), clients: clients, clusterOf: clusterOf, cfg: cfg, done: make(chan struct{}),
		hubInformers:     clusterinformers.NewSharedInformerFactoryWithOptions(hub.cluster, 0, clusterinformers.WithNamespace(namespace)),
		workInformers:    workinformers.NewSharedInformerFactory(hub.work, 0),
		trafficInformers: trafficinformers.NewSharedInformerFactoryWithOptions(hub.traffic, 0, trafficinformers.WithNamespace(namespace)),
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

// run prints a line per cluster every printEvery until ctx ends.
func (v *view) run(ctx context.Context) {
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
	st := &fleetState{works: map[string]bool{}, gateways: map[string]bool{}}
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
		if _, err := v.gateways[cluster].Gateways(namespace).Get(gatewayName); err == nil {
			st.gateways[cluster] = true
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
	var clusters []string
	for _, d := range ds {
		for _, cd := range d.Status.Decisions {
			clusters = append(clusters, cd.ClusterName)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters)
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
		v.con.event("real Placement %s now selects %s (the DNS follows it)", placementName, list(st.real))
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
	for addr, n := range v.clients.holding() {
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
