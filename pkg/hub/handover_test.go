// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hub

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The add-on framework starts only once no process that may run it beside the policy
// controllers can hold their Lease: an earlier release's single manager, or this
// release's --controllers=all.
func TestFrameworkFree(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	lease := func(holder string, renewed time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			RenewTime:            ptr.To(metav1.NewMicroTime(now.Add(-renewed))),
			LeaseDurationSeconds: ptr.To[int32](15),
		}}
	}
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		free  bool
		why   string
	}{
		"no Lease":                   {nil, true, "no policy controller"},
		"released":                   {lease("", time.Second), true, "released"},
		"held by a policy-only one":  {lease("manager-7d9_3f2a/controllers=policy", time.Second), true, "runs the policy controllers alone"},
		"held by a single manager":   {lease("manager-5c1_9e0b", time.Second), false, "manager-5c1_9e0b holds it until 2026-12-05T12:00:14Z"},
		"held, renewed at the limit": {lease("manager-5c1_9e0b", 15*time.Second), false, "may run the add-on framework"},
		"expired":                    {lease("manager-5c1_9e0b", 16*time.Second), true, "stopped renewing it at 2026-12-05T11:59:44Z"},
		"tag not at the end":         {lease("x/controllers=policy_1", time.Second), false, "holds it"},
		"held, no renew time":        {&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("old_1")}}, false, "old_1 holds it"},
	} {
		t.Run(name, func(t *testing.T) {
			free, why := frameworkFree(tc.lease, now)
			if free != tc.free || !strings.Contains(why, tc.why) {
				t.Errorf("frameworkFree = %t, %q; want %t and a reason with %q", free, why, tc.free, tc.why)
			}
		})
	}
}

// A policy-only process says so in its leader election identity; the others do not.
func TestIdentityTag(t *testing.T) {
	for c, want := range map[string]string{ControllersPolicy: "/controllers=policy", ControllersAll: "", ControllersAddon: ""} {
		o := NewOptions()
		o.Controllers = c
		if got := o.IdentityTag(); got != want {
			t.Errorf("--controllers=%s: identity tag %q, want %q", c, got, want)
		}
		if free, _ := frameworkFree(&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("pod_uuid" + o.IdentityTag())}}, time.Now()); free != (c == ControllersPolicy) {
			t.Errorf("--controllers=%s holding the Lease leaves the framework free: %t", c, free)
		}
	}
}

func TestHandoverLeaseFlag(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--handover-lease=tm/the-lease"}); err != nil {
		t.Fatal(err)
	}
	if want := (types.NamespacedName{Namespace: "tm", Name: "the-lease"}); o.HandoverLease != want {
		t.Errorf("--handover-lease=tm/the-lease set %v, want %v", o.HandoverLease, want)
	}
	for _, bad := range []string{"the-lease", "/the-lease", "tm/"} {
		if err := fs.Parse([]string{"--handover-lease=" + bad}); err == nil || !strings.Contains(err.Error(), "is not <namespace>/<name>") {
			t.Errorf("--handover-lease=%s: %v, want an error saying it is not <namespace>/<name>", bad, err)
		}
	}
}
