// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestWindowTooShort: the bed's Prometheus scrapes the traffic every second, and the
// policy's trafficShare.window is 3s, so each rate() holds about 3 samples. The checks
// succeed, and PrometheusReachable says, with reason WindowTooShort, what the manager
// measured in Prometheus and the window to set (4s). A window of 8s, set while the
// cluster drains, is measured anew, and the warning goes. check warns with the same
// words while the window is 3s.
func TestWindowTooShort(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "window")
	f := m.f
	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	p := m.start(t, func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Spec.TrafficShare.Window = "3s"
		p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	})
	m.moveToC2(t)

	// The series must be 8 windows old before their spacing is measured.
	short := f.waitForPolicy(t, m.ns, p.Name, 90*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
		return c != nil && c.Reason == trafficv1alpha1.ReasonWindowTooShort
	})
	c := condition(short, trafficv1alpha1.ConditionPrometheusReachable)
	if c.Status != metav1.ConditionTrue {
		t.Errorf("a window too short is a warning on checks that succeed, want status True: %+v", *c)
	}
	for _, want := range []string{"trafficShare.window 3s holds about", "every 1s", "at least 4s"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("PrometheusReachable should say %q: %q", want, c.Message)
		}
	}
	if r := fixture.PolicyRow(short, m.c1); r == nil || r.Phase != trafficv1alpha1.ClusterDraining {
		t.Errorf("cluster1 should still drain: %s", fixture.PolicyStatus(short))
	}
	// check measures the same way and warns in the same words.
	out, errOut, err := runCLI(t, bed.Hub.KubeconfigPath, "check", p.Name, "-n", m.ns)
	if err != nil || !strings.Contains(out, "Warning (WindowTooShort): trafficShare.window 3s holds about") || !strings.Contains(c.Message, windowNoteOf(out)) {
		t.Errorf("check should warn as PrometheusReachable does (%q): %v\n%s%s", c.Message, err, out, errOut)
	}

	f.patchPolicy(t, m.ns, p.Name, map[string]any{"spec": map[string]any{"trafficShare": map[string]any{"window": "8s"}}})
	f.waitForPolicy(t, m.ns, p.Name, 60*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		c := condition(p, trafficv1alpha1.ConditionPrometheusReachable)
		return p.Status.ObservedGeneration == p.Generation && c != nil &&
			c.Status == metav1.ConditionTrue && c.Reason == trafficv1alpha1.ReasonQuerySucceeded
	})
}

// windowNoteOf is the WindowTooShort warning of check's text output, without its label.
func windowNoteOf(out string) string {
	for line := range strings.Lines(out) {
		if note, ok := strings.CutPrefix(line, "Warning (WindowTooShort): "); ok {
			return strings.TrimSpace(note)
		}
	}
	return "no warning"
}
