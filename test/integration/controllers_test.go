// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/traffic-migration/pkg/hub"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestManagerControllers: `traffic-migration manager --controllers` starts one half
// of the manager (issue 42): addon-manager the add-on framework alone, policy the
// policy controllers without it. Each becomes ready against the hub (its /readyz,
// which StartManager waits for), says what it started, and does not start the other
// half.
func TestManagerControllers(t *testing.T) {
	for name, tc := range map[string]struct {
		want  string
		never []string
	}{
		"addon-manager": {want: `"Add-on manager started"`,
			never: []string{`"Hub controllers started"`, `logger="traffic-migration-policy-controller"`, `logger="traffic-migration-fleet-status-controller"`}},
		"policy": {want: `"Hub controllers started"`,
			never: []string{`"Add-on manager started"`, `logger="addon-deploy-controller"`, `logger="addon-registration-controller"`}},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := bed.StartManager(t.Context(), testbed.ManagerOptions{Args: []string{"-v=2", "--controllers=" + name}})
			if err != nil {
				t.Fatalf("start the manager with --controllers=%s: %v", name, err)
			}
			defer m.Process.Stop()
			log, err := m.Process.Log()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log, tc.want) || !strings.Contains(log, `controllers="`+name+`"`) {
				t.Errorf("--controllers=%s: the log lacks %s with controllers=%q:\n%s", name, tc.want, name, m.Process.Tail(40))
			}
			for _, never := range tc.never {
				if strings.Contains(log, never) {
					t.Errorf("--controllers=%s: the log has %s:\n%s", name, never, m.Process.Tail(40))
				}
			}
		})
	}
}

// TestAddonManagerHandover: the add-on manager starts the add-on framework only once the
// policy controllers' Lease is held by a process without it, so that during an upgrade
// from a release whose single manager ran both, the add-on is never reconciled by two
// managers (issue 42). While a holder without the policy-only tag renews the Lease, it
// waits and says why; once a policy-only process holds it, it starts.
func TestAddonManagerHandover(t *testing.T) {
	ctx := t.Context()
	kube := hubKube(t)
	ns := bed.Hub.Namespace(t, "tm-handover")
	const policyLease = "traffic-migration-manager"
	// The earlier release's single manager, renewing its Lease.
	lease, err := kube.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: policyLease, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("traffic-migration-manager-5c1_9e0b"),
			LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime:          ptr.To(metav1.NowMicro()),
			RenewTime:            ptr.To(metav1.NowMicro()),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := bed.StartManager(ctx, testbed.ManagerOptions{Args: []string{"-v=2", "--controllers=addon-manager",
		"--leader-elect=true", "--leader-election-namespace=" + ns, "--leader-election-id=traffic-migration-addon-manager",
		"--handover-lease=" + ns + "/" + policyLease}})
	if err != nil {
		t.Fatalf("start the add-on manager: %v", err)
	}
	defer m.Process.Stop()
	logHas := func(what string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			log, err := m.Process.Log()
			return strings.Contains(log, what), err
		}
	}
	const waiting, started = `"Waiting for the policy controllers' Lease to pass to a process without the add-on framework"`, `"Add-on manager started"`
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, logHas(waiting)); err != nil {
		t.Fatalf("the add-on manager never said it waits for the policy controllers' Lease: %v\n%s", err, m.Process.Tail(40))
	}
	if ok, _ := logHas(started)(ctx); ok {
		t.Fatalf("the add-on manager started the framework while a single manager held the policy controllers' Lease:\n%s", m.Process.Tail(40))
	}
	if ok, _ := logHas(`reason="traffic-migration-manager-5c1_9e0b holds it until`)(ctx); !ok {
		t.Errorf("the add-on manager's wait does not say who holds the Lease:\n%s", m.Process.Tail(40))
	}

	// The single manager is replaced by a policy-only one, which takes the Lease.
	lease.Spec.HolderIdentity = ptr.To("traffic-migration-manager-7d9_3f2a" + hub.PolicyOnlyIdentityTag)
	lease.Spec.RenewTime = ptr.To(metav1.NowMicro())
	if _, err := kube.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, logHas(started)); err != nil {
		t.Fatalf("the add-on manager never started the framework once a policy-only process held the Lease: %v\n%s", err, m.Process.Tail(40))
	}
}
