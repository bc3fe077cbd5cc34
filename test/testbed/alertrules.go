// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"fmt"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// ChartAlertRules renders the chart's PrometheusRule (monitoring.prometheusRule) with
// its default settings, changed by settings (e.g. {"prometheusUnreachableFor": "10s"}),
// and returns its rule groups as a Prometheus rule file, so that promtool and the test
// bed's Prometheus load exactly the rules the chart installs.
func ChartAlertRules(settings map[string]any) ([]byte, error) {
	root, err := moduleDir("")
	if err != nil {
		return nil, err
	}
	chart, err := loader.Load(filepath.Join(root, "charts", "traffic-migration"))
	if err != nil {
		return nil, fmt.Errorf("load the chart: %w", err)
	}
	settingsOn := map[string]any{"enabled": true}
	for k, v := range settings {
		settingsOn[k] = v
	}
	values := map[string]any{"monitoring": map[string]any{"prometheusRule": settingsOn}}
	vals, err := chartutil.ToRenderValues(chart, values, chartutil.ReleaseOptions{Name: "traffic-migration", Namespace: "open-cluster-management-addon"}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values of the chart: %w", err)
	}
	files, err := engine.Render(chart, vals)
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	text := files["traffic-migration/templates/prometheusrule.yaml"]
	var rule struct {
		Spec any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(text), &rule); err != nil || rule.Spec == nil {
		return nil, fmt.Errorf("read the chart's PrometheusRule: %v\n%s", err, text)
	}
	return yaml.Marshal(rule.Spec)
}
