// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestAlertPrometheusUnreachable: the test bed's Prometheus loads the chart's alert
// rules (rendered from the chart, with a 10s wait instead of 5m) and scrapes the
// manager, as a ServiceMonitor of the chart would (keeping the series' labels). A
// policy whose Prometheus Secret names an address where nothing listens drains a
// cluster: its checks fail, and TrafficMigrationPrometheusUnreachable fires for that
// policy, with the reason.
func TestAlertPrometheusUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rules, err := testbed.ChartAlertRules(map[string]any{"prometheusUnreachableFor": "10s"})
	if err != nil {
		t.Fatal(err)
	}
	rulesPath := filepath.Join(t.TempDir(), "traffic-migration-alerts.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := bed.Prometheus.SetRuleFiles(ctx, []string{rulesPath}); err != nil {
		t.Fatalf("load the chart's rules into Prometheus: %v", err)
	}
	t.Cleanup(func() {
		if err := bed.Prometheus.SetRuleFiles(context.Background(), nil); err != nil {
			t.Errorf("unload the rules: %v", err)
		}
	})
	metrics, err := url.Parse(manager.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf("manager-%d", time.Now().UnixNano())
	addScrapeJob(t, testbed.ScrapeConfig{JobName: job, Targets: []string{metrics.Host}, HonorLabels: true})
	t.Cleanup(func() { removeScrapeJob(t, job) })

	m := newMigration(t, "alert")
	f := m.f
	// Nothing listens on port 1 of the loopback address: every check is refused.
	f.prometheusSecret(t, m.ns, "unreachable", map[string]string{"url": "http://127.0.0.1:1"})
	p := m.policy()
	p.Spec.PrometheusSecret.Name = "unreachable"
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	m.moveToC2(t)
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
		return c != nil && c.Reason == trafficv1alpha1.ReasonUnreachable
	})

	client, err := api.NewClient(api.Config{Address: bed.Prometheus.URL})
	if err != nil {
		t.Fatal(err)
	}
	prom := promv1.NewAPI(client)
	var seen []promv1.Alert
	var firing *promv1.Alert
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		res, err := prom.Alerts(ctx)
		if err != nil {
			return false, err
		}
		seen = nil
		for i, a := range res.Alerts {
			if a.Labels["namespace"] != model.LabelValue(m.ns) {
				continue
			}
			seen = append(seen, a)
			if a.Labels["alertname"] == "TrafficMigrationPrometheusUnreachable" && a.State == promv1.AlertStateFiring {
				firing = &res.Alerts[i]
			}
		}
		return firing != nil, nil
	})
	if err != nil {
		t.Fatalf("TrafficMigrationPrometheusUnreachable did not fire for %s/%s: %v; its alerts: %+v", m.ns, p.Name, err, seen)
	}
	if firing.Labels["policy"] != model.LabelValue(p.Name) || firing.Labels["reason"] != trafficv1alpha1.ReasonUnreachable || firing.Labels["severity"] != "warning" {
		t.Errorf("alert labels: %v", firing.Labels)
	}
	if want := fmt.Sprintf("Policy %s/%s cannot read its Prometheus (Unreachable).", m.ns, p.Name); string(firing.Annotations["summary"]) != want {
		t.Errorf("summary %q, want %q", firing.Annotations["summary"], want)
	}
	for _, a := range seen {
		if a.Labels["alertname"] != "TrafficMigrationPrometheusUnreachable" {
			t.Errorf("another alert fired for the policy: %v", a.Labels)
		}
	}
}
