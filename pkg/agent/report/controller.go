// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package report is the spoke agent's controller: it reports the cluster's Gateways,
// whether the cluster serves the Gateway API, and the cluster's metrics labels as
// conditions of the add-on's ManagedClusterAddOn on the hub (docs/design.md section 4,
// "What the agent writes").
//
// A sync gathers what the agent observes from its informers, computes the agent's
// conditions with a pure function (Conditions), merges them into the add-on's
// conditions without touching any other (Merge), and writes the status once, only
// when it changes, with conflict detection.
//
// On its cluster the agent reads Gateways of every namespace (list, watch), the
// gateways.gateway.networking.k8s.io CustomResourceDefinition (list, watch; a field
// selector limits it to that one) and the kube-system namespace (get). On the hub it
// reads its own ManagedClusterAddOn (get, list, watch; a field selector limits it to
// that one) and writes its status (patch).
package report

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1alpha1"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions/addon/v1alpha1"
	addonlisters "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/factory"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"open-cluster-management.io/traffic-migration/pkg/addonstatus"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// ControllerName names the controller, its queue, its logger and its field manager.
const ControllerName = "traffic-migration-agent"

const (
	// GatewayCRDName is the CustomResourceDefinition whose presence means that the
	// cluster serves the Gateway API.
	GatewayCRDName = "gateways.gateway.networking.k8s.io"
	// gatewayVersion is the version of Gateways the agent reads.
	gatewayVersion = "v1"
	// clusterIDNamespace is the namespace whose UID identifies the cluster, as OCM's
	// id.k8s.io cluster claim does.
	clusterIDNamespace = metav1.NamespaceSystem
)

// Config is what the controller reads and writes.
type Config struct {
	// ClusterName is the cluster's OCM name: the namespace of its ManagedClusterAddOn
	// on the hub, and the cluster_name label.
	ClusterName string
	// Labels are the metrics labels given in configuration; the controller adds
	// cluster_name and cluster_id.
	Labels map[string]string
	// Selector selects the Gateways to report. Nil means all.
	Selector labels.Selector

	// AddonClient writes the ManagedClusterAddOn's status on the hub.
	AddonClient addonclient.ManagedClusterAddOnsGetter
	// Addons is an informer on the hub's ManagedClusterAddOns; it may be limited to
	// this add-on in this cluster's namespace.
	Addons addoninformers.ManagedClusterAddOnInformer
	// CRDs is an informer on the cluster's CustomResourceDefinitions; it may be
	// limited to GatewayCRDName.
	CRDs apiextensionsinformers.CustomResourceDefinitionInformer
	// Namespaces reads the cluster's kube-system namespace.
	Namespaces corev1client.NamespacesGetter
	// GatewayClient watches the cluster's Gateways while the Gateway API is installed.
	GatewayClient gatewayclient.Interface
	// Clock gives the conditions' transition times. Nil means the real clock.
	Clock clock.PassiveClock
}

// Controller reports the cluster's Gateways and labels on the add-on's
// ManagedClusterAddOn. It has a single queue key: every change leads to one sync of
// everything, which writes only what changed.
type Controller struct {
	clusterName string
	labels      map[string]string
	selector    labels.Selector
	addonClient addonclient.ManagedClusterAddOnsGetter
	addons      addonlisters.ManagedClusterAddOnLister
	crds        apiextensionslisters.CustomResourceDefinitionLister
	namespaces  corev1client.NamespacesGetter
	clock       clock.PassiveClock
	synced      []cache.InformerSynced
	gateways    *gatewayWatch
	ctrl        factory.Controller

	mu        sync.Mutex
	clusterID string // read once: the UID of kube-system never changes
}

// NewController builds the controller. Start the informers in cfg, then call Run.
func NewController(cfg Config) *Controller {
	c := &Controller{
		clusterName: cfg.ClusterName,
		labels:      maps.Clone(cfg.Labels),
		selector:    cfg.Selector,
		addonClient: cfg.AddonClient,
		addons:      cfg.Addons.Lister(),
		crds:        cfg.CRDs.Lister(),
		namespaces:  cfg.Namespaces,
		clock:       cfg.Clock,
		synced:      []cache.InformerSynced{cfg.Addons.Informer().HasSynced, cfg.CRDs.Informer().HasSynced},
	}
	if c.selector == nil {
		c.selector = labels.Everything()
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	c.ctrl = factory.New().
		WithFilteredEventsInformers(c.isOurAddon, cfg.Addons.Informer()).
		WithFilteredEventsInformers(isGatewayCRD, cfg.CRDs.Informer()).
		WithSync(c.sync).
		ToController(ControllerName)
	c.gateways = newGatewayWatch(cfg.GatewayClient, c.selector, c.enqueue)
	return c
}

// HasSynced tells whether the informers the controller was built with have synced.
func (c *Controller) HasSynced() bool {
	for _, synced := range c.synced {
		if !synced() {
			return false
		}
	}
	return true
}

// Run runs the controller until ctx ends, then stops the Gateway informer. It waits for
// the informers' caches first, for as long as it takes: an agent that cannot reach its
// hub yet waits rather than exits.
func (c *Controller) Run(ctx context.Context) {
	defer c.gateways.stop()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	// One worker: there is one queue key, and one writer keeps the writes in order.
	c.ctrl.Run(ctx, 1)
}

// enqueue asks for a sync.
func (c *Controller) enqueue() {
	c.ctrl.SyncContext().Queue().Add(factory.DefaultQueueKey)
}

// sync reports what the agent observes on the add-on's ManagedClusterAddOn.
func (c *Controller) sync(ctx context.Context, _ factory.SyncContext, _ string) error {
	logger := klog.FromContext(ctx)
	addon, err := c.addons.ManagedClusterAddOns(c.clusterName).Get(trafficv1alpha1.AddonName)
	if apierrors.IsNotFound(err) {
		// The hub has not enabled the add-on on this cluster, or disabled it: there is
		// nothing to report on until it comes back, which is an event.
		logger.V(2).Info("No ManagedClusterAddOn to report on", "namespace", c.clusterName, "name", trafficv1alpha1.AddonName)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read ManagedClusterAddOn %s/%s: %w", c.clusterName, trafficv1alpha1.AddonName, err)
	}
	observed, complete, err := c.gather(ctx)
	if err != nil {
		return err
	}
	if !complete {
		// The Gateway informer has just started; it asks for a sync once it has synced.
		logger.V(4).Info("Waiting for the Gateway cache")
		return nil
	}
	return c.write(ctx, addon, Conditions(observed))
}

// gather reads what the agent reports. complete is false while the Gateway informer
// has not synced yet.
func (c *Controller) gather(ctx context.Context) (o Observed, complete bool, err error) {
	id, err := c.readClusterID(ctx)
	if err != nil {
		return o, false, err
	}
	o.Labels = maps.Clone(c.labels)
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels[trafficv1alpha1.ClusterNameLabel] = c.clusterName
	o.Labels[trafficv1alpha1.ClusterIDLabel] = id
	if !c.selector.Empty() {
		o.Selector = c.selector.String()
	}

	crd, err := c.crds.Get(GatewayCRDName)
	if err != nil && !apierrors.IsNotFound(err) {
		return o, false, fmt.Errorf("read CustomResourceDefinition %s: %w", GatewayCRDName, err)
	}
	o.GatewayAPI = gatewayAPIOf(crd)
	if !o.GatewayAPI.Installed {
		if c.gateways.active() {
			klog.FromContext(ctx).Info("The Gateway API is gone, no longer watching Gateways", "reason", o.GatewayAPI.Message)
			c.gateways.stop()
		}
		return o, true, nil
	}
	store := c.gateways.ensure(ctx, crd.UID)
	if store == nil {
		return o, false, nil
	}
	for _, obj := range store.List() {
		gw, ok := obj.(*gatewayv1.Gateway)
		// The server filters by the selector already; filtering again costs little and
		// keeps the report right with any client.
		if ok && c.selector.Matches(labels.Set(gw.Labels)) {
			o.Gateways = append(o.Gateways, gw)
		}
	}
	return o, true, nil
}

// gatewayAPIOf says whether a Gateway CRD (nil when absent) serves Gateways of the
// version the agent reads.
func gatewayAPIOf(crd *apiextensionsv1.CustomResourceDefinition) GatewayAPI {
	prefix := "CustomResourceDefinition " + GatewayCRDName
	switch {
	case crd == nil:
		return GatewayAPI{Message: prefix + " is not installed"}
	case crd.DeletionTimestamp != nil:
		return GatewayAPI{Message: prefix + " is being deleted"}
	case !established(crd):
		return GatewayAPI{Message: prefix + " is not established yet"}
	case !serves(crd, gatewayVersion):
		return GatewayAPI{Message: prefix + " does not serve version " + gatewayVersion}
	}
	return GatewayAPI{Installed: true}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func serves(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

// readClusterID returns the UID of the kube-system namespace, read once.
func (c *Controller) readClusterID(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clusterID != "" {
		return c.clusterID, nil
	}
	ns, err := c.namespaces.Namespaces().Get(ctx, clusterIDNamespace, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read namespace %s for the cluster_id label: %w", clusterIDNamespace, err)
	}
	c.clusterID = string(ns.UID)
	return c.clusterID, nil
}

// write merges the agent's conditions into the add-on's status and patches it when it
// changes. The patch carries the resourceVersion it was computed from: when someone
// else wrote the status meanwhile, it fails with a conflict, and write reads the
// add-on again and recomputes, so it never overwrites a condition it does not own.
func (c *Controller) write(ctx context.Context, addon *addonv1alpha1.ManagedClusterAddOn, desired []metav1.Condition) error {
	now := metav1.NewTime(c.clock.Now()).Rfc3339Copy()
	var before []metav1.Condition
	w := addonstatus.Writer{Client: c.addonClient, FieldManager: ControllerName}
	written, err := w.Update(ctx, addon, func(current []metav1.Condition) []metav1.Condition {
		before = current
		return Merge(current, desired, now)
	})
	if written != nil {
		klog.FromContext(ctx).Info("Reported on the ManagedClusterAddOn", "namespace", addon.Namespace, "name", addon.Name,
			"changed", changedTypes(before, written.Status.Conditions))
	}
	return err
}

// changedTypes lists the agent's condition types that a write adds, changes or removes,
// for the log.
func changedTypes(before, after []metav1.Condition) []string {
	old := map[string]metav1.Condition{}
	for _, c := range before {
		if IsAgentCondition(c.Type) {
			old[c.Type] = c
		}
	}
	var changed []string
	for _, c := range after {
		if !IsAgentCondition(c.Type) {
			continue
		}
		o, ok := old[c.Type]
		delete(old, c.Type)
		if !ok || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message {
			changed = append(changed, c.Type)
		}
	}
	return append(changed, slices.Sorted(maps.Keys(old))...)
}

// isOurAddon tells whether an informer event is about this cluster's add-on.
func (c *Controller) isOurAddon(obj any) bool {
	addon, ok := unwrap(obj).(*addonv1alpha1.ManagedClusterAddOn)
	return ok && addon.Namespace == c.clusterName && addon.Name == trafficv1alpha1.AddonName
}

// isGatewayCRD tells whether an informer event is about the Gateway CRD.
func isGatewayCRD(obj any) bool {
	crd, ok := unwrap(obj).(*apiextensionsv1.CustomResourceDefinition)
	return ok && crd.Name == GatewayCRDName
}

// unwrap returns the last known state of an object deleted while the informer was not
// watching.
func unwrap(obj any) any {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
}
