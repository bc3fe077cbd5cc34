// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
)

// Fleet is the hub's API as tests use it, and the objects of a fleet made there
// without OCM's agents or the add-on's: ManagedClusters whose ManagedClusterAddOn
// reports what a running agent reports, a ManagedClusterSet bound to a test's
// namespace, real Placements and TrafficMigrationPolicies.
type Fleet struct {
	Kube    kubernetes.Interface
	Cluster clusterclient.Interface
	Addon   addonclient.Interface
	Traffic trafficclient.Interface

	hub *Cluster
}

// Fleet returns the API of the cluster, the hub, with its admin's clients.
func (c *Cluster) Fleet() (*Fleet, error) {
	cfg := rest.CopyConfig(c.Config)
	f := &Fleet{hub: c}
	var err error
	if f.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if f.Cluster, err = clusterclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if f.Addon, err = addonclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if f.Traffic, err = trafficclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return f, nil
}

// CreateClusterSet creates the ManagedClusterSet name of the ManagedClusters that
// selector selects; an empty selector selects every one.
func CreateClusterSet(ctx context.Context, client clusterclient.Interface, name string, selector *metav1.LabelSelector) error {
	set := &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: selector,
		}},
	}
	if _, err := client.ClusterV1beta2().ManagedClusterSets().Create(ctx, set, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ManagedClusterSet %s: %w", name, err)
	}
	return nil
}

// BindClusterSet binds the ManagedClusterSet name to the namespace ns, so that the
// Placements there can select its clusters.
func BindClusterSet(ctx context.Context, client clusterclient.Interface, ns, name string) error {
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: name},
	}
	if _, err := client.ClusterV1beta2().ManagedClusterSetBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind ManagedClusterSet %s to %s: %w", name, ns, err)
	}
	return nil
}

// ClusterSetNamespace makes a namespace for one test (see Cluster.Namespace), bound to
// the ManagedClusterSet clusterSet of every ManagedCluster, which it creates unless it
// exists, so that the test's Placements can select any cluster.
func (f *Fleet) ClusterSetNamespace(t testing.TB, clusterSet, prefix string) string {
	t.Helper()
	ctx := context.Background()
	if err := CreateClusterSet(ctx, f.Cluster, clusterSet, &metav1.LabelSelector{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ns := f.hub.Namespace(t, prefix)
	if err := BindClusterSet(ctx, f.Cluster, ns, clusterSet); err != nil {
		t.Fatal(err)
	}
	return ns
}

// CreateManagedCluster creates a ManagedCluster, accepted by the hub, and its
// namespace, as OCM's registration does when a cluster joins.
func (f *Fleet) CreateManagedCluster(ctx context.Context, name string, clusterLabels map[string]string) error {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: clusterLabels},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
	if _, err := f.Cluster.ClusterV1().ManagedClusters().Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ManagedCluster %s: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// ReportAgent writes what the add-on's agent on cluster writes on its
// ManagedClusterAddOn, which it creates unless it exists: the target Gateway's
// readiness (Programmed or not), the cluster's labels (cluster_name and clusterLabels),
// and the Available condition of the add-on framework's health prober. Conditions of
// other types are kept.
func (f *Fleet) ReportAgent(ctx context.Context, cluster, gatewayNamespace, gatewayName string, ready bool, clusterLabels map[string]string) error {
	client := f.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster)
	addon, err := client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: cluster},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		addon, err = client.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("ManagedClusterAddOn of %s: %w", cluster, err)
	}
	gateway := metav1.Condition{Type: trafficv1alpha1.GatewayConditionType(gatewayNamespace, gatewayName),
		Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonProgrammed, Message: "Addresses: 10.0.0.1"}
	if !ready {
		gateway.Status, gateway.Reason = metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed
	}
	all := map[string]string{trafficv1alpha1.ClusterNameLabel: cluster}
	for k, v := range clusterLabels {
		all[k] = v
	}
	for _, c := range []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: addonv1alpha1.AddonAvailableReasonProbeAvailable, Message: "traffic-migration add-on is available."},
		gateway,
		{Type: trafficv1alpha1.ConditionClusterLabels, Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonReported, Message: trafficv1alpha1.FormatClusterLabels(all)},
	} {
		meta.SetStatusCondition(&addon.Status.Conditions, c)
	}
	if _, err := client.UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("report the agent conditions of %s: %w", cluster, err)
	}
	return nil
}

// ReportGatewayAddresses writes, as the cluster's agent does, the GatewayAddresses
// condition on its ManagedClusterAddOn (which ReportAgent created): the given
// Gateway's addresses.
func (f *Fleet) ReportGatewayAddresses(ctx context.Context, cluster, gatewayNamespace, gatewayName string, addresses ...string) error {
	client := f.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster)
	addon, err := client.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("ManagedClusterAddOn of %s: %w", cluster, err)
	}
	message, _ := trafficv1alpha1.FormatGatewayAddresses(trafficv1alpha1.GatewayAddresses{
		trafficv1alpha1.GatewayKey(gatewayNamespace, gatewayName): addresses,
	}, trafficv1alpha1.MaxGatewayAddressesMessage)
	meta.SetStatusCondition(&addon.Status.Conditions, metav1.Condition{Type: trafficv1alpha1.ConditionGatewayAddresses,
		Status: metav1.ConditionTrue, Reason: trafficv1alpha1.AgentReasonReported, Message: message})
	if _, err := client.UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("report the Gateway addresses of %s: %w", cluster, err)
	}
	return nil
}

// CreatePlacement creates a real Placement that selects the clusters with the labels
// of match.
func (f *Fleet) CreatePlacement(ctx context.Context, ns, name string, match map[string]string) error {
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: SelectorPredicates(match)},
	}
	if _, err := f.Cluster.ClusterV1beta1().Placements(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Placement %s: %w", name, err)
	}
	return nil
}

// SelectClusters makes a real Placement select the clusters with the labels of match
// instead, as an admin edits it, trying again for up to timeout when the update
// conflicts with another writer.
func (f *Fleet) SelectClusters(ctx context.Context, ns, name string, match map[string]string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.Cluster.ClusterV1beta1().Placements(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		p.Spec.Predicates = SelectorPredicates(match)
		_, err = f.Cluster.ClusterV1beta1().Placements(ns).Update(ctx, p, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("edit Placement %s: %w", name, err)
	}
	return nil
}

// SelectorPredicates are a Placement's predicates that select the clusters with the
// labels of match.
func SelectorPredicates(match map[string]string) []clusterv1beta1.ClusterPredicate {
	return []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: match},
	}}}
}

// PolicyRow is the row of cluster in a policy's status, or nil.
func PolicyRow(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) *trafficv1alpha1.ClusterStatus {
	for i := range p.Status.Clusters {
		if p.Status.Clusters[i].Name == cluster {
			return &p.Status.Clusters[i]
		}
	}
	return nil
}

// PolicyStatus describes a policy's status for a test's failure message: its counts,
// conditions and rows.
func PolicyStatus(p *trafficv1alpha1.TrafficMigrationPolicy) string {
	if p == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "active=%d draining=%d", p.Status.ActiveClusters, p.Status.DrainingClusters)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range p.Status.Clusters {
		fmt.Fprintf(&b, "\n  %s %s successes=%d result=%s value=%s: %s | %s", c.Name, c.Phase, c.ConsecutiveSuccesses, c.LastResult, c.LastValue, c.Message, c.ResolvedQuery)
	}
	return b.String()
}
