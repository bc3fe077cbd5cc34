// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"runtime"
	"testing"

	"open-cluster-management.io/traffic-migration/pkg/version"
)

// TestBuildInfoMetric: the registry served on /metrics has
// traffic_migration_build_info, client_golang's version collector: 1, labelled with
// the build's version (pkg/version's, as make's -ldflags set both) and Go's.
func TestBuildInfoMetric(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != BuildInfoMetric {
			continue
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("%d series of %s, want 1", len(f.GetMetric()), BuildInfoMetric)
		}
		m := f.GetMetric()[0]
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("%s = %v, want 1", BuildInfoMetric, m.GetGauge().GetValue())
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for name, want := range map[string]string{"version": version.Version, "goversion": runtime.Version(), "goos": runtime.GOOS, "goarch": runtime.GOARCH} {
			if labels[name] != want {
				t.Errorf("%s{%s=%q}, want %q (labels %v)", BuildInfoMetric, name, labels[name], want, labels)
			}
		}
		for _, name := range []string{"revision", "branch", "tags"} {
			if _, ok := labels[name]; !ok {
				t.Errorf("%s has no label %s: %v", BuildInfoMetric, name, labels)
			}
		}
		return
	}
	t.Errorf("no %s among the metrics", BuildInfoMetric)
}
