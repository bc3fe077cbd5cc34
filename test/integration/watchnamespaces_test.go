// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"open-cluster-management.io/traffic-migration/pkg/hub/notify"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestWatchNamespaces is a hub admin's chart value watchNamespaces, on a hub of the
// test's own: the chart's RBAC rendered with one watched namespace, and the policy
// controllers and the notifications engine run as the manager's ServiceAccount (its
// token, no more) with --watch-namespaces. The API server allows the manager a
// policy's Secret in the watched namespace and no Secret, policy or decision
// elsewhere, nor a cluster-wide list or watch of them; a migration in the watched
// namespace drains and ends (its check reads its Secret), a policy in another
// namespace is never touched, and the manager is refused nothing it asks for.
func TestWatchNamespaces(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	own, f := newOwnHub(t)
	kube, err := kubernetes.NewForConfig(own.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	watched := newMigrationIn(t, f, "watched")
	other := newMigrationIn(t, f, "unwatched")
	release := own.Hub.Namespace(t, "tm-watch")
	applyChartRBAC(t, kube, release, "--set-json", `watchNamespaces=["`+watched.ns+`"]`)

	user := "system:serviceaccount:" + release + ":traffic-migration-manager"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + release, "system:authenticated"}
	ra := func(ns, verb, group, resource, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Name: name}
	}
	const (
		traffic = "traffic.open-cluster-management.io"
		cluster = "cluster.open-cluster-management.io"
	)
	allowed := []authorizationv1.ResourceAttributes{
		ra(watched.ns, "get", "", "secrets", watched.secret),
		ra(watched.ns, "watch", traffic, "trafficmigrationpolicies", ""),
		ra(watched.ns, "create", cluster, "placementdecisions", ""),
		ra(watched.ns, "create", "externaldns.k8s.io", "dnsendpoints", ""),
		ra("", "watch", cluster, "managedclusters", ""),
	}
	denied := []authorizationv1.ResourceAttributes{
		ra(other.ns, "get", "", "secrets", other.secret),
		ra(release, "get", "", "secrets", "some-secret"),
		ra("", "get", "", "secrets", ""),
		ra("", "list", traffic, "trafficmigrationpolicies", ""),
		ra("", "watch", cluster, "placementdecisions", ""),
		ra(other.ns, "watch", traffic, "trafficmigrationpolicies", ""),
		ra(other.ns, "create", cluster, "placementdecisions", ""),
		ra(other.ns, "create", "externaldns.k8s.io", "dnsendpoints", ""),
	}
	wantRights(t, kube, user, groups, allowed, denied)

	// Notifications on, so that their engine watches policies too.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName, Namespace: release}}
	if _, err := kube.CoreV1().ConfigMaps(release).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := own.Hub.ServiceAccountKubeconfig(ctx, release, "traffic-migration-manager")
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := own.StartManager(ctx, testbed.ManagerOptions{Kubeconfig: kubeconfig, Args: []string{"-v=2",
		"--controllers=policy", "--watch-namespaces=" + watched.ns, "--notifications-namespace=" + release}})
	if err != nil {
		t.Fatalf("start the manager as its ServiceAccount: %v", err)
	}
	otherPolicy := other.policy()
	f.createPolicy(t, otherPolicy)

	// The watched migration runs to its end as ever.
	watched.start(t, nil)
	watched.moveToC2(t)
	f.waitForClusters(t, watched.ns, watched.proxy, []string{watched.c1, watched.c2}, 30*time.Second)
	watched.traffic.SetByValue(map[string]float64{watched.c1: 1, watched.c2: 99})
	f.waitForClusters(t, watched.ns, watched.proxy, []string{watched.c2}, 90*time.Second)

	// By then the manager has had every chance to touch the other namespace's policy.
	if got := f.getPolicy(t, other.ns, otherPolicy.Name); got.Status.ObservedGeneration != 0 || len(got.Status.Conditions) != 0 {
		t.Errorf("a policy outside --watch-namespaces has a status: %+v", got.Status)
	}
	if _, err := f.Cluster.ClusterV1beta1().Placements(other.ns).Get(ctx, other.proxy, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the proxy Placement of a policy outside --watch-namespaces: %v, want NotFound", err)
	}
	// Nor did it ask for anything it may not have: no informer of a namespace it does
	// not watch, and no cluster-wide one of what it may read in some alone.
	logged := &managerProcess{Manager: mgr, proc: mgr.Process}
	if refused, err := logged.logContains("forbidden"); err != nil || refused {
		t.Errorf("the manager was refused a request (or its log cannot be read: %v):\n%s", err,
			strings.Join(logged.logLinesSince(t, 0, "forbidden"), "\n"))
	}
}
