// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"reflect"
	"strings"
	"testing"
)

// TestChartAggregatedRoleValues: by default the chart renders the ClusterRoles that
// Kubernetes aggregates into view (read) and edit and admin (write, but not the
// status); rbac.aggregateToDefaultRoles false renders neither (TestChartValues), and
// TestChartAggregatedRoles in test/integration shows them at work on a real API
// server.
func TestChartAggregatedRoleValues(t *testing.T) {
	got := render(t, nil)
	const prefix = "rbac.authorization.k8s.io/aggregate-to-"
	for role, want := range map[string]struct {
		aggregateTo []string
		verbs       []any
	}{
		"view": {[]string{"view", "edit", "admin"}, []any{"get", "list", "watch"}},
		"edit": {[]string{"edit", "admin"}, []any{"create", "update", "patch", "delete", "deletecollection"}},
	} {
		obj := got["ClusterRole//open-cluster-management:traffic-migration:"+role]
		if obj == nil {
			t.Errorf("no ClusterRole for %s; rendered %v", role, keys(got))
			continue
		}
		labels, _ := dig(obj, "metadata", "labels").(map[string]any)
		var to []string
		for k, v := range labels {
			if strings.HasPrefix(k, prefix) && v == "true" {
				to = append(to, strings.TrimPrefix(k, prefix))
			}
		}
		if len(to) != len(want.aggregateTo) {
			t.Errorf("%s aggregates to %v, want %v", role, to, want.aggregateTo)
		}
		for _, w := range want.aggregateTo {
			if labels[prefix+w] != "true" {
				t.Errorf("%s is not aggregated to %s: labels %v", role, w, labels)
			}
		}
		rules, _ := obj["rules"].([]any)
		var verbs []any
		for _, r := range rules {
			rule := r.(map[string]any)
			if !reflect.DeepEqual(rule["apiGroups"], []any{"traffic.open-cluster-management.io"}) {
				t.Errorf("%s has a rule outside the policies' group: %v", role, rule)
			}
			for _, res := range rule["resources"].([]any) {
				if role == "edit" && res != "trafficmigrationpolicies" {
					t.Errorf("edit writes %v, which is the manager's", res)
				}
			}
			verbs = append(verbs, rule["verbs"].([]any)...)
		}
		if !reflect.DeepEqual(verbs, want.verbs) {
			t.Errorf("%s's verbs %v, want %v", role, verbs, want.verbs)
		}
	}
}
