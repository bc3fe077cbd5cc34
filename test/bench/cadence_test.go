// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/benchreport"
)

// cadenceSizes are the knobs of the check cadence benchmark.
type cadenceSizes struct {
	// Policies, in one namespace, each drain one cluster whose checks fail, so that
	// each is checked every IntervalSeconds; they share 2 × Groups clusters.
	Policies        int     `json:"policies"`
	Groups          int     `json:"groups"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	// WriteEveryCheck measures also the manager with --status-write-qps=0, which
	// writes every check (the manager before the budget), for comparison.
	WriteEveryCheck bool `json:"writeEveryCheck"`
}

// benchCadence runs benchmark 8: whether checks keep their interval when there are
// more of them than the API server's rate limit (--kube-api-qps) lets status writes
// through. It takes the checks' own times, not the times of the writes that carry
// them: each check's query arrives at a recording proxy in front of the bed's
// Prometheus (checkClock), to the millisecond, and its delay is the time from its due
// time (the previous check's evaluation time, a whole second, plus the interval) to
// its arrival. Beside it, the delays as the rows' histories record them, in whole
// seconds (a round is evaluated at the second it starts in), once every policy's
// history holds checks of the steady drain only. It returns the manager it leaves
// running, with the default flags.
func benchCadence(t *testing.T, r *benchreport.Report, cs cadenceSizes, mgr *manager, traffic *trafficSource) *manager {
	type run struct {
		name string
		args []string
	}
	runs := []run{{name: "at the defaults (--status-write-qps=20, --status-flush-interval=1m)"}}
	if cs.WriteEveryCheck {
		runs = append(runs, run{name: "writing every check (--status-write-qps=0)", args: []string{"--status-write-qps=0"}})
	}
	interval := time.Duration(cs.IntervalSeconds * float64(time.Second))
	b := "8. Check cadence"
	params := fmt.Sprintf("%d policies in one namespace, each draining 1 cluster whose checks fail, interval %gs, --kube-api-qps 50 (the default)", cs.Policies, cs.IntervalSeconds)
	table := benchreport.Table{
		Title: "Check cadence: checks on time beyond the API server's rate limit",
		Intro: params + ". Each check's delay past its due time (the previous check's evaluation time plus the interval), to its query's arrival at Prometheus, " +
			"and as the rows' histories record it (whole seconds). The goal at the defaults: p99 under 2 s.",
		Header: []string{"manager", "checks measured", "delay p50", "delay p99", "delay p99 in the histories", "status writes per minute", "status writes kept in memory per minute"},
	}
	for i, rn := range runs {
		if i > 0 || len(rn.args) > 0 {
			mgr.proc.Stop()
			var err error
			if mgr, err = startManager(t.Context(), rn.args...); err != nil {
				t.Fatalf("start the manager %s: %v", rn.name, err)
			}
		}
		m := measureCadence(t, cs, interval, mgr, traffic)
		delays, recorded := m.delays, m.recorded
		goal := ""
		if len(rn.args) == 0 {
			goal = "< 2 s"
		}
		r.Add(b, params, "delay of a check past its due time, p50, "+rn.name, benchreport.Percentile(delays, 50), "s", "")
		r.Add(b, params, "delay of a check past its due time, p99, "+rn.name, benchreport.Percentile(delays, 99), "s", goal)
		r.Add(b, params, "delay of a check past its due time, p99 of the run's second half (the drains under way), "+rn.name, benchreport.Percentile(delays[len(delays)/2:], 99), "s", "")
		r.Add(b, params, "delay of a check past its due time as the histories record it, p99, "+rn.name, benchreport.Percentile(recorded, 99), "s", "")
		r.Add(b, params, "mean wait of a policy in the work queue, "+rn.name, m.queueWait, "s", "")
		r.Add(b, params, "mean wait for a query slot, "+rn.name, m.slotWait, "s", "")
		r.Add(b, params, "status writes per minute, "+rn.name, m.writes, "", "")
		r.Add(b, params, "status writes kept in memory per minute, "+rn.name, m.kept, "", "")
		r.Raw[b+": delays, "+rn.name] = delays
		r.Raw[b+": delays in the histories, "+rn.name] = recorded
		table.Rows = append(table.Rows, []string{rn.name, strconv.Itoa(len(delays)),
			fmt.Sprintf("%.2f s", benchreport.Percentile(delays, 50)), fmt.Sprintf("%.2f s", benchreport.Percentile(delays, 99)),
			fmt.Sprintf("%.0f s", benchreport.Percentile(recorded, 99)), benchreport.Format(m.writes), benchreport.Format(m.kept)})
	}
	r.Tables = append(r.Tables, table)
	if len(runs) > 1 {
		mgr.proc.Stop()
		var err error
		if mgr, err = startManager(t.Context()); err != nil {
			t.Fatalf("restart the manager at the defaults: %v", err)
		}
	}
	return mgr
}

// measureCadence sets up cs's policies, lets them drain until every history holds
// only checks of the steady drain, and returns the delays of their checks past their
// due times since the drains started, as Prometheus saw the checks and as the
// histories record them, and the manager's status writes and kept statuses per minute
// meanwhile.
func measureCadence(t *testing.T, cs cadenceSizes, interval time.Duration, mgr *manager, traffic *trafficSource) cadenceMeasure {
	f := newFleet(t, "cadence")
	defer f.deletePolicies(t)
	// The bed's Prometheus, behind a proxy that records when each check's query
	// arrives and adds no delay.
	url, checks := delayingPrometheus(t, bed.Prometheus.URL, 0, 0, interval)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "recorded-prometheus", Namespace: f.ns}, StringData: map[string]string{"url": url}}
	if _, err := f.Kube.CoreV1().Secrets(f.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the recorded Prometheus's Secret: %v", err)
	}
	policies := f.failingDrains(t, traffic, cs.Policies, cs.Groups, interval, 0, secret.Name)
	checks.recording(true)
	m0, _ := mgr.sample(t)
	start := time.Now()
	// Every history full of checks made after the drains started, and the last of
	// them written (within the flush interval).
	steady := func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		for _, row := range p.Status.Clusters {
			if row.Phase == trafficv1alpha1.ClusterDraining && len(row.History) == trafficv1alpha1.MaxCheckHistory && row.DrainStartTime != nil &&
				!row.History[0].Time.Before(row.DrainStartTime) {
				return true
			}
		}
		return false
	}
	policies.waitAll(t, cs.Policies, 15*time.Minute, steady)
	checks.recording(false)
	delays := checks.takeDueDelays()
	m1, _ := mgr.sample(t)
	var recorded []float64
	minutes := time.Since(start).Minutes()
	for _, p := range policies.all() {
		for _, row := range p.Status.Clusters {
			if row.Phase != trafficv1alpha1.ClusterDraining {
				continue
			}
			for k := 1; k < len(row.History); k++ {
				recorded = append(recorded, (row.History[k].Time.Sub(row.History[k-1].Time.Time) - interval).Seconds())
			}
		}
	}
	if len(recorded) == 0 {
		t.Fatalf("no policy's history holds two checks")
	}
	if len(delays) == 0 {
		t.Fatalf("the recording proxy saw no check after another")
	}
	writes := delta(m0, m1, "traffic_migration_api_writes_total{resource=trafficmigrationpolicies/status}") / minutes
	kept := delta(m0, m1, "traffic_migration_status_writes_deferred_total") / minutes
	t.Logf("%d policies: %d checks, delay past the due time p50 %.2f s, p99 %.2f s, max %.2f s (in the histories p99 %.0f s); %.0f status writes and %.0f kept per minute",
		cs.Policies, len(delays), benchreport.Percentile(delays, 50), benchreport.Percentile(delays, 99), benchreport.Percentile(delays, 100),
		benchreport.Percentile(recorded, 99), writes, kept)
	return cadenceMeasure{delays: delays, recorded: recorded, writes: writes, kept: kept,
		queueWait: meanBetween(m0, m1, "workqueue_queue_duration_seconds", "{name="+policy.ControllerName+"}"),
		slotWait:  meanBetween(m0, m1, "traffic_migration_query_slot_wait_seconds", "{namespace="+f.ns+"}")}
}

// cadenceMeasure is what measureCadence measured: the checks' delays past their due
// times in the order they arrived, as the histories record them, status writes and
// kept statuses per minute, and the mean waits of a policy in the work queue and for
// a query slot.
type cadenceMeasure struct {
	delays, recorded    []float64
	writes, kept        float64
	queueWait, slotWait float64
}
