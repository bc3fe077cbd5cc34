// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package fleetstatus is the hub's fleet-by-cluster controller: it keeps the
// condition traffic.open-cluster-management.io/Draining on the ManagedClusterAddOn of
// every cluster that some TrafficMigrationPolicy drains, naming the policies and their
// Gateways, and removes it when no policy drains the cluster any more.
//
// It owns that one condition. It writes through sdk-go's patcher, which skips writes
// that change nothing and sends the resourceVersion it read, so a write that races
// with the agent's (or the add-on framework's) fails with a conflict and is made again
// on the object as it is now: neither loses the other's conditions.
package fleetstatus

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions/addon/v1alpha1"
	addonlisters "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/factory"

	"open-cluster-management.io/traffic-migration/pkg/addonstatus"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions/traffic/v1alpha1"
)

// ControllerName names the controller and its queue.
const ControllerName = "traffic-migration-fleet-status-controller"

// byDrainingCluster indexes policies by the clusters their status has Draining or
// Held, so a sync reads only the policies that drain its cluster.
const byDrainingCluster = "fleetstatus.byDrainingCluster"

// Controller keeps the Draining condition of each cluster's ManagedClusterAddOn. Its
// queue keys are cluster names.
type Controller struct {
	addonClient addonclient.Interface
	policyIndex cache.Indexer
	addons      addonlisters.ManagedClusterAddOnLister
}

// NewController builds the controller on the hub's informers of policies and of this
// add-on's ManagedClusterAddOns; it adds an index to the policy informer, so it must
// be called before that informer starts.
func NewController(addonClient addonclient.Interface, policies trafficinformers.TrafficMigrationPolicyInformer, addons addoninformers.ManagedClusterAddOnInformer) (factory.Controller, error) {
	err := policies.Informer().AddIndexers(cache.Indexers{byDrainingCluster: func(obj any) ([]string, error) {
		p, ok := obj.(*trafficv1alpha1.TrafficMigrationPolicy)
		if !ok {
			return nil, nil
		}
		return drainingClusters(p), nil
	}})
	if err != nil {
		return nil, fmt.Errorf("add the policy index of %s: %w", ControllerName, err)
	}
	c := &Controller{addonClient: addonClient, policyIndex: policies.Informer().GetIndexer(), addons: addons.Lister()}
	ctrl := factory.New().
		// A new or changed add-on is checked: its condition may be missing or stale.
		WithFilteredEventsInformersQueueKeysFunc(func(obj runtime.Object) []string {
			o, err := meta.Accessor(obj)
			if err != nil {
				return nil
			}
			return []string{o.GetNamespace()}
		}, isOurAddon, addons.Informer()).
		WithBareInformers(policies.Informer()).
		WithSync(c.sync).
		ToController(ControllerName)

	// A policy wakes only the clusters whose part of the message it changes.
	queue := ctrl.SyncContext().Queue()
	enqueue := func(old, new *trafficv1alpha1.TrafficMigrationPolicy) {
		for _, cluster := range changedClusters(old, new) {
			queue.Add(cluster)
		}
	}
	_, err = policies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueue(nil, asPolicy(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			enqueue(asPolicy(oldObj), asPolicy(newObj))
		},
		DeleteFunc: func(obj any) { enqueue(asPolicy(obj), nil) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch policies for %s: %w", ControllerName, err)
	}
	return ctrl, nil
}

func isOurAddon(obj any) bool {
	a, ok := obj.(*addonv1alpha1.ManagedClusterAddOn)
	return ok && a.Name == trafficv1alpha1.AddonName
}

// asPolicy reads a policy from an informer event; nil when it holds none.
func asPolicy(obj any) *trafficv1alpha1.TrafficMigrationPolicy {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, _ := obj.(*trafficv1alpha1.TrafficMigrationPolicy)
	return p
}

// changedClusters are the clusters for which the policy's drain, as the condition
// names it, differs between old and new (either may be nil), sorted.
func changedClusters(old, new *trafficv1alpha1.TrafficMigrationPolicy) []string {
	drains := func(p *trafficv1alpha1.TrafficMigrationPolicy) map[string]drain {
		out := map[string]drain{}
		if p == nil {
			return out
		}
		for _, name := range drainingClusters(p) {
			if d, ok := drainOf(p, name); ok {
				out[name] = d
			}
		}
		return out
	}
	before, after := drains(old), drains(new)
	var changed []string
	for name, d := range after {
		if b, ok := before[name]; !ok || b != d {
			changed = append(changed, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

// sync brings the Draining condition of one cluster's ManagedClusterAddOn up to date.
func (c *Controller) sync(ctx context.Context, _ factory.SyncContext, cluster string) error {
	addon, err := c.addons.ManagedClusterAddOns(cluster).Get(trafficv1alpha1.AddonName)
	if apierrors.IsNotFound(err) {
		return nil // the add-on is not enabled there; its creation is an event
	}
	if err != nil {
		return err
	}
	draining, err := c.policiesDraining(cluster)
	if err != nil {
		return err
	}
	want := Desired(cluster, draining)
	w := addonstatus.Writer{Client: c.addonClient.AddonV1alpha1(), FieldManager: ControllerName}
	written, err := w.Update(ctx, addon, func(conditions []metav1.Condition) []metav1.Condition {
		if want == nil {
			meta.RemoveStatusCondition(&conditions, trafficv1alpha1.AddonConditionDraining)
		} else {
			meta.SetStatusCondition(&conditions, *want)
		}
		return conditions
	})
	if written != nil {
		klog.FromContext(ctx).V(2).Info("Wrote the Draining condition", "cluster", cluster, "draining", want != nil)
	}
	return err
}

// policiesDraining lists the policies whose status has the cluster draining or held.
// An index that cannot be read (one NewController did not add) is a bug, returned as
// an error rather than read as "no policy drains it", which would clear the condition.
func (c *Controller) policiesDraining(cluster string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error) {
	objs, err := c.policyIndex.ByIndex(byDrainingCluster, cluster)
	if err != nil {
		return nil, fmt.Errorf("look up the policies draining cluster %q: %w", cluster, err)
	}
	byKey := map[string]*trafficv1alpha1.TrafficMigrationPolicy{}
	for _, o := range objs {
		if p, ok := o.(*trafficv1alpha1.TrafficMigrationPolicy); ok {
			byKey[p.Namespace+"/"+p.Name] = p
		}
	}
	out := make([]*trafficv1alpha1.TrafficMigrationPolicy, 0, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		out = append(out, byKey[k])
	}
	return out, nil
}
