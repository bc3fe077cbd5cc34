// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/control"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestSuspendAndResumeCommands: 'traffic-migration suspend' stops a removal that the
// gate would make, the Draining condition says so, and 'resume' lets it happen; both
// are patches by the CLI's own field manager.
func TestSuspendAndResumeCommands(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "suspend-cmd")
	f := m.f
	p := m.start(t, nil)
	admin := bed.Hub.KubeconfigPath
	if out, errOut, err := runCLI(t, admin, "suspend", p.Name, "-n", m.ns); err != nil || !strings.Contains(out, "suspended") {
		t.Fatalf("suspend: %v\n%s%s", err, out, errOut)
	}
	// cluster1's traffic is gone at once: only the suspension keeps it.
	m.traffic.SetByValue(map[string]float64{m.c1: 0, m.c2: 100})
	m.moveToC2(t)
	got := m.waitHeld(t, p, []string{m.c2}, func(p *trafficv1alpha1.TrafficMigrationPolicy, r *trafficv1alpha1.ClusterStatus) bool {
		c := condition(p, trafficv1alpha1.ConditionDraining)
		return r.ConsecutiveSuccesses >= p.Spec.ConsecutiveSuccesses && c != nil && c.Reason == trafficv1alpha1.ReasonSuspended
	})
	if !managedBy(got.ManagedFields, control.FieldManager, "f:suspend") {
		t.Errorf("spec.suspend was not written by the CLI's field manager %q: %+v", control.FieldManager, got.ManagedFields)
	}

	if out, errOut, err := runCLI(t, admin, "resume", p.Name, "-n", m.ns); err != nil || !strings.Contains(out, "resumed") {
		t.Fatalf("resume: %v\n%s%s", err, out, errOut)
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 60*time.Second)
}

// TestForceRemoveCommand: 'traffic-migration force-remove' refuses without --yes when
// no terminal can confirm, refuses a cluster that does not drain, and with --yes takes
// a cluster whose checks fail out of the proxy at once, which an event records; the
// manager then takes the name out of the annotation.
func TestForceRemoveCommand(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "force-cmd")
	f := m.f
	p := m.start(t, nil)
	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	m.moveToC2(t)
	m.waitFailing(t, p)
	admin := bed.Hub.KubeconfigPath

	// The test's stdin is no terminal: without --yes nothing changes.
	_, errOut, err := runCLI(t, admin, "force-remove", p.Name, m.c1, "-n", m.ns)
	if err == nil || !strings.Contains(errOut, "this is not a terminal; pass --yes") {
		t.Fatalf("force-remove without --yes: %v\n%s", err, errOut)
	}
	_, errOut, err = runCLI(t, admin, "force-remove", p.Name, m.c2, "-n", m.ns, "--yes")
	if err == nil || !strings.Contains(errOut, "is Active, not draining") {
		t.Fatalf("force-remove of the active cluster: %v\n%s", err, errOut)
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1, m.c2}, time.Second)

	if out, errOut, err := runCLI(t, admin, "force-remove", p.Name, m.c1, "-n", m.ns, "--yes"); err != nil {
		t.Fatalf("force-remove --yes: %v\n%s%s", err, out, errOut)
	}
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, 30*time.Second)
	// The manager acted on the name once and took it out of the annotation.
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterRemoved && p.Annotations[trafficv1alpha1.ForceRemoveAnnotation] == ""
	})
	f.waitForEventNote(t, m.ns, "ForceRemoved", m.c1, 30*time.Second)
}

// managedBy reports whether manager owns a field whose path holds part.
func managedBy(fields []metav1.ManagedFieldsEntry, manager, part string) bool {
	for _, mf := range fields {
		if mf.Manager == manager && mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), part) {
			return true
		}
	}
	return false
}

// TestWaitCommand: 'traffic-migration wait' blocks a pipeline until the old cluster
// left the proxy after a real drain (exit 0), and gives up at --timeout (exit 1).
func TestWaitCommand(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "wait-cmd")
	f := m.f
	p := m.start(t, nil)
	admin := bed.Hub.KubeconfigPath
	m.traffic.SetByValue(map[string]float64{m.c1: 2, m.c2: 98})
	m.moveToC2(t)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining
	})

	// Nothing is Held: a wait for it times out.
	_, errOut, err := runCLI(t, admin, "wait", p.Name, "-n", m.ns, "--for=condition=Held", "--timeout=2s")
	if exitCode(err) != 1 || !strings.Contains(errOut, "timed out after 2s waiting until Held is True") {
		t.Errorf("wait for Held: exit code %d (%v), want 1\n%s", exitCode(err), err, errOut)
	}
	out, errOut, err := runCLI(t, admin, "wait", p.Name, "-n", m.ns, "--for=removed="+m.c1, "--timeout=90s")
	if err != nil || !strings.Contains(out, m.c1+" left the proxy") {
		t.Fatalf("wait for %s's removal: %v\n%s%s", m.c1, err, out, errOut)
	}
	// It returned because cluster1 is out, not before.
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c2}, time.Second)
	if _, errOut, err := runCLI(t, admin, "wait", "no-such-policy", "-n", m.ns); exitCode(err) != 2 {
		t.Errorf("wait for a missing policy: exit code %d (%v), want 2\n%s", exitCode(err), err, errOut)
	}
}

// exitCode is the exit code of a finished command's error, 0 for none.
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
