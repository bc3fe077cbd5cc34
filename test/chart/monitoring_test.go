// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"

	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// monitoringOn turns every part of the chart's monitoring on.
func monitoringOn() map[string]any {
	return map[string]any{"monitoring": map[string]any{
		"serviceMonitor":   map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
		"prometheusRule":   map[string]any{"enabled": true},
		"grafanaDashboard": map[string]any{"enabled": true, "namespace": "grafana"},
	}}
}

// TestChartMonitoring: with monitoring on, the chart renders a metrics Service that
// selects the manager's Pods and port, a ServiceMonitor of that Service that keeps the
// series' own namespace label, the PrometheusRule, and the Grafana dashboard in a
// ConfigMap labelled for Grafana's sidecar, which parses and queries the manager's
// metrics. With monitoring off (the default), TestChartMatchesManifests proves none of
// them is rendered.
func TestChartMonitoring(t *testing.T) {
	got := render(t, monitoringOn())
	svc := got["Service/"+namespace+"/traffic-migration-manager-metrics"]
	if svc == nil {
		t.Fatalf("no metrics Service; rendered %v", keys(got))
	}
	deploy := got["Deployment/"+namespace+"/traffic-migration-manager"]
	podLabels := dig(deploy, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range dig(svc, "spec", "selector").(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("the Service selects %s=%v, which the manager's Pods lack (%v)", k, v, podLabels)
		}
	}
	container := dig(deploy, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	hasPort := false
	for _, p := range container["ports"].([]any) {
		hasPort = hasPort || p.(map[string]any)["name"] == dig(svc, "spec", "ports").([]any)[0].(map[string]any)["targetPort"]
	}
	if !hasPort {
		t.Errorf("the Service's targetPort is no named port of the manager: %v", container["ports"])
	}

	sm := got["ServiceMonitor/"+namespace+"/traffic-migration-manager"]
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	svcLabels := dig(svc, "metadata", "labels").(map[string]any)
	for k, v := range dig(sm, "spec", "selector", "matchLabels").(map[string]any) {
		if svcLabels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v, which the Service lacks", k, v)
		}
	}
	endpoint := dig(sm, "spec", "endpoints").([]any)[0].(map[string]any)
	if endpoint["port"] != "metrics" || endpoint["honorLabels"] != true || endpoint["path"] != "/metrics" {
		t.Errorf("ServiceMonitor endpoint: %v", endpoint)
	}
	if dig(sm, "metadata", "labels", "release") != "kube-prometheus-stack" {
		t.Errorf("the ServiceMonitor lacks the labels asked for: %v", dig(sm, "metadata", "labels"))
	}

	rule := got["PrometheusRule/"+namespace+"/traffic-migration"]
	if rule == nil {
		t.Fatal("no PrometheusRule")
	}
	var alerts []string
	for _, g := range dig(rule, "spec", "groups").([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			alerts = append(alerts, r["alert"].(string))
			desc, _ := dig(r, "annotations", "description").(string)
			if len(desc) < 100 || !strings.Contains(desc, "{{ $labels.") {
				t.Errorf("alert %s should say what to do, naming the policy: %q", r["alert"], desc)
			}
		}
	}
	want := []string{"TrafficMigrationDrainHeld", "TrafficMigrationPrometheusUnreachable", "TrafficMigrationProxyPlacementNotWritten", "TrafficMigrationDrainTooLong", "TrafficMigrationNoLeader"}
	if !reflect.DeepEqual(alerts, want) {
		t.Errorf("alerts: got %v, want %v", alerts, want)
	}

	cm := got["ConfigMap/grafana/traffic-migration-grafana-dashboard"]
	if cm == nil {
		t.Fatalf("no Grafana dashboard ConfigMap in namespace grafana; rendered %v", keys(got))
	}
	if dig(cm, "metadata", "labels", "grafana_dashboard") != "1" {
		t.Errorf("the dashboard ConfigMap lacks the sidecar's label: %v", dig(cm, "metadata", "labels"))
	}
	var dashboard struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(dig(cm, "data", "traffic-migration.json").(string)), &dashboard); err != nil {
		t.Fatalf("the Grafana dashboard is not JSON: %v", err)
	}
	var exprs []string
	for _, p := range dashboard.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, metric := range []string{
		"traffic_migration_draining_clusters", "traffic_migration_removals_total", "traffic_migration_evaluations_total",
		"traffic_migration_query_duration_seconds_bucket", "traffic_migration_api_writes_total", "workqueue_depth",
		"traffic_migration_check_value", "traffic_migration_check_threshold", "traffic_migration_drain_duration_seconds_bucket",
	} {
		if !strings.Contains(all, metric) {
			t.Errorf("the Grafana dashboard shows nothing of %s", metric)
		}
	}
	// Every series the dashboard and the alerts query is one the manager exports.
	known := exported(t)
	for _, text := range []string{all, string(mustRuleText(t))} {
		for _, name := range seriesNames.FindAllString(text, -1) {
			if !known[name] {
				t.Errorf("%s is queried by the dashboard or the alerts, but the manager exports no such series", name)
			}
		}
	}
}

// seriesNames finds the manager's series names in PromQL.
var seriesNames = regexp.MustCompile(`\b(traffic_migration_[a-z0-9_]+|workqueue_[a-z_]+)\b`)

// mustRuleText is the chart's alert rules as Prometheus loads them.
func mustRuleText(t *testing.T) []byte {
	t.Helper()
	rules, err := testbed.ChartAlertRules(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// exported are the names of the series the manager exports: those the policy
// controller registers, read from their descriptions (a histogram's _bucket, _sum and
// _count too), and those of the process around it, which pkg/hub/process's tests and
// pkg/hub's read from a running manager.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{
		"traffic_migration_manager_leader": true, "traffic_migration_api_writes_total": true,
		"workqueue_depth": true, "workqueue_adds_total": true, "workqueue_retries_total": true,
		"workqueue_longest_running_processor_seconds": true, "workqueue_unfinished_work_seconds": true,
	}
	for _, h := range []string{"workqueue_queue_duration_seconds", "workqueue_work_duration_seconds"} {
		names[h+"_bucket"], names[h+"_sum"], names[h+"_count"] = true, true, true
	}
	rec := &descRecorder{names: names}
	policy.NewMetrics(rec)
	if len(rec.names) < 20 {
		t.Fatalf("the policy controller's metrics were not read: %v", rec.names)
	}
	return names
}

// descRecorder is a prometheus.Registerer that only notes the names its collectors
// describe.
type descRecorder struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	descs := make(chan *prometheus.Desc)
	go func() { c.Describe(descs); close(descs) }()
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		r.names[m[1]] = true
		if _, ok := c.(prometheus.ObserverVec); ok || isHistogram(c) {
			r.names[m[1]+"_bucket"], r.names[m[1]+"_sum"], r.names[m[1]+"_count"] = true, true, true
		}
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// isHistogram tells a plain histogram among the collectors.
func isHistogram(c prometheus.Collector) bool {
	_, ok := c.(prometheus.Histogram)
	return ok
}

// TestChartSchema: the values schema accepts the defaults and monitoring on, and
// rejects mistakes with a message that names the value.
func TestChartSchema(t *testing.T) {
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if chart.Schema == nil {
		t.Fatal("the chart has no values.schema.json")
	}
	validate := func(values map[string]any) error {
		t.Helper()
		vals, err := chartutil.ToRenderValues(chart, values, chartutil.ReleaseOptions{Name: "traffic-migration", Namespace: namespace}, chartutil.DefaultCapabilities)
		if err != nil {
			return err
		}
		return chartutil.ValidateAgainstSchema(chart, vals["Values"].(chartutil.Values))
	}
	for name, values := range map[string]map[string]any{
		"defaults": nil, "monitoring on": monitoringOn(), "every value set": everyValue,
		// helm hands a subchart its parent's globals.
		"global values": {"global": map[string]any{"foo": "bar"}},
	} {
		if err := validate(values); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, tc := range map[string]struct {
		values map[string]any
		want   string
	}{
		"a misspelt value":        {map[string]any{"replica": 2}, "replica"},
		"a misspelt monitoring":   {map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enable": true}}}, "enable"},
		"not a duration":          {map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"prometheusUnreachableFor": "five minutes"}}}, "prometheusUnreachableFor"},
		"a string for a boolean":  {map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"enabled": "yes"}}}, "enabled"},
		"a negative replica":      {map[string]any{"replicas": -1}, "replicas"},
		"a bad pull policy":       {map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		"a port out of range":     {map[string]any{"monitoring": map[string]any{"service": map[string]any{"port": 70000}}}, "port"},
		"a zero drain-too-long x": {map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"drainTooLongFactor": 0}}}, "drainTooLongFactor"},
		"a drain action to come":  {map[string]any{"manager": map[string]any{"drainCeiling": map[string]any{"action": "Later"}}}, "action"},
		"no series":               {map[string]any{"manager": map[string]any{"prometheus": map[string]any{"maxSeries": 0}}}, "maxSeries"},
		"a global that is a list": {map[string]any{"global": []any{"foo"}}, "global"},
	} {
		err := validate(tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error naming %q, got %v", name, tc.want, err)
		}
	}
}

// TestChartLintMonitoring lints the chart as `helm lint` does with monitoring on:
// no errors and no warnings, the schema included. TestChartLint lints the defaults.
func TestChartLintMonitoring(t *testing.T) {
	result := lint.All(chartDir, monitoringOn(), namespace, false)
	for _, m := range result.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
	bad := lint.All(chartDir, map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"drainHeldFor": "soon"}}}, namespace, false)
	failed := false
	for _, m := range bad.Messages {
		failed = failed || m.Severity >= support.ErrorSev
	}
	if !failed {
		t.Error("helm lint accepts values the schema forbids")
	}
}

// TestAlertRules checks the PrometheusRule's rules with promtool, as Prometheus
// would load them (`promtool check rules`), and runs their unit tests in
// testdata/alerts_test.yaml (`promtool test rules`): each alert fires on the series
// the manager exports when it should, and not before.
func TestAlertRules(t *testing.T) {
	promtool, err := testbed.ProgramPromtool.Path()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules, err := testbed.ChartAlertRules(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		} else {
			t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

func dig(obj any, path ...string) any {
	for _, p := range path {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[p]
	}
	return obj
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestHelmBinaryMonitoring runs the real helm (TESTBED_HELM, which the Makefile sets
// where it builds helm) on the chart with monitoring off and on: `helm lint` passes
// both and fails a value the schema forbids, and `helm template` renders the
// monitoring objects only when they are asked for.
func TestHelmBinaryMonitoring(t *testing.T) {
	helm := testbed.Getenv("TESTBED_HELM")
	if helm == "" {
		t.Skip("TESTBED_HELM is not set: the real helm is not built here; TestChartLintMonitoring lints with helm's own code")
	}
	on := []string{
		"--set", "monitoring.serviceMonitor.enabled=true",
		"--set", "monitoring.prometheusRule.enabled=true",
		"--set", "monitoring.grafanaDashboard.enabled=true",
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(helm, args...).CombinedOutput()
		return string(out), err
	}
	for name, args := range map[string][]string{"off": nil, "on": on} {
		if out, err := run(append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
			t.Errorf("helm lint, monitoring %s: %v\n%s", name, err, out)
		}
	}
	if out, err := run("lint", chartDir, "--set", "monitoring.prometheusRule.drainHeldFor=soon"); err == nil || !strings.Contains(out, "drainHeldFor") {
		t.Errorf("helm lint should refuse drainHeldFor=soon, naming it: %v\n%s", err, out)
	}
	kinds := []string{"kind: ServiceMonitor", "kind: PrometheusRule", "name: traffic-migration-grafana-dashboard", "name: traffic-migration-manager-metrics"}
	off, err := run("template", "traffic-migration", chartDir, "--namespace", namespace)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, off)
	}
	all, err := run(append([]string{"template", "traffic-migration", chartDir, "--namespace", namespace}, on...)...)
	if err != nil {
		t.Fatalf("helm template, monitoring on: %v\n%s", err, all)
	}
	for _, k := range kinds {
		if strings.Contains(off, k) {
			t.Errorf("monitoring is off by default, but helm template renders %q", k)
		}
		if !strings.Contains(all, k) {
			t.Errorf("with monitoring on, helm template does not render %q", k)
		}
	}
}
