// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// reader is what the views need of the hub. apiReader asks the API server; the watch
// reads its informers' caches.
type reader interface {
	// policies lists the policies of a namespace, or of all namespaces for "".
	policies(ctx context.Context, namespace string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error)
	// policy gets one policy; a *hubclient.PolicyNotFoundError when it does not exist.
	policy(ctx context.Context, namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error)
	// decisions lists the PlacementDecisions of a Placement, by their label.
	decisions(ctx context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error)
	// addon gets the traffic-migration add-on of a cluster; nil, nil when there is none.
	addon(ctx context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error)
}

// query says which policies to show and how much of them.
type query struct {
	// namespace is the policies' namespace; "" for all namespaces.
	namespace string
	// name is the policy to show; "" for all of the namespace.
	name string
	// detail asks for each policy's proxy decisions and its clusters' add-ons too.
	detail bool
}

// gather reads the objects of the policies that q asks for, sorted by namespace and
// name. A policy that cannot be read is an error; decisions and add-ons that cannot
// be read are recorded in the policy's objects so the view can say so.
func gather(ctx context.Context, r reader, q query) ([]policyview.Objects, error) {
	var policies []*trafficv1alpha1.TrafficMigrationPolicy
	if q.name != "" {
		p, err := r.policy(ctx, q.namespace, q.name)
		if err != nil {
			return nil, err
		}
		policies = append(policies, p)
	} else {
		var err error
		if policies, err = r.policies(ctx, q.namespace); err != nil {
			return nil, err
		}
		slices.SortFunc(policies, func(a, b *trafficv1alpha1.TrafficMigrationPolicy) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
	}

	out := make([]policyview.Objects, 0, len(policies))
	addons := map[string]*addonv1alpha1.ManagedClusterAddOn{}
	addonErrs := map[string]error{}
	for _, p := range policies {
		objs := policyview.Objects{Policy: p, Detail: q.detail}
		if q.detail {
			objs.Decisions, objs.DecisionsErr = r.decisions(ctx, p.Namespace, p.ProxyPlacementName())
			objs.Addons = map[string]*addonv1alpha1.ManagedClusterAddOn{}
			objs.AddonErrs = map[string]error{}
			for _, cluster := range clustersOf(p, objs.Decisions) {
				a, seen := addons[cluster]
				err := addonErrs[cluster]
				if !seen && err == nil {
					a, err = r.addon(ctx, cluster)
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					addons[cluster], addonErrs[cluster] = a, err
				}
				if err != nil {
					objs.AddonErrs[cluster] = err
				} else if a != nil {
					objs.Addons[cluster] = a
				}
			}
			if len(objs.AddonErrs) == 0 {
				objs.AddonErrs = nil
			}
		}
		out = append(out, objs)
	}
	return out, nil
}

// clustersOf lists the clusters of a policy's status and of its proxy decisions, once each.
func clustersOf(p *trafficv1alpha1.TrafficMigrationPolicy, decisions []*clusterv1beta1.PlacementDecision) []string {
	names := proxy.Clusters(decisions)
	for _, c := range p.Status.Clusters {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// apiReader reads through the API server and turns its errors into ones a person
// can act on.
type apiReader struct{ c *hubclient.Clients }

func (r apiReader) policies(ctx context.Context, namespace string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error) {
	list, err := r.c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, r.policyError(err, "list", namespace, "")
	}
	out := make([]*trafficv1alpha1.TrafficMigrationPolicy, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

func (r apiReader) policy(ctx context.Context, namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	p, err := r.c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, r.policyError(err, "get", namespace, name)
	}
	return p, nil
}

func (r apiReader) decisions(ctx context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	sel := labels.SelectorFromSet(labels.Set{clusterv1beta1.PlacementLabel: placement}).String()
	list, err := r.c.Cluster.ClusterV1beta1().PlacementDecisions(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	out := make([]*clusterv1beta1.PlacementDecision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

func (r apiReader) addon(ctx context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	a, err := r.c.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return a, err
}

// policyError explains a failed read of policies (hubclient.PolicyError).
func (r apiReader) policyError(err error, verb, namespace, name string) error {
	return hubclient.PolicyError(r.c.Traffic.Discovery(), err, verb, namespace, name)
}
