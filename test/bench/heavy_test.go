// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// A real ManagedCluster is far bigger than its name and labels: its registration agent
// writes conditions, capacity and allocatable, the Kubernetes version and the cluster
// claims into its status, and the hub's client config carries the spoke's CA bundle.
// That is what fills every cache of ManagedClusters on the hub, the manager's and OCM's
// own controllers' alike, so the fleet benchmarks give every cluster as much.

// fakeCABundle is a PEM block the size of a real cluster CA certificate (about 1.1 KiB).
// Nothing verifies it: it is there for its size.
var fakeCABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(strings.Repeat("traffic-migration bench CA ", 30))})

// heavySpec gives a ManagedCluster the client config a registered cluster has.
func heavySpec(mc *clusterv1.ManagedCluster) {
	mc.Spec.LeaseDurationSeconds = 60
	mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{
		URL:      fmt.Sprintf("https://api.%s.example.com:6443", mc.Name),
		CABundle: fakeCABundle,
	}}
}

// heavyStatus is the status a registration agent and the hub write for a joined,
// available cluster: its four conditions, capacity and allocatable, the version, and a
// dozen cluster claims as OCM's and a distribution's claim controllers write them.
func heavyStatus(name string, now time.Time) clusterv1.ManagedClusterStatus {
	at := metav1.NewTime(now.Truncate(time.Second))
	cond := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: at}
	}
	qty := func(s string) resource.Quantity { return resource.MustParse(s) }
	claims := map[string]string{
		"id.k8s.io":                                     "6f0c5e52-1c3e-4a4b-9d7e-" + fmt.Sprintf("%012x", hash(name)),
		"kubeversion.open-cluster-management.io":        "v1.35.4",
		"platform.open-cluster-management.io":           "AWS",
		"product.open-cluster-management.io":            "OpenShift",
		"region.open-cluster-management.io":             "us-east-1",
		"name":                                          name,
		"consoleurl.cluster.open-cluster-management.io": "https://console-openshift-console.apps." + name + ".example.com",
		"controlplanetopology.openshift.io":             "HighlyAvailable",
		"infrastructure.openshift.io":                   `{"infraName":"` + name + `-x7k2p"}`,
		"oauthredirecturis.openshift.io":                "https://oauth-openshift.apps." + name + ".example.com/oauth/token/implicit",
		"version.openshift.io":                          "4.20.3",
		"hostedcluster.hypershift.openshift.io":         "false",
	}
	st := clusterv1.ManagedClusterStatus{
		Conditions: []metav1.Condition{
			cond(clusterv1.ManagedClusterConditionHubAccepted, "HubClusterAdminAccepted", "Accepted by hub cluster admin"),
			cond(clusterv1.ManagedClusterConditionJoined, "ManagedClusterJoined", "Managed cluster joined"),
			cond(clusterv1.ManagedClusterConditionAvailable, "ManagedClusterAvailable", "Managed cluster is available"),
			cond(clusterv1.ManagedClusterConditionClockSynced, "ManagedClusterClockSynced", "The clock of the managed cluster is synced with the hub."),
		},
		Capacity: clusterv1.ResourceList{
			clusterv1.ResourceCPU: qty("96"), clusterv1.ResourceMemory: qty("394869876Ki"),
			"core_worker": qty("72"), "socket_worker": qty("6"),
		},
		Allocatable: clusterv1.ResourceList{
			clusterv1.ResourceCPU: qty("94500m"), clusterv1.ResourceMemory: qty("377190516Ki"),
		},
		Version: clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"},
	}
	for _, k := range slices.Sorted(maps.Keys(claims)) {
		st.ClusterClaims = append(st.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: claims[k]})
	}
	return st
}

// createHeavyCluster creates a joined ManagedCluster as big as a real one (heavySpec,
// heavyStatus) and its namespace, as OCM's registration does when a cluster joins.
func (f *fleet) createHeavyCluster(ctx context.Context, name string, clusterLabels map[string]string) error {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: clusterLabels},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
	heavySpec(mc)
	created, err := f.Cluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ManagedCluster %s: %w", name, err)
	}
	created.Status = heavyStatus(name, time.Now())
	if _, err := f.Cluster.ClusterV1().ManagedClusters().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write the status of ManagedCluster %s: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// objectBytes is the size of a ManagedCluster as JSON, as the API server serves it.
func (f *fleet) objectBytes(ctx context.Context, name string) (int, error) {
	mc, err := f.Cluster.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(mc)
	return len(b), err
}

// hash is a stable number for a name, for the claims that differ between clusters.
func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64() & 0xffffffffffff
}
