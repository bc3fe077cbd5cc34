// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/triggers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// at is a time the given duration before now, as the status writes it.
func at(ago time.Duration) *metav1.Time {
	t := metav1.NewTime(time.Now().Add(-ago).Truncate(time.Second))
	return &t
}

// samplePolicy is a policy with the given rows and conditions in its status.
func samplePolicy(rows []trafficv1alpha1.ClusterStatus, conds ...metav1.Condition) map[string]any {
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: trafficv1alpha1.SchemeGroupVersion.String(), Kind: "TrafficMigrationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "gateways"},
		Status:     trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: rows, Conditions: conds},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		panic(err)
	}
	return obj
}

// defaultAPI is the engine's API over the default configuration alone.
func defaultAPI(t *testing.T, data map[string]string) api.API {
	t.Helper()
	a, err := newAPI("tm", DefaultConfig(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fired runs a trigger on a policy and returns whether it fired and its oncePer key.
func fired(t *testing.T, a api.API, trigger string, obj map[string]any) (bool, string) {
	t.Helper()
	res, err := a.RunTrigger(trigger, obj)
	if err != nil {
		t.Fatalf("run %s: %v", trigger, err)
	}
	if len(res) != 1 {
		t.Fatalf("%s: want one condition result, got %+v", trigger, res)
	}
	return res[0].Triggered, res[0].OncePer
}

func TestDefaultConfigParses(t *testing.T) {
	data := DefaultConfig()
	for _, key := range []string{
		"trigger.on-drain-started", "trigger.on-drain-stalled", "trigger.on-drain-held", "trigger.on-cluster-removed", "trigger.on-error",
		"template.drain-started", "template.drain-stalled", "template.drain-held", "template.cluster-removed", "template.policy-error",
	} {
		if data[key] == "" {
			t.Errorf("the default configuration lacks %s", key)
		}
	}
	a := defaultAPI(t, nil)
	cfg := a.GetConfig()
	for name, conds := range cfg.Triggers {
		for _, c := range conds {
			if c.OncePer == "" {
				t.Errorf("trigger %s has no oncePer: it would fire at every change", name)
			}
			for _, tmpl := range c.Send {
				if _, ok := cfg.Templates[tmpl]; !ok {
					t.Errorf("trigger %s sends the template %s, which does not exist", name, tmpl)
				}
			}
		}
	}
}

func TestDefaultTriggers(t *testing.T) {
	a := defaultAPI(t, nil)
	started := at(20 * time.Minute)
	recent := at(2 * time.Minute)
	removed := at(time.Minute)
	tests := map[string]struct {
		rows     []trafficv1alpha1.ClusterStatus
		conds    []metav1.Condition
		trigger  string
		want     bool
		wantOnce string
	}{
		"no status": {trigger: "on-drain-started"},
		"active only": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterActive}},
			trigger: "on-drain-started",
		},
		"drain started": {
			rows: []trafficv1alpha1.ClusterStatus{
				{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: recent},
				{Name: "c2", Phase: trafficv1alpha1.ClusterActive},
			},
			trigger: "on-drain-started", want: true, wantOnce: "c1@" + recent.UTC().Format(time.RFC3339),
		},
		"the newest drain keys the notification": {
			rows: []trafficv1alpha1.ClusterStatus{
				{Name: "a", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: recent},
				{Name: "b", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: started},
			},
			trigger: "on-drain-started", want: true, wantOnce: "a@" + recent.UTC().Format(time.RFC3339),
		},
		"failing for 20 minutes stalls": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail}},
			trigger: "on-drain-stalled", want: true, wantOnce: "c1@" + started.UTC().Format(time.RFC3339),
		},
		"no check for 20 minutes stalls": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started}},
			trigger: "on-drain-stalled", want: true, wantOnce: "c1@" + started.UTC().Format(time.RFC3339),
		},
		"failing for 2 minutes is not stalled": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: recent, LastResult: trafficv1alpha1.EvaluationNoData}},
			trigger: "on-drain-stalled",
		},
		"passing is not stalled": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationPass}},
			trigger: "on-drain-stalled",
		},
		"a stalled drain stalls, whatever its age, and is told again with its cause": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: recent, LastResult: trafficv1alpha1.EvaluationFail, Stalled: true}},
			trigger: "on-drain-stalled", want: true, wantOnce: "c1@" + recent.UTC().Format(time.RFC3339) + "/stalled",
		},
		"failing for 20 minutes and stalled: a key of its own": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail, Stalled: true}},
			trigger: "on-drain-stalled", want: true, wantOnce: "c1@" + started.UTC().Format(time.RFC3339) + "/stalled",
		},
		"a held stalled cluster has the held trigger": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail, Stalled: true}},
			trigger: "on-drain-stalled",
		},
		"held": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail}},
			trigger: "on-drain-held", want: true, wantOnce: "c1@" + started.UTC().Format(time.RFC3339),
		},
		"a held cluster is not stalled: it has a trigger of its own": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail}},
			trigger: "on-drain-stalled",
		},
		"draining is not held": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started}},
			trigger: "on-drain-held",
		},
		"removed": {
			rows: []trafficv1alpha1.ClusterStatus{
				{Name: "c1", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: started, RemovalTime: removed},
				{Name: "c2", Phase: trafficv1alpha1.ClusterActive},
			},
			trigger: "on-cluster-removed", want: true, wantOnce: "c1@" + removed.UTC().Format(time.RFC3339),
		},
		"draining is not removed": {
			rows:    []trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started}},
			trigger: "on-cluster-removed",
		},
		"Ready False is an error": {
			conds:   []metav1.Condition{{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonPlacementNotFound, LastTransitionTime: *removed}},
			trigger: "on-error", want: true, wantOnce: "Ready/PlacementNotFound@" + removed.UTC().Format(time.RFC3339),
		},
		"an unreachable Prometheus is an error": {
			conds: []metav1.Condition{
				{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled, LastTransitionTime: *started},
				{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonUnreachable, LastTransitionTime: *removed},
			},
			trigger: "on-error", want: true, wantOnce: "PrometheusReachable/Unreachable@" + removed.UTC().Format(time.RFC3339),
		},
		"no data is no error": {
			conds:   []metav1.Condition{{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonNoData, LastTransitionTime: *removed}},
			trigger: "on-error",
		},
		"all well": {
			conds:   []metav1.Condition{{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.ReasonReconciled, LastTransitionTime: *removed}},
			trigger: "on-error",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, once := fired(t, a, tc.trigger, samplePolicy(tc.rows, tc.conds...))
			if got != tc.want || once != tc.wantOnce {
				t.Errorf("%s: got fired=%v oncePer=%q, want %v %q", tc.trigger, got, once, tc.want, tc.wantOnce)
			}
		})
	}
}

// TestOverriddenTrigger: a key of the ConfigMap replaces the default of that name, as
// the integration test does to stall after seconds.
func TestOverriddenTrigger(t *testing.T) {
	stalled := strings.ReplaceAll(DefaultConfig()["trigger.on-drain-stalled"], "duration('10m')", "duration('3s')")
	a := defaultAPI(t, map[string]string{"trigger.on-drain-stalled": stalled})
	obj := samplePolicy([]trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: at(10 * time.Second), LastResult: trafficv1alpha1.EvaluationFail}})
	if got, _ := fired(t, a, "on-drain-stalled", obj); !got {
		t.Error("a 3s threshold should stall a drain 10s old")
	}
	if got, _ := fired(t, defaultAPI(t, nil), "on-drain-stalled", obj); got {
		t.Error("the default 10m threshold should not stall a drain 10s old")
	}
}

// recorder is a notification service that keeps what it is asked to send.
type recorder struct{ sent []services.Notification }

func (r *recorder) Send(n services.Notification, _ services.Destination) error {
	r.sent = append(r.sent, n)
	return nil
}

func TestDefaultTemplates(t *testing.T) {
	started, estimated, removed := at(20*time.Minute), at(-5*time.Minute), at(time.Minute)
	obj := samplePolicy([]trafficv1alpha1.ClusterStatus{
		{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: started, EstimatedRemovalTime: estimated, LastResult: trafficv1alpha1.EvaluationFail, LastValue: "42", Message: "waiting for 3 passing checks"},
		{Name: "c2", Phase: trafficv1alpha1.ClusterActive},
		{Name: "c3", Phase: trafficv1alpha1.ClusterHeld, DrainStartTime: started, LastResult: trafficv1alpha1.EvaluationFail},
		{Name: "c4", Phase: trafficv1alpha1.ClusterRemoved, DrainStartTime: started, RemovalTime: removed, Message: "GatePassed"},
	}, metav1.Condition{Type: trafficv1alpha1.ConditionPrometheusReachable, Status: metav1.ConditionFalse, Reason: trafficv1alpha1.ReasonUnauthorized, Message: "Prometheus answered 401"})
	rfc := func(t *metav1.Time) string { return t.UTC().Format(time.RFC3339) }
	tests := map[string]struct {
		want, notWant []string
	}{
		"drain-started": {
			want:    []string{"gateways/migrate: drain started", "cluster c1: Draining since " + rfc(started), "expected out " + rfc(estimated), "waiting for 3 passing checks", "cluster c3: Held"},
			notWant: []string{"c2", "c4", "<no value>"},
		},
		"drain-stalled": {
			want:    []string{"drain stalled", "cluster c1: Draining", "last check Fail (42)"},
			notWant: []string{"c2", "c3", "c4", "<no value>", "stalled:", "Likely cause"},
		},
		"drain-held": {
			want:    []string{"drain held", "cluster c3: Held, draining since " + rfc(started), "force-remove"},
			notWant: []string{"c1", "c2", "c4", "<no value>"},
		},
		"cluster-removed": {
			want:    []string{"cluster removed", "cluster c4: Removed at " + rfc(removed), "GatePassed"},
			notWant: []string{"c1", "c2", "c3", "<no value>"},
		},
		"policy-error": {
			want:    []string{"error", "PrometheusReachable is False (Unauthorized): Prometheus answered 401"},
			notWant: []string{"<no value>"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := defaultAPI(t, nil)
			rec := &recorder{}
			a.AddNotificationService("test", rec)
			if err := a.Send(obj, []string{name}, services.Destination{Service: "test"}); err != nil {
				t.Fatal(err)
			}
			msg := rec.sent[0].Message
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the message lacks %q:\n%s", w, msg)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("the message holds %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestStalledTemplate: the drain-stalled message names a stalled cluster as such,
// even one whose last check is not Fail, and ends with the likely cause and the remedy.
func TestStalledTemplate(t *testing.T) {
	obj := samplePolicy([]trafficv1alpha1.ClusterStatus{
		{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: at(3 * time.Minute), LastResult: trafficv1alpha1.EvaluationNoData, Stalled: true, Message: "drain stalled: ..."},
		{Name: "c2", Phase: trafficv1alpha1.ClusterActive},
	})
	a := defaultAPI(t, nil)
	rec := &recorder{}
	a.AddNotificationService("test", rec)
	if err := a.Send(obj, []string{"drain-stalled"}, services.Destination{Service: "test"}); err != nil {
		t.Fatal(err)
	}
	msg := rec.sent[0].Message
	for _, w := range []string{"cluster c1: Draining since", "stalled: its traffic has not fallen by half since DNS withdrew it",
		"clients on long-lived connections (HTTP/2, gRPC, pooled keep-alive) or resolvers that ignore the TTL",
		"keepAliveMaxTime", "docs/troubleshooting.md#stalled-drains", "maxDrainDuration", "force-remove"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the message lacks %q:\n%s", w, msg)
		}
	}
	for _, w := range []string{"c2", "<no value>"} {
		if strings.Contains(msg, w) {
			t.Errorf("the message holds %q:\n%s", w, msg)
		}
	}
}

// TestTriggerResultShape pins what the engine's state keys on, so that an engine
// upgrade that changes it is seen here.
func TestTriggerResultShape(t *testing.T) {
	a := defaultAPI(t, nil)
	obj := samplePolicy([]trafficv1alpha1.ClusterStatus{{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: at(time.Minute)}})
	res, err := a.RunTrigger("on-drain-started", obj)
	if err != nil {
		t.Fatal(err)
	}
	want := triggers.ConditionResult{Triggered: true, Templates: []string{"drain-started"}}
	if len(res) != 1 || res[0].Triggered != want.Triggered || strings.Join(res[0].Templates, ",") != "drain-started" || !strings.HasPrefix(res[0].OncePer, "c1@") {
		t.Errorf("got %+v", res)
	}
}

// TestPolicyObject: the engine sees a row's phase, times and message, not its
// history, resolved query or check detail, nor the managed fields; the cached policy
// keeps them.
func TestPolicyObject(t *testing.T) {
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Status: trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: []trafficv1alpha1.ClusterStatus{{
			Name: "c1", Phase: trafficv1alpha1.ClusterDraining, Message: "waiting", LastValue: "3",
			History: []trafficv1alpha1.CheckRecord{{Result: "Fail"}}, ResolvedQuery: "q", LastCheckDetail: "d",
		}}},
	}
	got, err := policyObject(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetKind() != "TrafficMigrationPolicy" || got.GetAPIVersion() != trafficv1alpha1.SchemeGroupVersion.String() {
		t.Errorf("kind %q, apiVersion %q", got.GetKind(), got.GetAPIVersion())
	}
	row := got.Object["status"].(map[string]any)["clusters"].([]any)[0].(map[string]any)
	want := map[string]any{"name": "c1", "phase": "Draining", "message": "waiting", "lastValue": "3"}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("row %v, want %v", row, want)
	}
	if mf := got.GetManagedFields(); len(mf) != 0 {
		t.Errorf("managed fields kept: %v", mf)
	}
	if r := p.Status.Clusters[0]; len(r.History) != 1 || r.ResolvedQuery != "q" || len(p.ManagedFields) != 1 {
		t.Errorf("the cached policy changed: %+v", p)
	}
}
