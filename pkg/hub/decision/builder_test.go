// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package decision

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// now is the time of every decision in the table tests.
var now = time.Date(2030, time.January, 2, 12, 0, 0, 0, time.UTC)

// ago is now minus d, as a status time.
func ago(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(-d))
	return &t
}

// after is now plus d, as a status time.
func after(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(d))
	return &t
}

// builder makes an Input: by default the real decisions are known, the policy is the
// CRD's default one, every cluster it names has a ManagedCluster and none has the
// Gateway ready.
type builder struct {
	in      Input
	gone    []string
	unknown bool
}

func input() *builder {
	return &builder{in: Input{
		Now:       now,
		RealKnown: true,
		Policy: Policy{
			Interval:             30 * time.Second,
			ConsecutiveSuccesses: 3,
			MinDrainDuration:     2 * time.Minute,
			OnMaxDrainDuration:   v1alpha1.DeadlineHold,
			NoDataPolicy:         v1alpha1.NoDataHold,
		},
	}}
}

// real adds the clusters to the real decision group 0.
func (b *builder) real(clusters ...string) *builder { return b.realGroup(0, "", clusters...) }

func (b *builder) realGroup(index int32, name string, clusters ...string) *builder {
	b.in.Real = append(b.in.Real, Group{Index: index, Name: name, Clusters: clusters})
	return b
}

// proxy adds the clusters to the proxy decision group 0.
func (b *builder) proxy(clusters ...string) *builder { return b.proxyGroup(0, "", clusters...) }

func (b *builder) proxyGroup(index int32, name string, clusters ...string) *builder {
	b.in.Proxy = append(b.in.Proxy, Group{Index: index, Name: name, Clusters: clusters})
	return b
}

// realUnknown says the real decisions could not be read.
func (b *builder) realUnknown() *builder {
	b.in.RealKnown = false
	return b
}

func (b *builder) rows(rows ...row) *builder {
	for _, r := range rows {
		b.in.Previous = append(b.in.Previous, r.ClusterStatus)
	}
	return b
}

func (b *builder) ready(clusters ...string) *builder {
	b.in.GatewayReady = sets.New(clusters...)
	return b
}

// goneClusters have no ManagedCluster.
func (b *builder) goneClusters(clusters ...string) *builder {
	b.gone = append(b.gone, clusters...)
	return b
}

// clustersUnknown leaves ManagedClusters nil.
func (b *builder) clustersUnknown() *builder {
	b.unknown = true
	return b
}

// eval records a check of the cluster with the values checked() expects.
func (b *builder) eval(cluster string, result v1alpha1.EvaluationResult, message string) *builder {
	if b.in.Checks == nil {
		b.in.Checks = map[string]Check{}
	}
	b.in.Checks[cluster] = Check{
		Result:  result,
		Value:   valueOf(result),
		Query:   queryOf(cluster),
		Message: message,
	}
	return b
}

func (b *builder) force(clusters ...string) *builder {
	b.in.ForceRemove = append(b.in.ForceRemove, clusters...)
	return b
}

func (b *builder) policy(edit func(*Policy)) *builder {
	edit(&b.in.Policy)
	return b
}

func (b *builder) build() Input {
	in := b.in
	if !b.unknown {
		names := sets.New[string]()
		for _, g := range slices.Concat(in.Real, in.Proxy) {
			names.Insert(g.Clusters...)
		}
		for _, r := range in.Previous {
			names.Insert(r.Name)
		}
		names.Insert(in.ForceRemove...)
		in.ManagedClusters = names.Delete(b.gone...)
	}
	return in
}

func valueOf(result v1alpha1.EvaluationResult) string {
	switch result {
	case v1alpha1.EvaluationPass:
		return "0.01"
	case v1alpha1.EvaluationFail:
		return "0.5"
	}
	return ""
}

func queryOf(cluster string) string {
	return fmt.Sprintf(`share{cluster=%q}`, cluster)
}

// c2Leaves is the input most cases start from: c1 is in R and has the Gateway ready,
// and c2, no longer in R, is still in the proxy.
func c2Leaves() *builder { return input().real("c1").proxy("c1", "c2").ready("c1") }

// c2Kept is the output that keeps c2 in the proxy beside the Active c1, with c2's row
// as given, and comes back after d.
func c2Kept(d time.Duration, c2 row) Output {
	return Output{
		Proxy:     []Group{grp(0, "", "c1", "c2")},
		Clusters:  rows(active("c1"), c2),
		RequeueAt: now.Add(d),
	}
}

// c2Removed is the output that removes c2 from the proxy for reason, leaving the
// Active c1, with c2's row as given.
func c2Removed(reason RemovalReason, c2 row) Output {
	return Output{
		Proxy:     []Group{grp(0, "", "c1")},
		Clusters:  rows(active("c1"), c2),
		Removed:   []Removal{{Cluster: "c2", Reason: reason}},
		RequeueAt: now.Add(RemovedRowRetention),
	}
}

// row builds a status row.
type row struct{ v1alpha1.ClusterStatus }

func newRow(name string, phase v1alpha1.ClusterPhase) row {
	return row{v1alpha1.ClusterStatus{Name: name, Phase: phase}}
}

func active(name string) row   { return newRow(name, v1alpha1.ClusterActive) }
func draining(name string) row { return newRow(name, v1alpha1.ClusterDraining) }
func held(name string) row     { return newRow(name, v1alpha1.ClusterHeld) }
func removed(name string) row  { return newRow(name, v1alpha1.ClusterRemoved) }

// drainStarts is the row of a cluster whose drain starts now and is checked at once.
func drainStarts(name string) row {
	return draining(name).started(ago(0)).next(ago(0)).
		msg("minimum drain duration not reached; waiting for 3 more passing checks")
}

// dueNow is the row of a cluster that has drained for 5 minutes, past the minimum drain
// duration, and whose last check, 30 s ago, left a run of successes and result: it is
// due for a check now.
func dueNow(name string, successes int32, result v1alpha1.EvaluationResult) row {
	return draining(name).started(ago(5*time.Minute)).checked(ago(30*time.Second), successes, result)
}

// checkedNow is the row of a cluster that has drained for 5 minutes, after a check now,
// recorded in its history, that left a run of successes and result; the next check is
// due in 30 s.
func checkedNow(name string, successes int32, result v1alpha1.EvaluationResult) row {
	return draining(name).started(ago(5*time.Minute)).checked(ago(0), successes, result).recorded().next(after(30 * time.Second))
}

func (r row) started(t *metav1.Time) row {
	r.DrainStartTime = t
	return r
}

// checked sets the last check, with the value and query eval() gives.
func (r row) checked(t *metav1.Time, successes int32, result v1alpha1.EvaluationResult) row {
	r.LastEvaluationTime = t
	r.ConsecutiveSuccesses = successes
	r.LastResult = result
	r.LastValue = valueOf(result)
	r.ResolvedQuery = queryOf(r.Name)
	return r
}

// failed sets the last check to a failure 10 s ago, which started the run of passes
// over.
func (r row) failed() row { return r.checked(ago(10*time.Second), 0, fail) }

// recorded appends the last check, as checked() set it, to the row's history.
func (r row) recorded() row {
	r.History = append(slices.Clone(r.History), v1alpha1.CheckRecord{Time: *r.LastEvaluationTime, Result: r.LastResult, Value: r.LastValue})
	return r
}

// detail sets what the last check reported beyond its value.
func (r row) detail(d string) row {
	r.LastCheckDetail = d
	return r
}

func (r row) next(t *metav1.Time) row {
	r.NextEvaluationTime = t
	return r
}

func (r row) removedAt(t *metav1.Time) row {
	r.RemovalTime = t
	return r
}

// removedByGate sets the row's removal now, by the removal gate.
func (r row) removedByGate() row {
	return r.removedAt(ago(0)).msg("removed: the removal gate passed")
}

func (r row) msg(m string) row {
	r.Message = m
	return r
}

func grp(index int32, name string, clusters ...string) Group {
	return Group{Index: index, Name: name, Clusters: clusters}
}

func rows(rs ...row) []v1alpha1.ClusterStatus {
	var out []v1alpha1.ClusterStatus
	for _, r := range rs {
		out = append(out, r.ClusterStatus)
	}
	return out
}

// checkEqual fails the test with both values as JSON when they differ.
func checkEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs\n got: %s\nwant: %s", what, asJSON(got), asJSON(want))
	}
}

func asJSON(v any) string {
	b, err := json.MarshalIndent(v, "      ", "  ")
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}
