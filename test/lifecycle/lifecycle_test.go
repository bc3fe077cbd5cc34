// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// What the chart installs and the add-on framework deploys, spelled out here rather
// than taken from the product's code, so that the test notices when they change.
const (
	release          = "traffic-migration"
	releaseNamespace = "open-cluster-management-addon"
	addonName        = "traffic-migration"
	managerName      = "traffic-migration-manager"
	agentDeployment  = "traffic-migration-agent"
	crdName          = "trafficmigrationpolicies.traffic.open-cluster-management.io"
)

// managerLabels select the manager's pods (the policy controllers), addonManagerLabels
// the add-on manager's, which this release runs apart (the add-on framework).
const (
	managerLabels      = "app.kubernetes.io/name=traffic-migration-manager"
	addonManagerLabels = "app.kubernetes.io/name=traffic-migration-addon-manager"
)

// The policy's world on the hub: the real Placement, its proxy, the policy, and the
// Placement the agents are installed by, in policyNamespace, bound to clusterSet.
const (
	policyNamespace = "gateway-system"
	placementName   = "gateway"
	proxyName       = "gateway-proxy"
	policyName      = "migrate"
	clusterSet      = "lifecycle"
	regionLabel     = "region"
	agentsPlacement = "agents"
	// agentsLabel on a ManagedCluster puts it in agentsPlacement.
	agentsLabel = "lifecycle.example/agent"
)

// TestLifecycle is what a platform team does with the add-on, in order: install the
// previous release, drain a cluster, upgrade to this release during the drain, let a
// Placement install the agent, disable it with clusteradm, and uninstall the chart.
// Each step needs the one before it.
func TestLifecycle(t *testing.T) {
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"push the releases to the registry", push},
		{"install the previous release", installPrevious},
		{"a cluster drains", drain},
		{"upgrade during the drain", upgrade},
		{"install by Placement", installByPlacement},
		{"disable with clusteradm", disable},
		{"uninstall with helm", uninstall},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.FailNow()
		}
	}
}

// chartValues are the values every helm call of the test gives, for an image: from
// the bed's registry, which the nodes pull it from (nothing is imported), one replica.
func chartValues(t *testing.T, ref string) map[string]any {
	t.Helper()
	repository, tag, err := testbed.SplitImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"image":    map[string]any{"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"},
		"replicas": 1,
		"logLevel": 4,
	}
}

// runHelm runs the real helm against the hub with values (in a values file) after
// args, and logs what it said.
func runHelm(t *testing.T, values map[string]any, args ...string) {
	t.Helper()
	out, err := tryHelm(t, values, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm %s: %s", args[0], strings.TrimSpace(out))
}

// tryHelm runs the real helm against the hub with values (in a values file) after
// args, and returns what it printed and its error.
func tryHelm(t *testing.T, values map[string]any, args ...string) (string, error) {
	t.Helper()
	return bed.Helm(t.Context(), append(args, testbed.HelmValues(t, values)...)...)
}

// upgradeArgs are the values and arguments of `helm upgrade` to this release's chart
// and image, with more values over chartValues.
func upgradeArgs(t *testing.T, more map[string]any, flags ...string) (map[string]any, []string) {
	t.Helper()
	// The image's tag is given: the upgrade reuses the earlier release's values
	// (--reset-then-reuse-values), whose tag was explicit, as a user's would be.
	values := chartValues(t, image)
	maps.Copy(values, more)
	return values, append([]string{"upgrade", release, current.Chart, "--version", current.Version, "--namespace", releaseNamespace, "--wait", "--timeout", "2m"}, flags...)
}

// upgradeChart upgrades the release to this release's chart and image, with more
// values over chartValues.
func upgradeChart(t *testing.T, more map[string]any, flags ...string) {
	t.Helper()
	values, args := upgradeArgs(t, more, flags...)
	runHelm(t, values, args...)
}

// managerPods waits until the manager runs as exactly one pod, Ready, from ref, with
// no other pod left (an old one still terminating counts), and returns it.
func managerPods(t *testing.T, ref string) *corev1.Pod {
	t.Helper()
	return onePod(t, "the manager", managerLabels, ref)
}

// onePod waits until the pods that labels select are exactly one, Ready, from ref, with
// no other pod left (an old one still terminating counts), and returns it.
func onePod(t *testing.T, what, labels, ref string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, what+"'s one pod Ready, from "+ref, func(ctx context.Context) error {
		pods, err := hub.Kube.CoreV1().Pods(releaseNamespace).List(ctx, metav1.ListOptions{LabelSelector: labels})
		if err != nil {
			return err
		}
		var states []string
		for i := range pods.Items {
			p := &pods.Items[i]
			states = append(states, fmt.Sprintf("%s (%s, %s, deleting %t, ready %t)", p.Name, p.Spec.Containers[0].Image, p.Status.Phase, p.DeletionTimestamp != nil, podReady(p)))
		}
		if len(pods.Items) != 1 {
			return fmt.Errorf("%d pods: %v", len(pods.Items), states)
		}
		p := &pods.Items[0]
		if p.Spec.Containers[0].Image != ref || p.DeletionTimestamp != nil || !podReady(p) {
			return fmt.Errorf("pods: %v", states)
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount > 0 {
				t.Fatalf("%s's pod %s restarted %d times", what, p.Name, s.RestartCount)
			}
		}
		pod = p
		return nil
	})
	return pod
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
