// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package check

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// getPolicy gets a policy from the hub, with an error a person can act on
// (hubclient.PolicyError).
func getPolicy(ctx context.Context, c *hubclient.Clients, namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	p, err := c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		err = hubclient.PolicyError(c.Traffic.Discovery(), err, "get", namespace, name)
		if notFound := (*hubclient.PolicyNotFoundError)(nil); errors.As(err, &notFound) {
			return nil, fmt.Errorf("%w (to check a manifest that is not applied, use -f)", err)
		}
		return nil, err
	}
	return p, nil
}

// querier returns the Prometheus client the check queries through, built from the
// policy's Secret the way the manager builds it (promcheck.Clients), or from
// --prometheus-url, and says which Prometheus it is for the report.
func (o *Options) querier(ctx context.Context, c *hubclient.Clients, policy *trafficv1alpha1.TrafficMigrationPolicy) (promcheck.Querier, string, error) {
	var url string // the URL of the client built, for the report
	clients := promcheck.NewClients(c.Kube.CoreV1(), clock.RealClock{}, func(cfg promcheck.Config) (promcheck.Client, error) {
		cfg.Timeout, url = o.Timeout, cfg.URL
		return promcheck.NewClient(cfg)
	})
	if o.PrometheusURL != "" {
		q, err := clients.ForSecret(&corev1.Secret{StringData: map[string]string{promcheck.KeyURL: o.PrometheusURL}})
		if err != nil {
			return nil, "", fmt.Errorf("--prometheus-url: %w", errors.Unwrap(err))
		}
		return q, url + " (--prometheus-url)", nil
	}
	name, ns := policy.Spec.PrometheusSecret.Name, policy.Namespace
	q, err := clients.Get(ctx, ns, name)
	var problem *promcheck.SecretError
	switch {
	case !errors.As(err, &problem):
		return q, url + " (Secret " + name + ")", nil
	case problem.Reason == trafficv1alpha1.ReasonSecretForbidden:
		return nil, "", fmt.Errorf("you may not read Secret %s in namespace %s, which says how to reach Prometheus; "+
			"the check reads Prometheus through it, as the manager does: ask for get on that Secret, or give --prometheus-url", name, ns)
	case apierrors.IsNotFound(err):
		return nil, "", fmt.Errorf("the policy's Secret %s does not exist in namespace %s: create it, or give --prometheus-url", name, ns)
	case problem.Reason == trafficv1alpha1.ReasonSecretNotFound:
		return nil, "", fmt.Errorf("read Secret %s in namespace %s: %w", name, ns, problem.Err)
	}
	return nil, "", fmt.Errorf("Secret %s: %w", name, problem.Err)
}

// apiReader reads the hub for gather.Read through the API server, as the manager
// reads it through its caches.
type apiReader struct{ c *hubclient.Clients }

// Placement gets a Placement.
func (r apiReader) Placement(ctx context.Context, namespace, name string) (*clusterv1beta1.Placement, error) {
	return r.c.Cluster.ClusterV1beta1().Placements(namespace).Get(ctx, name, metav1.GetOptions{})
}

// Decisions lists the PlacementDecisions of a Placement, by their label.
func (r apiReader) Decisions(ctx context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	sel := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement}).String()
	list, err := r.c.Cluster.ClusterV1beta1().PlacementDecisions(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of Placement %s in namespace %s: %w", placement, namespace, err)
	}
	out := make([]*clusterv1beta1.PlacementDecision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// ClusterExists says whether the hub has a ManagedCluster of the name.
func (r apiReader) ClusterExists(ctx context.Context, name string) (bool, error) {
	_, err := r.c.Cluster.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// Addon gets a cluster's traffic-migration ManagedClusterAddOn.
func (r apiReader) Addon(ctx context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	return r.c.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
}
