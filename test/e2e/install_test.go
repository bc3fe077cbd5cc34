// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/hub/process"
	"open-cluster-management.io/traffic-migration/test/testbed"

	"k8s.io/utils/ptr"
)

// The manager as the chart installs it, in the release's namespace: the policy
// controllers' Deployment's pods, their ServiceAccount and the Lease its replicas elect
// their leader with; and the add-on manager's pods (the add-on framework) and theirs.
const (
	managerNamespace           = "open-cluster-management-addon"
	managerServiceAccount      = "traffic-migration-manager"
	managerLease               = "traffic-migration-manager"
	addonManagerServiceAccount = "traffic-migration-addon-manager"
	managerReplicas            = 2
)

// managerLabels select the policy controllers' pods, addonManagerLabels the add-on
// manager's.
var (
	managerLabels      = map[string]string{"app.kubernetes.io/name": "traffic-migration-manager"}
	addonManagerLabels = map[string]string{"app.kubernetes.io/name": "traffic-migration-addon-manager"}
)

// helmInstall installs charts/traffic-migration on the hub with the real helm, as a
// fleet admin does, from the image that 'make image' built and the nodes imported
// (pullPolicy Never: nothing is pulled), with two replicas and leader election.
func helmInstall(t *testing.T, ctx context.Context) {
	t.Helper()
	chart, err := testbed.ChartDir()
	if err != nil {
		t.Fatal(err)
	}
	repository, tag, err := testbed.SplitImage(image)
	if err != nil {
		t.Fatal(err)
	}
	out, err := bed.Helm(ctx, "install", "traffic-migration", chart,
		"--namespace", managerNamespace, "--create-namespace",
		"--set", "image.repository="+repository, "--set", "image.tag="+tag, "--set", "image.pullPolicy=Never",
		"--set", fmt.Sprintf("replicas=%d", managerReplicas), "--set", "leaderElection=true", "--set", "logLevel=4",
		// The manager may ask the bed's CoreDNS, at a private address.
		"--set-json", fmt.Sprintf(`manager.dns.nameserverAllowlist=[%q]`, bed.ListenHost()))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install: %s", strings.TrimSpace(out))
}

// checkManagerPods checks the manager's pods as the chart runs them: from the image,
// under the chart's ServiceAccount sa, on the hub's node, with the Go runtime's soft
// memory limit taken from the container's.
func checkManagerPods(t *testing.T, pods []*corev1.Pod, sa string) {
	t.Helper()
	for _, pod := range pods {
		checkGoMemoryLimit(t, pod)
		if pod.Spec.ServiceAccountName != sa {
			t.Errorf("manager pod %s runs as ServiceAccount %q, want %q", pod.Name, pod.Spec.ServiceAccountName, sa)
		}
		if pod.Spec.NodeName != bed.Nodes[hubName].Name {
			t.Errorf("manager pod %s runs on %q, want the hub's node %q", pod.Name, pod.Spec.NodeName, bed.Nodes[hubName].Name)
		}
		for _, s := range pod.Status.ContainerStatuses {
			if s.Image != image && !strings.HasSuffix(s.Image, "/"+image) {
				t.Errorf("manager pod %s runs image %q, want %q", pod.Name, s.Image, image)
			}
		}
	}
}

// checkGoMemoryLimit checks that the manager gave the Go runtime 90% of its container's
// memory limit as its soft limit, read from the cgroup the kubelet made for the
// container: the line that the library logs when it sets the limit, at the start.
func checkGoMemoryLimit(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
	if i < 0 {
		t.Errorf("manager pod %s has no container named manager", pod.Name)
		return
	}
	limit := pod.Spec.Containers[i].Resources.Limits.Memory()
	if limit.IsZero() {
		t.Errorf("manager pod %s has no memory limit", pod.Name)
		return
	}
	// As the library computes it: the default --gomemlimit-ratio (the chart sets none)
	// times the limit, rounded down.
	// The line carries the logger's name between the message and the value.
	want := regexp.MustCompile(fmt.Sprintf(`"GOMEMLIMIT is updated" .*GOMEMLIMIT=%d( |$)`, uint64(float64(limit.Value())*process.DefaultMemoryLimitRatio)))
	logs, err := hub.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: "manager", LimitBytes: ptr.To[int64](1 << 16),
	}).DoRaw(t.Context())
	if err != nil {
		t.Errorf("read the log of manager pod %s: %v", pod.Name, err)
		return
	}
	if !want.Match(logs) {
		t.Errorf("the log of manager pod %s (memory limit %s) has no %s in its first 64 KiB:\n%s", pod.Name, limit, want, logs)
	}
}

// leader returns the manager's pod that holds the leader Lease: the Lease's holder is
// <pod name>_<uuid>, as the manager's hostname in a pod is the pod's name.
func leader(ctx context.Context) (string, error) {
	lease, err := hub.Kube.CoordinationV1().Leases(managerNamespace).Get(ctx, managerLease, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" {
		return "", errors.New("the leader Lease has no holder")
	}
	pod, _, _ := strings.Cut(holder, "_")
	return pod, nil
}

// waitLeader waits until one of the running manager pods holds the leader Lease, other
// than those in not, and returns its name.
func (a *addonTest) waitLeader(t *testing.T, not ...string) string {
	t.Helper()
	var name string
	eventually(t, "a manager pod leading", func(ctx context.Context) error {
		l, err := leader(ctx)
		if err != nil {
			return err
		}
		if slices.Contains(not, l) {
			return fmt.Errorf("%s still holds the Lease", l)
		}
		for _, pod := range a.pods.pods(hubName, managerNamespace) {
			if pod.Name == l {
				name = l
				return nil
			}
		}
		return fmt.Errorf("the Lease's holder %s is not a running manager pod", l)
	})
	return name
}

// killLeader kills the leading manager's pod at once (no grace period, as a node that
// dies would) and waits until another replica leads and the Deployment has all its
// replicas Ready again.
func (a *addonTest) killLeader(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	old := a.waitLeader(t)
	if err := hub.Kube.CoreV1().Pods(managerNamespace).Delete(ctx, old, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("kill the leader's pod %s: %v", old, err)
	}
	t.Logf("killed the leader's pod %s", old)
	now := a.waitLeader(t, old)
	t.Logf("manager pod %s leads now", now)
	a.pods.waitPods(t, "the manager's replicas Ready again", hubName, managerNamespace, managerLabels, allReady(managerReplicas))
}
