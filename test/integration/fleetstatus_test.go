// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	"open-cluster-management.io/traffic-migration/pkg/agent"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestFleetByCluster: while cluster1 drains, the manager puts the Draining condition on
// cluster1's ManagedClusterAddOn, naming the policy and its Gateway, and on no other;
// it removes it when cluster1 is Active again. cluster1 runs the real spoke agent,
// which writes the same object: the agent's conditions and the framework's stay as
// they are through every write of the hub, and the hub's condition stays through the
// agent's. The checks every second rewrite the policy's status but never the add-on.
// status --clusters shows the drain.
func TestFleetByCluster(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := newMigration(t, "fleetby")
	f := m.f
	addons1 := f.Addon.AddonV1alpha1().ManagedClusterAddOns(m.c1)

	// cluster1's real agent, on a spoke of its own without the Gateway API yet.
	spoke, spokeKube := startSpoke(t, m.c1)
	if _, err := spokeKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultAddonNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startAgent(t, &agent.Options{
		HubKubeconfig:          agentHubKubeconfig(t, m.c1),
		Kubeconfig:             spoke.KubeconfigPath,
		ClusterName:            m.c1,
		AddonNamespace:         agent.DefaultAddonNamespace,
		MetricsLabels:          "cluster=" + m.c1,
		HealthProbeBindAddress: "127.0.0.1:0",
	})
	waitForAddon := func(what string, addons func() (*addonv1alpha1.ManagedClusterAddOn, error), ok func(a *addonv1alpha1.ManagedClusterAddOn) bool) *addonv1alpha1.ManagedClusterAddOn {
		t.Helper()
		var last *addonv1alpha1.ManagedClusterAddOn
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, agentTimeout, true, func(context.Context) (bool, error) {
			a, err := addons()
			if err != nil {
				return false, nil
			}
			last = a
			return ok(a), nil
		})
		if err != nil {
			t.Fatalf("%s: conditions %s", what, agentConditions(last))
		}
		return last
	}
	get1 := func() (*addonv1alpha1.ManagedClusterAddOn, error) {
		return addons1.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	}
	has := func(condType string, status metav1.ConditionStatus, reason string) func(a *addonv1alpha1.ManagedClusterAddOn) bool {
		return func(a *addonv1alpha1.ManagedClusterAddOn) bool {
			c := meta.FindStatusCondition(a.Status.Conditions, condType)
			return c != nil && c.Status == status && c.Reason == reason
		}
	}
	before := waitForAddon("the agent reports no Gateway API", get1, has(trafficv1alpha1.ConditionGatewayAPI, metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled))
	others := func(a *addonv1alpha1.ManagedClusterAddOn) []metav1.Condition {
		var out []metav1.Condition
		for _, c := range a.Status.Conditions {
			if c.Type != trafficv1alpha1.AddonConditionDraining {
				out = append(out, c)
			}
		}
		return out
	}
	kept := others(before) // the framework's Available (as the test bed writes it) and the agent's

	// cluster1 drains: the condition appears on its add-on only.
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute}
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	m.traffic.SetByValue(map[string]float64{m.c1: 50, m.c2: 50})
	m.moveToC2(t)
	wantMessage := fmt.Sprintf("draining for policy %s/%s (Gateway %s/%s)", m.ns, p.Name, gatewayNamespace, gatewayName)
	draining := waitForAddon("the Draining condition on cluster1", get1, func(a *addonv1alpha1.ManagedClusterAddOn) bool {
		c := meta.FindStatusCondition(a.Status.Conditions, trafficv1alpha1.AddonConditionDraining)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == trafficv1alpha1.AddonReasonDraining && c.Message == wantMessage
	})
	assertForeignKept(t, draining, kept)
	a2, err := f.Addon.AddonV1alpha1().ManagedClusterAddOns(m.c2).Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(a2.Status.Conditions, trafficv1alpha1.AddonConditionDraining); c != nil {
		t.Errorf("cluster2 is Active but has %+v", c)
	}

	// The checks go on every second and change the policy's status; the add-on is not
	// written for them.
	var checks []string
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		if r := fixture.PolicyRow(p, m.c1); r != nil && r.LastEvaluationTime != nil {
			if at := r.LastEvaluationTime.String(); len(checks) == 0 || checks[len(checks)-1] != at {
				checks = append(checks, at)
			}
		}
		return len(checks) >= 4
	})
	if now, err := get1(); err != nil || now.ResourceVersion != draining.ResourceVersion {
		t.Errorf("the add-on was written during the checks: resourceVersion %s, then %s (%v)", draining.ResourceVersion, now.ResourceVersion, err)
	}

	// status --clusters shows it.
	out, errOut, err := runCLI(t, bed.Hub.KubeconfigPath, "status", "--clusters")
	if err != nil {
		t.Fatalf("status --clusters: %v\n%s", err, errOut)
	}
	for _, want := range []string{m.c1 + ": " + wantMessage, "cluster=" + m.c1} {
		if !strings.Contains(out, want) {
			t.Errorf("status --clusters lacks %q:\n%s", want, out)
		}
	}

	// The agent writes after the hub: the Gateway API arrives on the spoke.
	installGatewayAPI(t, spoke.Config)
	afterAgent := waitForAddon("the agent reports the Gateway API", get1, has(trafficv1alpha1.ConditionGatewayAPI, metav1.ConditionTrue, trafficv1alpha1.AgentReasonInstalled))
	hubCond := meta.FindStatusCondition(draining.Status.Conditions, trafficv1alpha1.AddonConditionDraining)
	if c := meta.FindStatusCondition(afterAgent.Status.Conditions, trafficv1alpha1.AddonConditionDraining); c == nil || *c != *hubCond {
		t.Errorf("the agent's write changed the hub's condition: %+v, was %+v", c, hubCond)
	}
	kept = others(afterAgent)

	// Someone removes the hub's condition: the hub writes it again, keeping the agent's.
	afterAgent.Status.Conditions = kept
	if _, err := addons1.UpdateStatus(ctx, afterAgent, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	restored := waitForAddon("the hub writes its condition again", get1, has(trafficv1alpha1.AddonConditionDraining, metav1.ConditionTrue, trafficv1alpha1.AddonReasonDraining))
	assertForeignKept(t, restored, kept)

	// cluster1 comes back: the drain ends and the condition goes, nothing else.
	f.selectClusters(t, m.ns, m.placement, map[string]string{m.siteLabel: m.site1})
	ended := waitForAddon("the Draining condition removed", get1, func(a *addonv1alpha1.ManagedClusterAddOn) bool {
		return meta.FindStatusCondition(a.Status.Conditions, trafficv1alpha1.AddonConditionDraining) == nil
	})
	assertForeignKept(t, ended, kept)
	if len(ended.Status.Conditions) != len(kept) {
		t.Errorf("conditions after the drain: %s, want those of before it", agentConditions(ended))
	}
}
