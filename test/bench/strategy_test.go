// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/clients"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// strategySizes are the knobs of the strategy benchmark: the clients, as the demo
// models them, and the timings of the policy and of the fixed timers.
type strategySizes struct {
	Clients             int        `json:"clients"`
	RequestEverySeconds float64    `json:"requestEverySeconds"`
	ShortTTLSeconds     [2]float64 `json:"shortTTLSeconds"`
	LongTTLSeconds      [2]float64 `json:"longTTLSeconds"`
	LongClients         int        `json:"longClients"`
	Window              string     `json:"window"`
	IntervalSeconds     float64    `json:"intervalSeconds"`
	Successes           int32      `json:"consecutiveSuccesses"`
	MinDrainSeconds     float64    `json:"minDrainSeconds"`
	// The fixed timers: one shorter than the longest TTL, one comfortably longer.
	ShortTimerSeconds float64 `json:"shortTimerSeconds"`
	LongTimerSeconds  float64 `json:"longTimerSeconds"`
	Seed              uint64  `json:"seed"`
}

// A client of the demo's model: it keeps the DNS answer for its TTL whatever the
// record says, so after the move it sends to the old cluster until its cached answer
// expires, at a moment of its TTL that depends on when it last resolved.
type modelClient struct {
	ttl      time.Duration
	switchAt time.Duration // after the move, when it first resolves the new cluster
	phase    time.Duration // its requests go at phase + k × every
}

// clientModel is the clients of one migration: the same for every strategy.
type clientModel struct {
	every   time.Duration
	clients []modelClient
}

// newClientModel takes the demo's clients (package clients spreads their TTLs: most
// over ShortTTLSeconds, the last LongClients over LongTTLSeconds) and draws each
// client's cache age and request phase from the seed.
func newClientModel(sz strategySizes) *clientModel {
	rng := rand.New(rand.NewPCG(sz.Seed, sz.Seed^0x5eed))
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	m := &clientModel{every: sec(sz.RequestEverySeconds)}
	ttls := clients.TTLs(sz.Clients,
		clients.TTLRange{Min: sec(sz.ShortTTLSeconds[0]), Max: sec(sz.ShortTTLSeconds[1])},
		clients.TTLRange{Min: sec(sz.LongTTLSeconds[0]), Max: sec(sz.LongTTLSeconds[1])}, sz.LongClients)
	for _, ttl := range ttls {
		m.clients = append(m.clients, modelClient{
			ttl:      ttl,
			switchAt: time.Duration(rng.Int64N(int64(ttl))) + 1,
			phase:    time.Duration(rng.Int64N(int64(m.every))),
		})
	}
	return m
}

// onOld is how many clients still send to the old cluster at e after the move.
func (m *clientModel) onOld(e time.Duration) int {
	n := 0
	for _, c := range m.clients {
		if c.switchAt > e {
			n++
		}
	}
	return n
}

// failedIfRemovedAt counts the requests that fail when the old Gateway goes at removed
// after the move: those sent to the old cluster after it, until each client's answer
// expires. Clients retry nothing for this count. It also returns the requests sent
// to the old cluster after the move in all.
func (m *clientModel) failedIfRemovedAt(removed time.Duration) (failed, toOld int) {
	for _, c := range m.clients {
		for at := c.phase; at < c.switchAt; at += m.every {
			toOld++
			if at >= removed {
				failed++
			}
		}
	}
	return failed, toOld
}

// underOnePercent is when the old cluster's share of the clients first falls under 1%.
func (m *clientModel) underOnePercent() time.Duration {
	times := []time.Duration{0}
	for _, c := range m.clients {
		times = append(times, c.switchAt)
	}
	slices.Sort(times)
	for _, e := range times {
		if float64(m.onOld(e)) < 0.01*float64(len(m.clients)) {
			return e
		}
	}
	return times[len(times)-1]
}

// last is when the last client leaves the old cluster.
func (m *clientModel) last() time.Duration {
	var l time.Duration
	for _, c := range m.clients {
		l = max(l, c.switchAt)
	}
	return l
}

// drive makes the traffic source follow the model from the move at t0 on: each
// client's requests count on the old cluster until it switches, then on the new one.
// pairs are the (old, new, pair) series of each migration driven at once. It returns
// when every client has switched or stop is closed.
func (m *clientModel) drive(traffic *trafficSource, t0 time.Time, pairs [][3]string, stop <-chan struct{}) {
	perClient := float64(time.Second) / float64(m.every)
	set := func(e time.Duration) {
		old := float64(m.onOld(e)) * perClient
		rates := map[[2]string]float64{}
		for _, p := range pairs {
			rates[[2]string{p[0], p[2]}] = old
			rates[[2]string{p[1], p[2]}] = float64(len(m.clients))*perClient - old
		}
		traffic.set(rates)
	}
	times := make([]time.Duration, 0, len(m.clients))
	for _, c := range m.clients {
		times = append(times, c.switchAt)
	}
	slices.Sort(times)
	for _, e := range times {
		timer := time.NewTimer(time.Until(t0.Add(e)))
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		set(e)
	}
}

// strategyRow is one way of moving the Gateway and what it cost.
type strategyRow struct {
	name, setup string
	removed     time.Duration
	failed      int
	toOld       int
	idle        time.Duration
}

func (m *clientModel) row(name, setup string, removed time.Duration) strategyRow {
	failed, toOld := m.failedIfRemovedAt(removed)
	return strategyRow{name: name, setup: setup, removed: removed, failed: failed, toOld: toOld, idle: max(0, removed-m.underOnePercent())}
}

// benchStrategies moves a Gateway from cluster1 to cluster2 with the same clients for
// every strategy a user could take: no proxy (the old Gateway goes at once), a fixed
// timer shorter and longer than the longest TTL, and traffic-migration at 5% and 1%.
// The product's two runs are real: OCM's placement controller moves the real
// Placements, the clients' requests are counted in Prometheus as the model sends them,
// and the manager decides when the proxy drops cluster1. The other strategies remove
// the old Gateway at a moment known in advance, so their outcome follows from the
// same clients without a run.
func benchStrategies(t *testing.T, r *report, sz strategySizes) {
	ctx := t.Context()
	f := newFleet(t, "strategy")
	defer f.deletePolicies(t)
	model := newClientModel(sz)
	traffic := newTrafficSource(t)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

	type run struct {
		percent                       float64
		placement, old, new, pairName string
	}
	runs := []run{{percent: 5}, {percent: 1}}
	var pairs [][3]string
	w := f.watchDecisions(t)
	for i := range runs {
		ru := &runs[i]
		ru.placement = fmt.Sprintf("tm%g", ru.percent)
		ru.old, ru.new, ru.pairName = f.ns+"-"+ru.placement+"-c1", f.ns+"-"+ru.placement+"-c2", f.ns+"-"+ru.placement
		pairs = append(pairs, [3]string{ru.old, ru.new, ru.pairName})
		for _, c := range []string{ru.old, ru.new} {
			if err := f.managedCluster(t, c, map[string]string{"site": c}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.placement(ru.placement, map[string]string{"site": ru.old}); err != nil {
			t.Fatal(err)
		}
		p := f.policy(ru.placement, ru.placement, traffic.job, ru.pairName, sec(sz.IntervalSeconds), sz.Successes)
		p.Spec.TrafficShare.MaxPercent = ru.percent
		p.Spec.TrafficShare.Window = sz.Window
		p.Spec.MinDrainDuration = &metav1.Duration{Duration: sec(sz.MinDrainSeconds)}
		if err := f.createPolicy(p); err != nil {
			t.Fatal(err)
		}
	}
	// Before the move every client sends to cluster1.
	all := float64(len(model.clients)) * float64(time.Second) / float64(model.every)
	rates := map[[2]string]float64{}
	for _, p := range pairs {
		rates[[2]string{p[0], p[2]}], rates[[2]string{p[1], p[2]}] = all, 0
	}
	traffic.set(rates)
	for _, ru := range runs {
		if _, ok := w.waitFor(ru.placement+"-proxy", time.Time{}, time.Minute, has(ru.old)); !ok {
			t.Fatalf("proxy %s-proxy never listed %s", ru.placement, ru.old)
		}
	}
	// Prometheus must hold a full window of the old traffic before the move, as a
	// Gateway that has served for a while does.
	windowQuery := fmt.Sprintf(`sum(rate(%s{job=%q}[%s]))`, metricName, traffic.job, sz.Window)
	window, err := time.ParseDuration(sz.Window)
	if err != nil {
		t.Fatalf("window %q: %v", sz.Window, err)
	}
	since := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pts, err := queryRange(ctx, windowQuery, time.Now(), time.Now(), time.Second)
		return err == nil && len(pts) == 1 && pts[0].value > 0 && time.Since(since) > window, nil
	})
	if err != nil {
		t.Fatalf("Prometheus never had the clients' traffic: %v", err)
	}

	// The move: both real Placements select cluster2; the clients' DNS follows.
	for _, ru := range runs {
		if err := f.selectClusters(ctx, ru.placement, map[string]string{"site": ru.new}); err != nil {
			t.Fatal(err)
		}
	}
	var t0 time.Time
	for _, ru := range runs {
		at, ok := w.waitFor(ru.placement, time.Time{}, time.Minute, has(ru.new))
		if !ok {
			t.Fatalf("Placement %s never selected %s", ru.placement, ru.new)
		}
		if at.After(t0) {
			t0 = at
		}
	}
	stop := make(chan struct{})
	var driving sync.WaitGroup
	driving.Add(2)
	go func() { defer driving.Done(); model.drive(traffic, t0, pairs, stop) }()
	// The removal estimates the policies' status gives for cluster1 as it drains.
	estimates := map[float64][]estimateSeen{}
	var estimatesMu sync.Mutex
	go func() {
		defer driving.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, ru := range runs {
				p, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).Get(ctx, ru.placement, metav1.GetOptions{})
				if err != nil {
					continue
				}
				if r := fixture.PolicyRow(p, ru.old); r != nil && r.EstimatedRemovalTime != nil && r.Phase != trafficv1alpha1.ClusterRemoved {
					estimatesMu.Lock()
					estimates[ru.percent] = append(estimates[ru.percent], estimateSeen{at: time.Now(), estimate: r.EstimatedRemovalTime.Time})
					estimatesMu.Unlock()
				}
			}
		}
	}()
	defer func() { close(stop); driving.Wait() }()

	timeout := model.last() + 2*time.Minute
	removedAt := map[float64]time.Duration{}
	for _, ru := range runs {
		at, ok := w.waitFor(ru.placement+"-proxy", t0, timeout, lacks(ru.old))
		if !ok {
			t.Fatalf("the proxy of %s kept %s for %s after the move", ru.placement, ru.old, timeout)
		}
		removedAt[ru.percent] = at.Sub(t0)
	}
	// How far the estimate was from the manager's own removal time, at half the drain.
	estimateOff := map[float64]time.Duration{}
	for _, ru := range runs {
		// The manager writes the proxy's decision first and the status after
		// it, so the Removed row may follow the removal by a moment.
		var p *trafficv1alpha1.TrafficMigrationPolicy
		var row *trafficv1alpha1.ClusterStatus
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := f.traffic.TrafficV1alpha1().TrafficMigrationPolicies(f.ns).Get(ctx, ru.placement, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			p, row = got, fixture.PolicyRow(got, ru.old)
			return row != nil && row.RemovalTime != nil, nil
		})
		if err != nil {
			t.Fatalf("policy %s has no Removed row for %s 30s after the proxy let it go: %s", ru.placement, ru.old, fixture.PolicyStatus(p))
		}
		estimatesMu.Lock()
		seen := estimates[ru.percent]
		estimatesMu.Unlock()
		half := t0.Add(removedAt[ru.percent] / 2)
		i := slices.IndexFunc(seen, func(e estimateSeen) bool { return e.at.After(half) })
		switch {
		case i > 0:
			estimateOff[ru.percent] = seen[i-1].estimate.Sub(row.RemovalTime.Time)
		case i < 0 && len(seen) > 0:
			estimateOff[ru.percent] = seen[len(seen)-1].estimate.Sub(row.RemovalTime.Time)
		default:
			t.Logf("traffic-migration %g%%: no estimate by half the drain", ru.percent)
		}
		t.Logf("traffic-migration %g%%: %d estimates seen; at half the drain it was %s off the removal", ru.percent, len(seen), estimateOff[ru.percent])
	}

	policy := fmt.Sprintf("trafficShare under the threshold on a %s window, checked every %gs, %d checks in a row, minDrainDuration %gs",
		sz.Window, sz.IntervalSeconds, sz.Successes, sz.MinDrainSeconds)
	rows := []strategyRow{
		model.row("no proxy", "the consumer follows the real Placement: the old Gateway goes at the move", 0),
		model.row(fmt.Sprintf("fixed timer %gs", sz.ShortTimerSeconds), "the old Gateway goes a fixed time after the move, shorter than the longest TTL", sec(sz.ShortTimerSeconds)),
		model.row(fmt.Sprintf("fixed timer %gs", sz.LongTimerSeconds), "the old Gateway goes a fixed time after the move, comfortably longer than the longest TTL", sec(sz.LongTimerSeconds)),
		model.row("traffic-migration 5%", "the proxy keeps cluster1 until "+strings.Replace(policy, "the threshold", "5%", 1)+" (measured run)", removedAt[5]),
		model.row("traffic-migration 1%", "the proxy keeps cluster1 until "+strings.Replace(policy, "the threshold", "1%", 1)+" (measured run)", removedAt[1]),
	}
	r.Tables = append(r.Tables, strategyTable(sz, model, rows))
	for _, percent := range []float64{5, 1} {
		r.add("0. Strategies", fmt.Sprintf("traffic-migration %g%%", percent), "removal estimate at half the drain, minus the removal", estimateOff[percent].Seconds(), "s", "")
	}
	for _, row := range rows {
		const b = "0. Strategies"
		r.add(b, row.name, "time from the move to the removal of the old Gateway", row.removed.Seconds(), "s", "")
		r.add(b, row.name, "failed requests", float64(row.failed), "", "")
		r.add(b, row.name, "idle time: old Gateway kept after its share fell under 1%", row.idle.Seconds(), "s", "")
		t.Logf("%s: removed after %s, %d of %d requests to the old cluster failed, idle %s", row.name, row.removed.Round(time.Millisecond), row.failed, row.toOld, row.idle.Round(time.Millisecond))
	}
}

// strategyTable puts the strategies side by side and says whether the point holds:
// only traffic-migration has both zero failures and little idle time.
func strategyTable(sz strategySizes, model *clientModel, rows []strategyRow) table {
	tbl := table{
		Title: "Moving a Gateway from cluster1 to cluster2, five ways",
		Intro: fmt.Sprintf("The same %d clients for every row, as the demo models them: a request every %gs each; TTLs of %g-%gs, %d of them %g-%gs; "+
			"each client's cached answer expires at a random moment of its TTL after the move (seed %d). The last client leaves cluster1 %.1fs after the move; "+
			"its share falls under 1%% at %.1fs. Failed: requests sent to cluster1 after its Gateway went (no retries counted).",
			sz.Clients, sz.RequestEverySeconds, sz.ShortTTLSeconds[0], sz.ShortTTLSeconds[1], sz.LongClients, sz.LongTTLSeconds[0], sz.LongTTLSeconds[1],
			sz.Seed, model.last().Seconds(), model.underOnePercent().Seconds()),
		Header: []string{"strategy", "setup", "move to removal (s)", "failed requests", "idle after share < 1% (s)"},
	}
	best := -1
	for i, row := range rows {
		tbl.Rows = append(tbl.Rows, []string{row.name, row.setup, fmt.Sprintf("%.1f", row.removed.Seconds()),
			fmt.Sprintf("%d of %d", row.failed, row.toOld), fmt.Sprintf("%.1f", row.idle.Seconds())})
		if row.failed == 0 && (best < 0 || row.idle < rows[best].idle) {
			best = i
		}
	}
	var zero []string
	for _, row := range rows {
		if row.failed == 0 {
			zero = append(zero, row.name)
		}
	}
	switch {
	case best < 0:
		tbl.Intro += "\n\nNo strategy dropped zero requests here."
	default:
		verdict := "The point holds"
		if !strings.HasPrefix(rows[best].name, "traffic-migration") {
			verdict = "The point does not hold"
		}
		tbl.Intro += fmt.Sprintf("\n\nZero failures: %s. The least idle of those: %s, %.1fs. %s: only traffic-migration should have both zero failures and little idle time.",
			strings.Join(zero, ", "), rows[best].name, math.Round(rows[best].idle.Seconds()*10)/10, verdict)
	}
	return tbl
}

// estimateSeen is a removal estimate read from a policy's status, and when.
type estimateSeen struct {
	at, estimate time.Time
}
