// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package check

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/printer"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// querier answers every query with the value of the cluster named in it.
type querier map[string]float64

func (q querier) Query(_ context.Context, query string, _ time.Time) (model.Value, error) {
	for cluster, v := range q {
		if strings.Contains(query, `"`+cluster+`"`) {
			return model.Vector{{Value: model.SampleValue(v)}}, nil
		}
	}
	return model.Vector{}, nil
}

func TestRun(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	hub := func(ready ...string) *gather.Hub {
		return &gather.Hub{Input: decision.Input{
			RealKnown:       true,
			Real:            []decision.Group{{Clusters: []string{"c2"}}},
			Proxy:           []decision.Group{{Clusters: []string{"c1", "c2"}}},
			ManagedClusters: sets.New("c1", "c2"),
			GatewayReady:    sets.New(ready...),
		}}
	}
	tests := map[string]struct {
		policy    *trafficv1alpha1.TrafficMigrationPolicy
		hub       *gather.Hub
		values    querier
		wantGate  GateReport
		wantWaits string
	}{
		"the third pass opens the gate": {
			policy: policyWith(drainingC1(now, 2, time.Minute)), hub: hub("c1", "c2"), values: querier{"c1": 1, "c2": 99},
			wantGate: GateReport{WouldRemove: true, RemovalReason: "GatePassed", CheckCounts: true, Needed: 3},
		},
		"a fail starts the run over": {
			policy: policyWith(drainingC1(now, 2, time.Minute)), hub: hub("c1", "c2"), values: querier{"c1": 50, "c2": 50},
			wantGate: GateReport{CheckCounts: true, Needed: 3, ConsecutiveSuccesses: ptr(0)}, wantWaits: "waiting for 3 more passing checks",
		},
		"a check before the next one is due does not count": {
			policy: policyWith(drainingC1(now, 2, 10*time.Second)), hub: hub("c1", "c2"), values: querier{"c1": 1, "c2": 99},
			wantGate: GateReport{CheckCounts: false, Needed: 3, ConsecutiveSuccesses: ptr(2)}, wantWaits: "waiting for 1 more passing check",
		},
		"no other ready Gateway keeps it": {
			policy: policyWith(drainingC1(now, 2, time.Minute)), hub: hub("c1"), values: querier{"c1": 1, "c2": 99},
			wantGate: GateReport{CheckCounts: true, Needed: 3, ConsecutiveSuccesses: ptr(3)}, wantWaits: "no other cluster has the Gateway ready",
		},
		"a drain the manager has not recorded starts now": {
			policy: policyWith(), hub: hub("c1", "c2"), values: querier{"c1": 1, "c2": 99},
			wantGate: GateReport{CheckCounts: true, Needed: 3, ConsecutiveSuccesses: ptr(1)}, wantWaits: "minimum drain duration not reached",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := run(context.Background(), tc.policy, readFrom(tc.hub, tc.policy, now), tc.values)
			if len(r.Clusters) != 2 {
				t.Fatalf("want rows for c1 and c2, got %+v", r.Clusters)
			}
			c1, c2 := r.Clusters[0], r.Clusters[1]
			if c2.Gate != nil || c2.Phase != trafficv1alpha1.ClusterActive || c2.Result == "" {
				t.Errorf("c2 is active and checked: %+v", c2)
			}
			if c1.Gate == nil {
				t.Fatalf("c1 drains and has no gate: %+v", c1)
			}
			got := *c1.Gate
			if !strings.Contains(got.WaitingFor, tc.wantWaits) {
				t.Errorf("waiting for %q, want %q in it", got.WaitingFor, tc.wantWaits)
			}
			got.WaitingFor, got.DrainStartTime, got.NextCheck = "", nil, nil
			if got.WouldRemove != tc.wantGate.WouldRemove || got.RemovalReason != tc.wantGate.RemovalReason ||
				got.CheckCounts != tc.wantGate.CheckCounts || got.Needed != tc.wantGate.Needed ||
				(got.ConsecutiveSuccesses == nil) != (tc.wantGate.ConsecutiveSuccesses == nil) ||
				(got.ConsecutiveSuccesses != nil && *got.ConsecutiveSuccesses != *tc.wantGate.ConsecutiveSuccesses) {
				t.Errorf("gate %+v (successes %v), want %+v (successes %v)", got, deref(got.ConsecutiveSuccesses), tc.wantGate, deref(tc.wantGate.ConsecutiveSuccesses))
			}
			var b bytes.Buffer
			if err := render(&b, &printer.Flags{}, r); err != nil || !strings.Contains(b.String(), c1.Query) {
				t.Errorf("text output lacks the query (%v):\n%s", err, b.String())
			}
		})
	}
}

// readFrom fills in what gather.Read takes from the policy and the time.
func readFrom(hub *gather.Hub, policy *trafficv1alpha1.TrafficMigrationPolicy, now time.Time) *gather.Hub {
	h := *hub
	h.Input.Now, h.Input.Policy, h.Input.Previous = now, decision.PolicyFromSpec(&policy.Spec), policy.Status.Clusters
	return &h
}

// policyWith is the tests' policy, ns/p with testSpec, whose status has rows.
func policyWith(rows ...trafficv1alpha1.ClusterStatus) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec:       testSpec(),
		Status:     trafficv1alpha1.TrafficMigrationPolicyStatus{Clusters: rows},
	}
}

// drainingC1 is c1's row at now: draining for an hour, with a run of successes passing
// checks, the last lastCheck ago.
func drainingC1(now time.Time, successes int32, lastCheck time.Duration) trafficv1alpha1.ClusterStatus {
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	return trafficv1alpha1.ClusterStatus{Name: "c1", Phase: trafficv1alpha1.ClusterDraining, DrainStartTime: ago(time.Hour),
		ConsecutiveSuccesses: successes, LastEvaluationTime: ago(lastCheck), LastResult: trafficv1alpha1.EvaluationPass}
}

// testSpec is the spec of the tests' policy: a 5% share, checked every 30 s, 3 times
// in a row, after a minute's drain.
func testSpec() trafficv1alpha1.TrafficMigrationPolicySpec {
	return trafficv1alpha1.TrafficMigrationPolicySpec{
		PlacementRef:         trafficv1alpha1.PlacementReference{Name: "real"},
		TargetRef:            trafficv1alpha1.GatewayReference{Name: "gw"},
		TrafficShare:         &trafficv1alpha1.TrafficShare{Metric: "m", MaxPercent: 5},
		Interval:             &metav1.Duration{Duration: 30 * time.Second},
		ConsecutiveSuccesses: 3,
		MinDrainDuration:     &metav1.Duration{Duration: time.Minute},
	}
}

func ptr(n int32) *int32 { return &n }

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestParseManifest(t *testing.T) {
	tests := map[string]struct {
		in      string
		wantErr string
	}{
		"a policy": {in: "apiVersion: traffic.open-cluster-management.io/v1alpha1\nkind: TrafficMigrationPolicy\nmetadata: {name: p}\nspec: {placementRef: {name: r}}\n"},
		"misspelt field": {
			in:      "apiVersion: traffic.open-cluster-management.io/v1alpha1\nkind: TrafficMigrationPolicy\nmetadata: {name: p}\nspec: {placement: {name: r}}\n",
			wantErr: `unknown field "placement"`,
		},
		"another kind": {in: "apiVersion: v1\nkind: Secret\nmetadata: {name: p}\n", wantErr: "want kind TrafficMigrationPolicy"},
		"no name":      {in: "apiVersion: traffic.open-cluster-management.io/v1alpha1\nkind: TrafficMigrationPolicy\n", wantErr: "metadata.name is not set"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseManifest([]byte(tc.in))
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// With spec.dns, the dry run decides as the manager does: a draining cluster still in
// the applied records is not removed, whatever its checks say.
func TestDNSAsLastSeen(t *testing.T) {
	p := &trafficv1alpha1.TrafficMigrationPolicy{}
	if got := dnsAsLastSeen(p); got != nil {
		t.Errorf("without spec.dns: %+v, want nil", got)
	}
	p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.example.com"}}
	p.Status.Clusters = []trafficv1alpha1.ClusterStatus{{Name: "c1"}, {Name: "c2"}}
	if got := dnsAsLastSeen(p); got == nil || got.Withdrawn.Len() != 0 {
		t.Errorf("nothing published yet: %+v, want nothing withdrawn", got)
	}
	p.Status.DNS = &trafficv1alpha1.DNSStatus{PublishedClusters: []string{"c2"}, Generation: 2, ObservedGeneration: 1}
	if got := dnsAsLastSeen(p); got == nil || got.Withdrawn.Len() != 0 {
		t.Errorf("not applied yet: %+v, want nothing withdrawn", got)
	}
	p.Status.DNS.ObservedGeneration = 2
	// Mode Authoritative (the default): read by external-dns is not enough; the
	// manager's row says what the name servers answer.
	p.Status.Clusters[0].Message = "still published in DNS: name server 192.0.2.53:53 answers 192.0.2.11 for gw.example.com A; minimum drain duration not reached"
	if got := dnsAsLastSeen(p); got == nil || got.Withdrawn.Len() != 0 ||
		got.Waiting["c1"] != "name server 192.0.2.53:53 answers 192.0.2.11 for gw.example.com A" {
		t.Errorf("read, the name servers not confirmed: %+v, want nothing withdrawn and c1 waiting on the name server", got)
	}
	p.Status.Clusters[0].DNSWithdrawalTime = &metav1.Time{Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	if got := dnsAsLastSeen(p); got == nil || !got.Withdrawn.Has("c1") || got.Withdrawn.Has("c2") {
		t.Errorf("read and confirmed: %+v, want c1 withdrawn", got)
	}
	p.Status.Clusters[0].DNSWithdrawalTime = nil
	p.Spec.DNS.Verify = &trafficv1alpha1.DNSVerification{Mode: trafficv1alpha1.DNSVerifyExternalDNS}
	if got := dnsAsLastSeen(p); got == nil || !got.Withdrawn.Has("c1") || got.Withdrawn.Has("c2") {
		t.Errorf("mode ExternalDNS, applied: %+v, want c1 withdrawn", got)
	}
	p.Status.Conditions = []metav1.Condition{{Type: trafficv1alpha1.ConditionDNSPublished, Status: metav1.ConditionFalse,
		Reason: trafficv1alpha1.ReasonDNSEndpointCRDNotInstalled}}
	if got := dnsAsLastSeen(p); got != nil {
		t.Errorf("no DNSEndpoint CRD: %+v, want nil (drains do not follow DNS)", got)
	}
}

// TestGateSentence: a gate that waits says so with the shared formatting of the
// views: the run of passes as "2/3" or "3/3 met", times as kubectl writes them.
func TestGateSentence(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	for want, g := range map[string]*GateReport{
		"waits: minimum drain duration not reached (passing checks in a row: 2/3; next check in 12s)": {
			WaitingFor: "minimum drain duration not reached", ConsecutiveSuccesses: ptr(2), Needed: 3, CheckCounts: true, NextCheck: at(12 * time.Second)},
		"waits: another ready Gateway (passing checks in a row: 3/3 met; this check does not count: the manager's next check is not due yet); out of DNS for 15m": {
			WaitingFor: "another ready Gateway", ConsecutiveSuccesses: ptr(5), Needed: 3, NextCheck: at(-time.Second), DNSWithdrawalTime: at(-15 * time.Minute)},
		"the manager would remove it now: its removal gate passes": {WouldRemove: true, RemovalReason: string(decision.RemovalGatePassed)},
	} {
		if got := gateSentence(g, now); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

// TestRenderStructured: -o json and -o yaml write the same report, which reads back.
func TestRenderStructured(t *testing.T) {
	r := &Report{Policy: "move", Namespace: "gw", Source: "the hub", Prometheus: "http://prom", Expectation: "<= 5",
		Time:     metav1.NewTime(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)),
		Clusters: []ClusterReport{{Name: "cluster1", Phase: trafficv1alpha1.ClusterDraining, Result: trafficv1alpha1.EvaluationPass, Value: "2.5"}}}
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := render(&out, &printer.Flags{Output: format}, r); err != nil {
			t.Fatal(err)
		}
		var back Report
		if err := yaml.UnmarshalStrict(out.Bytes(), &back); err != nil {
			t.Fatalf("-o %s does not read back: %v\n%s", format, err, out.String())
		}
		if back.Policy != r.Policy || !back.Time.Equal(&r.Time) || len(back.Clusters) != 1 || back.Clusters[0] != r.Clusters[0] {
			t.Errorf("-o %s read back as %+v", format, back)
		}
		if back.APIVersion != "cli.traffic.open-cluster-management.io/v1alpha1" || back.Kind != "CheckReport" {
			t.Errorf("-o %s: apiVersion %q, kind %q", format, back.APIVersion, back.Kind)
		}
	}
}

// TestRenderOtherFormats: -o name prints the policy as kubectl names it, a jsonpath
// template reads the report's fields, and -o wide adds each cluster's reason.
func TestRenderOtherFormats(t *testing.T) {
	r := &Report{Policy: "move", Namespace: "gw", Source: "the hub", Prometheus: "http://prom",
		Clusters: []ClusterReport{
			{Name: "cluster1", Phase: trafficv1alpha1.ClusterDraining, Result: trafficv1alpha1.EvaluationPass, Value: "2.5", Reason: "QuerySucceeded"},
			{Name: "cluster2", Phase: trafficv1alpha1.ClusterActive, Result: trafficv1alpha1.EvaluationFail, Value: "40", Reason: "QuerySucceeded"},
		}}
	for format, want := range map[string]string{
		"name":                                 "trafficmigrationpolicy.traffic.open-cluster-management.io/move\n",
		"jsonpath={.clusters[*].value}":        "2.5 40",
		"go-template={{.kind}} {{.policy}}":    "CheckReport move",
		"jsonpath={.clusters[0].phase}":        "Draining",
		"jsonpath-as-json={.clusters[1].name}": "[\n    \"cluster2\"\n]\n",
	} {
		f := &printer.Flags{Output: format}
		if err := f.Validate(); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		var out bytes.Buffer
		if err := render(&out, f, r); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		if out.String() != want {
			t.Errorf("-o %s printed %q, want %q", format, out.String(), want)
		}
	}
	var narrow, wide bytes.Buffer
	if err := render(&narrow, &printer.Flags{}, r); err != nil {
		t.Fatal(err)
	}
	if err := render(&wide, &printer.Flags{Output: "wide"}, r); err != nil {
		t.Fatal(err)
	}
	header := func(s string) []string {
		return strings.Fields(strings.Split(strings.SplitN(s, "\n\n", 2)[1], "\n")[0])[6:]
	}
	if got := strings.Join(header(wide.String()), " "); got != "REASON" {
		t.Errorf("-o wide adds %q to the table, want REASON:\n%s", got, wide.String())
	}
	if got := header(narrow.String()); len(got) != 0 {
		t.Errorf("the text table has %q after REMOVAL:\n%s", got, narrow.String())
	}
	var noHeaders bytes.Buffer
	if err := render(&noHeaders, &printer.Flags{NoHeaders: true}, r); err != nil {
		t.Fatal(err)
	}
	if table := strings.SplitN(noHeaders.String(), "\n\n", 2)[1]; strings.Contains(noHeaders.String(), "REMOVAL") || !strings.HasPrefix(table, r.Clusters[0].Name+"   ") {
		t.Errorf("--no-headers printed the table's header, or no table:\n%s", noHeaders.String())
	}
}

// TestRunReplacement: with spec.replacement.metricsQuery, check runs the replacement
// check of each cluster of the real Placement and says whether it counts, and the
// draining cluster's gate waits for it.
func TestRunReplacement(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	policy := policyWith(drainingC1(now, 2, time.Minute))
	policy.Spec.Replacement = &trafficv1alpha1.Replacement{MinReadyClusters: 1,
		MetricsQuery: `rps{cluster={{ .Cluster.Name | quote }}}`, ExpectedMetricsResult: "> 10"}
	hub := &gather.Hub{Input: decision.Input{
		RealKnown:       true,
		Real:            []decision.Group{{Clusters: []string{"c2"}}},
		Proxy:           []decision.Group{{Clusters: []string{"c1", "c2"}}},
		ManagedClusters: sets.New("c1", "c2"),
		GatewayReady:    sets.New("c1", "c2"),
	}}
	for name, tc := range map[string]struct {
		c2         float64
		wantCounts bool
		wantRemove bool
	}{
		"the replacement serves":            {c2: 99, wantCounts: true, wantRemove: true},
		"the replacement serves too little": {c2: 5},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(context.Background(), policy, readFrom(hub, policy, now), querier{"c1": 1, "c2": tc.c2})
			c1, c2 := r.Clusters[0], r.Clusters[1]
			if c1.Replacement != nil || c2.Replacement == nil {
				t.Fatalf("want a replacement check of c2 only: c1 %+v, c2 %+v", c1.Replacement, c2.Replacement)
			}
			if c2.Replacement.Counts != tc.wantCounts || !strings.Contains(c2.Replacement.Query, `"c2"`) {
				t.Errorf("c2's replacement check %+v, want counts %v", *c2.Replacement, tc.wantCounts)
			}
			if c1.Gate == nil || c1.Gate.WouldRemove != tc.wantRemove {
				t.Fatalf("c1's gate %+v, want removal %v", c1.Gate, tc.wantRemove)
			}
			if !tc.wantRemove && !strings.Contains(c1.Gate.WaitingFor, "passing replacement.metricsQuery") {
				t.Errorf("c1 waits for %q", c1.Gate.WaitingFor)
			}
			var b bytes.Buffer
			if err := render(&b, &printer.Flags{}, r); err != nil || !strings.Contains(b.String(), "replacement: "+c2.Replacement.CountsWhy) {
				t.Errorf("text output lacks the replacement check (%v):\n%s", err, b.String())
			}
		})
	}
}

// spacingQuerier is querier that also answers the manager's measure of the sample
// spacing of trafficShare's series (promcheck.SampleSpacingQuery over its first
// lookback, 8 windows) with samples: how many samples one series holds in it.
type spacingQuerier struct {
	querier
	spec    *trafficv1alpha1.TrafficShare
	samples float64
}

func (q spacingQuerier) Query(ctx context.Context, query string, at time.Time) (model.Value, error) {
	window, err := model.ParseDuration(q.spec.WithDefaults().Window)
	if err != nil {
		return nil, err
	}
	if query == promcheck.SampleSpacingQuery(q.spec, promcheck.SpacingLookbacks(time.Duration(window))[0]) {
		return model.Vector{{Value: model.SampleValue(q.samples)}}, nil
	}
	return q.querier.Query(ctx, query, at)
}

// TestWindowTooShort: check measures the sample spacing of trafficShare's series as
// the manager does, and warns in the manager's words when the window holds fewer than
// 4 samples: a 3s window over a series sampled every second (24 samples in 8 windows);
// a 8s window over the same series holds enough.
func TestWindowTooShort(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for window, want := range map[string]string{
		"3s": "trafficShare.window 3s holds about 3 samples of each series, which Prometheus has every 1s: shares jump or vanish between checks. Set the window to at least 4s",
		"8s": "",
	} {
		t.Run(window, func(t *testing.T) {
			spec := testSpec()
			spec.TrafficShare.Window = window
			p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: spec}
			hub := &gather.Hub{Input: decision.Input{RealKnown: true, Real: []decision.Group{{Clusters: []string{"c2"}}}, ManagedClusters: sets.New("c2")}}
			d, _ := model.ParseDuration(window)
			q := spacingQuerier{querier: querier{"c2": 99}, spec: spec.TrafficShare, samples: (8 * time.Duration(d)).Seconds()}
			r := run(context.Background(), p, readFrom(hub, p, now), q)
			if !strings.HasPrefix(r.WindowNote, want) || (want == "") != (r.WindowNote == "") {
				t.Errorf("window note %q, want %q", r.WindowNote, want)
			}
			var b bytes.Buffer
			if err := render(&b, &printer.Flags{}, r); err != nil {
				t.Fatal(err)
			}
			if warned := strings.Contains(b.String(), "Warning (WindowTooShort): trafficShare.window"); warned != (want != "") {
				t.Errorf("warned %t, want %t:\n%s", warned, want != "", b.String())
			}
		})
	}
}
