// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions/addon/v1alpha1"
	addonlisters "open-cluster-management.io/api/client/addon/listers/addon/v1alpha1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions/cluster/v1beta1"
	clusterlisters "open-cluster-management.io/api/client/cluster/listers/cluster/v1beta1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/factory"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions/traffic/v1alpha1"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/pkg/hub/slots"
)

// ControllerName names the controller, its queue, its events and its field manager.
const ControllerName = "traffic-migration-policy-controller"

// Indexes of the policy informer, so that a change of a Placement, a decision or a
// cluster wakes exactly the policies it concerns.
const (
	// byPlacement indexes policies by "<namespace>/<placement>" for both their real and
	// their proxy Placement.
	byPlacement = "byPlacement"
	// byCluster indexes policies by the clusters their status lists.
	byCluster = "byCluster"
	// byHostname indexes policies by the hostnames of their spec.dns.
	byHostname = "byHostname"
)

// Controller is the policy controller.
type Controller struct {
	policyClient  trafficclient.Interface
	clusterClient clusterclient.Interface

	policies      trafficlisters.TrafficMigrationPolicyLister
	policyIndex   cache.Indexer
	placements    clusterlisters.PlacementLister
	decisionIndex cache.Indexer // PlacementDecisions, indexed byPlacement
	clusters      cache.Indexer // ManagedClusters, by name
	addons        addonlisters.ManagedClusterAddOnLister
	clusterSynced cache.InformerSynced

	recorder    kevents.EventRecorder
	endpoints   *dns.Endpoints
	limits      Limits
	prometheus  *promcheck.Clients
	evaluations *evaluator
	querySlots  *slots.Pool
	nameServers *nameServerChecks
	metrics     *Metrics
	clock       clock.PassiveClock

	// expectations are the controller's own writes that the caches do not show yet:
	// a policy's sync waits for them.
	expectations *expectations

	// memory is what the controller keeps of each policy between its syncs.
	memory *memories
	// statusBudget is the budget of status writes that carry only check results
	// (limits.StatusWrites); nil writes every check.
	statusBudget writeBudget
}

// Informers are the informers the controller reads. The ManagedClusterAddOn informer
// may be filtered to the add-on's name.
type Informers struct {
	Policies   trafficinformers.TrafficMigrationPolicyInformer
	Placements clusterinformers.PlacementInformer
	Decisions  clusterinformers.PlacementDecisionInformer
	// ManagedClusters holds the hub's ManagedClusters, whole or as their metadata alone
	// (metav1.PartialObjectMetadata): the controller reads only which exist, by name.
	ManagedClusters cache.SharedIndexInformer
	Addons          addoninformers.ManagedClusterAddOnInformer
}

// NewController builds the policy controller. metrics may be nil; endpoints may be nil
// when the hub publishes no DNS, and then spec.dns is reported as not served. limits
// are the hub admin's bounds on every policy.
func NewController(
	policyClient trafficclient.Interface,
	clusterClient clusterclient.Interface,
	kubeClient kubernetes.Interface,
	informers Informers,
	recorder kevents.EventRecorder,
	endpoints *dns.Endpoints,
	limits Limits,
	metrics *Metrics,
	clk clock.PassiveClock,
) (factory.Controller, error) {
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	err := informers.Policies.Informer().AddIndexers(cache.Indexers{byPlacement: indexByPlacement, byCluster: indexByCluster, byHostname: indexByHostname})
	if err != nil {
		return nil, fmt.Errorf("add policy indexers: %w", err)
	}
	err = informers.Decisions.Informer().AddIndexers(cache.Indexers{byPlacement: indexDecisionByPlacement})
	if err != nil {
		return nil, fmt.Errorf("add PlacementDecision indexers: %w", err)
	}
	c := &Controller{
		policyClient:  policyClient,
		clusterClient: clusterClient,
		policies:      informers.Policies.Lister(),
		policyIndex:   informers.Policies.Informer().GetIndexer(),
		placements:    informers.Placements.Lister(),
		decisionIndex: informers.Decisions.Informer().GetIndexer(),
		clusters:      informers.ManagedClusters.GetIndexer(),
		addons:        informers.Addons.Lister(),
		clusterSynced: informers.ManagedClusters.HasSynced,
		recorder:      recorder,
		endpoints:     endpoints,
		limits:        limits,
		prometheus:    promcheck.NewClients(kubeClient.CoreV1(), clk, limits.prometheusClient).WithMaxAge(promcheck.SecretMaxAge),
		metrics:       metrics,
		clock:         clk,
		expectations:  newExpectations(clk),
		memory:        newMemories(),
		statusBudget:  limits.StatusWrites.budget(clk),
	}
	c.querySlots = slots.New(maxParallelQueries, fastQuery, clk)
	c.evaluations = newEvaluator(c.evaluate, c.memory, clk)
	c.nameServers = newNameServerChecks(limits.DNSVerifier, limits.DNSNameservers, clk, c.memory)
	ctrl := factory.New().
		WithInformersQueueKeysFunc(queueKeyOf, informers.Policies.Informer()).
		WithInformersQueueKeysFunc(c.policiesOfPlacement, informers.Placements.Informer()).
		WithInformersQueueKeysFunc(c.policiesOfDecision, informers.Decisions.Informer()).
		WithFilteredEventsInformersQueueKeysFunc(c.policiesOfAddon, isOurAddon, informers.Addons.Informer()).
		WithBareInformers(informers.ManagedClusters).
		WithSync(c.sync).
		ToController(ControllerName)

	// A ManagedCluster matters only when it comes or goes (rule 6), and only to the
	// policies whose status lists it: its status heartbeats, and clusters no policy
	// has, must not wake any policy.
	queue := ctrl.SyncContext().Queue()
	c.evaluations.wake = queue.Add
	c.expectations.wake = queue.Add
	for k, informer := range map[kind]cache.SharedIndexInformer{
		kindPolicy:    informers.Policies.Informer(),
		kindPlacement: informers.Placements.Informer(),
		kindDecision:  informers.Decisions.Informer(),
	} {
		if _, err := informer.AddEventHandler(c.expectations.handler(k)); err != nil {
			return nil, fmt.Errorf("watch the controller's own writes: %w", err)
		}
	}
	c.nameServers.wake = queue.Add
	if endpoints != nil {
		if err := endpoints.AddEventHandler(c.expectations.handler(kindDNSEndpoint)); err != nil {
			return nil, fmt.Errorf("watch the controller's own writes: %w", err)
		}
		// The policies that waited for the hub to serve DNSEndpoints read theirs.
		endpoints.SetServed(func() {
			for _, h := range c.policyIndex.ListIndexFuncValues(byHostname) {
				for _, k := range c.keysByIndex(byHostname, h) {
					queue.Add(k)
				}
			}
		})
		wakeClaimants := func(hostnames []string) {
			for _, h := range hostnames {
				for _, k := range c.keysByIndex(byHostname, h) {
					queue.Add(k)
				}
			}
		}
		// A DNSEndpoint's change wakes its policy and the policies that claim one of
		// the names it published before or after: one of them may hold it now.
		endpoints.SetEnqueue(func(key string, hostnames []string) {
			queue.Add(key)
			wakeClaimants(hostnames)
		})
		// So does a policy that goes, or stops claiming a name, before it published.
		_, err = informers.Policies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, obj any) {
				before, _ := indexByHostname(old)
				after, _ := indexByHostname(obj)
				if !slices.Equal(before, after) {
					wakeClaimants(before)
				}
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				hostnames, _ := indexByHostname(obj)
				wakeClaimants(hostnames)
			},
		})
		if err != nil {
			return nil, fmt.Errorf("watch the policies' hostnames: %w", err)
		}
	}
	enqueueListing := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if mc, err := meta.Accessor(obj); err == nil {
			for _, key := range c.keysByIndex(byCluster, mc.GetName()) {
				queue.Add(key)
			}
		}
	}
	_, err = informers.ManagedClusters.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueListing,
		DeleteFunc: enqueueListing,
	})
	if err != nil {
		return nil, fmt.Errorf("watch ManagedClusters: %w", err)
	}
	return ctrl, nil
}

// forget drops all the controller keeps of a deleted policy: its memory, the
// expectations of its writes, its metrics' series and its DNSEndpoint's record.
func (c *Controller) forget(namespace, name string) {
	key := namespace + "/" + name
	c.memory.forget(key)
	c.expectations.forget(key)
	c.metrics.forget(namespace, name)
	if c.endpoints != nil {
		c.endpoints.Forget(namespace, name)
	}
}

// sync brings one policy's proxy and status up to date.
func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext, key string) error {
	logger := klog.FromContext(ctx).WithValues("policy", key)
	ctx = klog.NewContext(ctx, logger)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key this controller makes
	}
	policy, err := c.policies.TrafficMigrationPolicies(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Rule 11: a deleted policy leaves its proxy as last written.
		c.forget(ns, name)
		return nil
	}
	if err != nil {
		return err
	}
	// The caches must show what the policy's last syncs wrote: the policy's status holds
	// the drain state that the proxy's decisions, written before it, go with. The
	// watch event that brings a write wakes the policy again.
	if wait := c.expectations.pending(key, c.lookupCaches); wait > 0 {
		logger.V(4).Info("Waiting for the caches to show this controller's last writes")
		syncCtx.Queue().AddAfter(key, wait)
		return nil
	}
	now := c.clock.Now()
	// The sync decides from the status it last decided, also when only check results
	// of it are not written yet (StatusWrites), and writes over the written one.
	written := policy
	policy = c.withUnwritten(key, written)

	st := c.gather(ctx, policy, now)
	if st.conflict == "" {
		c.decideDNS(ctx, policy, st)
		st.due = dueChecks{draining: decision.Due(st.input), replacements: decision.DueReplacements(st.input)}
		st.checked.draining, st.checked.replacements = decision.Checked(st.input)
	}
	results, checkedAt := c.evaluations.take(key, policy)
	st.useEvaluations(results, checkedAt)
	out, newStatus, flushAt, applyErr, err := c.decideAndWrite(ctx, written, policy, st)
	if err != nil {
		return err
	}
	if !flushAt.IsZero() {
		syncCtx.Queue().AddAfter(key, flushAt.Sub(now))
	}
	// A round wakes the policy when its checks are done.
	c.evaluations.plan(ctx, key, written, st.clusterLabels, st.due, st.checked)
	if !out.RequeueAt.IsZero() {
		syncCtx.Queue().AddAfter(key, out.RequeueAt.Sub(now))
	}
	if d := dnsRequeue(st.dns, now); d > 0 {
		syncCtx.Queue().AddAfter(key, d)
	}
	logger.V(4).Info("Synced policy", "proxyClusters", newStatus.ProxyPlacement, "draining", newStatus.DrainingClusters, "requeueAt", out.RequeueAt)
	if apierrors.HasStatusCause(applyErr, corev1.NamespaceTerminatingCause) {
		// Nothing can be created in a namespace that is being deleted, and it never
		// stops being deleted: retrying would only repeat the failed write until the
		// namespace controller deletes the policy. The status says what failed, and
		// the proxy keeps what it lists (rule 11).
		logger.V(2).Info("Not retrying: the policy's namespace is being deleted", "err", applyErr)
		return nil
	}
	return applyErr
}

// decideAndWrite decides the proxy from what the sync gathered, applies it and then
// DNS, writes the status once (or keeps it until flushAt: writeStatus), reports it
// (events, metrics) and clears the force-remove names acted on. written is the policy
// as the cache shows it, policy as the sync decides from it (withUnwritten). applyErr is
// a failed write of the proxy, which the status records; err is a failed write of the
// status or of the annotation, which the sync returns.
func (c *Controller) decideAndWrite(ctx context.Context, written, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state) (
	out decision.Output, newStatus trafficv1alpha1.TrafficMigrationPolicyStatus, flushAt time.Time, applyErr, err error) {
	if st.conflict == "" {
		out = decision.Decide(st.input)
		applyErr = c.apply(ctx, policy, st, out.Proxy)
		if applyErr == nil {
			c.applyDNS(ctx, policy, st.dns)
		}
	}
	newStatus = buildStatus(policy, st, out, applyErr, c.limits.ceilingNote(&policy.Spec))
	if flushAt, err = c.writeStatus(ctx, written, newStatus); err != nil {
		return out, newStatus, flushAt, applyErr, err
	}
	c.report(ctx, policy, &newStatus, st, out, applyErr)
	if applyErr == nil {
		if err := c.clearForceRemove(ctx, policy, st, out); err != nil {
			return out, newStatus, flushAt, applyErr, err
		}
	}
	return out, newStatus, flushAt, applyErr, nil
}

func queueKeyOf(obj runtime.Object) []string {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil
	}
	return []string{key}
}

func indexByPlacement(obj any) ([]string, error) {
	p, ok := obj.(*trafficv1alpha1.TrafficMigrationPolicy)
	if !ok {
		return nil, nil
	}
	return []string{p.Namespace + "/" + p.Spec.PlacementRef.Name, p.Namespace + "/" + p.ProxyPlacementName()}, nil
}

// indexDecisionByPlacement indexes PlacementDecisions by "<namespace>/<placement>",
// from their placement label, so that reading a Placement's decisions does not scan
// every decision of its namespace.
func indexDecisionByPlacement(obj any) ([]string, error) {
	d, ok := obj.(*clusterv1beta1.PlacementDecision)
	if !ok || d.Labels[clusterv1beta1.PlacementLabel] == "" {
		return nil, nil
	}
	return []string{d.Namespace + "/" + d.Labels[clusterv1beta1.PlacementLabel]}, nil
}

func indexByCluster(obj any) ([]string, error) {
	p, ok := obj.(*trafficv1alpha1.TrafficMigrationPolicy)
	if !ok {
		return nil, nil
	}
	names := make([]string, 0, len(p.Status.Clusters))
	for _, c := range p.Status.Clusters {
		names = append(names, c.Name)
	}
	return names, nil
}

// indexByHostname returns the hostnames of a policy's spec.dns, sorted.
func indexByHostname(obj any) ([]string, error) {
	p, ok := obj.(*trafficv1alpha1.TrafficMigrationPolicy)
	if !ok || p.Spec.DNS == nil {
		return nil, nil
	}
	names := dns.Hostnames(p.Spec.DNS)
	slices.Sort(names)
	return names, nil
}

// keysByIndex returns the keys of the policies the index maps value to. An index that
// cannot be read (one NewController did not add) is a bug: it is reported, and wakes
// nothing.
func (c *Controller) keysByIndex(index, value string) []string {
	objs, err := c.policyIndex.ByIndex(index, value)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("look up the policies of %s %q: %w", index, value, err))
		return nil
	}
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

func (c *Controller) policiesOfPlacement(obj runtime.Object) []string {
	p, ok := obj.(*clusterv1beta1.Placement)
	if !ok {
		return nil
	}
	return c.keysByIndex(byPlacement, p.Namespace+"/"+p.Name)
}

func (c *Controller) policiesOfDecision(obj runtime.Object) []string {
	d, ok := obj.(*clusterv1beta1.PlacementDecision)
	if !ok || d.Labels[clusterv1beta1.PlacementLabel] == "" {
		return nil
	}
	return c.keysByIndex(byPlacement, d.Namespace+"/"+d.Labels[clusterv1beta1.PlacementLabel])
}

func (c *Controller) policiesOfAddon(obj runtime.Object) []string {
	a, ok := obj.(*addonv1alpha1.ManagedClusterAddOn)
	if !ok {
		return nil
	}
	// The add-on lives in its cluster's namespace.
	return c.keysByIndex(byCluster, a.Namespace)
}

func isOurAddon(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	a, ok := obj.(*addonv1alpha1.ManagedClusterAddOn)
	return ok && a.Name == trafficv1alpha1.AddonName
}

// since is a small helper for metrics.
func since(start time.Time) float64 { return time.Since(start).Seconds() }
