// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// state is what a sync gathered: the decision's input and what the status reports.
type state struct {
	input decision.Input

	proxyName string
	// proxy is the proxy Placement as it is; nil when it does not exist yet.
	proxy *clusterv1beta1.Placement
	// proxyDecisions are the proxy's PlacementDecisions as they are.
	proxyDecisions []*clusterv1beta1.PlacementDecision
	// conflict, when set, says why the proxy name cannot be used: nothing is written.
	conflict string
	// realProblem, when set, says why the real decisions are not known (rule 7).
	realProblem string
	// evaluations are the checks this sync decides with, with their reasons, by cluster.
	evaluations map[string]promcheck.Evaluation
	// replacementEvaluations are the Active clusters' replacement checks this sync
	// decides with, by cluster.
	replacementEvaluations map[string]promcheck.Evaluation
	// due are the checks that are due and have no result yet.
	due dueChecks
	// clusterLabels are the agents' metrics labels, by cluster, for the checks' queries.
	clusterLabels map[string]map[string]string
	// dns is what the sync gathered and did about spec.dns; nil without it.
	dns *dnsState
}

// gather reads everything a decision needs from the informers' caches; the Prometheus
// checks run apart (see evaluator), so that a slow Prometheus never delays a sync. It
// never fails: what cannot be read is reported in the state and decided on the safe
// side.
func (c *Controller) gather(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, now time.Time) *state {
	st := &state{proxyName: policy.ProxyPlacementName()}
	st.input = decision.Input{
		Now:         now,
		Policy:      c.limits.policyOf(&policy.Spec),
		Previous:    policy.Status.Clusters,
		ForceRemove: trafficv1alpha1.ParseForceRemove(policy.Annotations[trafficv1alpha1.ForceRemoveAnnotation]),
	}

	st.proxy, st.conflict = c.proxyPlacement(policy, st.proxyName)
	var err error
	if st.proxyDecisions, err = c.proxyDecisionsOf(policy.Namespace, st.proxyName); err != nil && st.conflict == "" {
		// Without P nothing can be decided safely: write nothing, as for a conflict.
		st.conflict = err.Error() + ": nothing is written"
	}
	st.input.Proxy = proxy.Groups(st.proxyDecisions)
	st.input.Real, st.realProblem = c.realGroups(policy)
	st.input.RealKnown = st.realProblem == ""

	st.input.ManagedClusters = c.existingClusters(&st.input)

	agents := c.readAgents(policy, st.input.Real, st.input.Proxy, drainingRows(policy))
	st.input.GatewayReady = agents.ready
	st.clusterLabels = agents.labels
	if st.conflict == "" {
		c.gatherDNS(ctx, policy, st, agents)
	}
	if st.conflict == "" {
		st.due = dueChecks{draining: decision.Due(st.input), replacements: decision.DueReplacements(st.input)}
	}
	return st
}

// existingClusters returns which of the clusters the decision can act on (the real and
// proxy decisions' and the status's) have a ManagedCluster: a lookup per cluster of
// the policy, so that a sync costs the same in a fleet of any size. Nil when the
// ManagedClusters are not known yet.
func (c *Controller) existingClusters(in *decision.Input) sets.Set[string] {
	if !c.clusterSynced() {
		return nil
	}
	exists := sets.New[string]()
	check := func(name string) {
		if exists.Has(name) {
			return
		}
		if _, err := c.clusters.Get(name); err == nil {
			exists.Insert(name)
		} else if !apierrors.IsNotFound(err) {
			exists = nil
		}
	}
	for _, groups := range [][]decision.Group{in.Real, in.Proxy} {
		for _, g := range groups {
			for _, name := range g.Clusters {
				if check(name); exists == nil {
					return nil
				}
			}
		}
	}
	for _, row := range in.Previous {
		if check(row.Name); exists == nil {
			return nil
		}
	}
	return exists
}

// useEvaluations gives the decision the checks that finished for clusters that are due,
// and leaves in st.due the ones still to check.
func (st *state) useEvaluations(results roundResults, at time.Time) {
	st.due.draining = useChecks(st.due.draining, results.draining, at, &st.evaluations, &st.input.Evaluations)
	st.due.replacements = useChecks(st.due.replacements, results.replacements, at, &st.replacementEvaluations, &st.input.ReplacementEvaluations)
}

// useChecks moves the results of the due clusters into evaluations, with their
// reasons, and into the decision's input, and returns the due clusters without a
// result yet. The maps are made on the first result.
func useChecks(due []string, results map[string]promcheck.Evaluation, at time.Time,
	evaluations *map[string]promcheck.Evaluation, input *map[string]decision.Evaluation) []string {
	var unchecked []string
	for _, name := range due {
		ev, ok := results[name]
		if !ok {
			unchecked = append(unchecked, name)
			continue
		}
		if *evaluations == nil {
			*evaluations, *input = map[string]promcheck.Evaluation{}, map[string]decision.Evaluation{}
		}
		(*evaluations)[name] = ev
		(*input)[name] = decision.Evaluation{Result: ev.Result, Value: ev.Value, Query: ev.Query, Message: ev.Message, At: at}
	}
	return unchecked
}

// proxyPlacement returns the proxy Placement if it exists, as this controller last
// wrote it if the cache is behind, and a conflict message when the name is taken by a
// Placement this manager did not create for this policy.
func (c *Controller) proxyPlacement(policy *trafficv1alpha1.TrafficMigrationPolicy, name string) (*clusterv1beta1.Placement, string) {
	p, err := c.placements.Placements(policy.Namespace).Get(name)
	p, ok := c.written.placements.get(policy.Namespace, name, p, err == nil)
	if !ok {
		return nil, ""
	}
	owner, ours := p.Labels[trafficv1alpha1.PolicyLabel]
	if !ours || p.Annotations[clusterv1beta1.PlacementDisableAnnotation] != "true" {
		return p, fmt.Sprintf("Placement %s exists and was not created by traffic-migration: choose another proxyPlacementName", name)
	}
	if owner != policy.Name {
		// Another live policy that names the same proxy keeps it; a policy that is gone
		// left it to be adopted (rule 11).
		if other, err := c.policies.TrafficMigrationPolicies(policy.Namespace).Get(owner); err == nil && other.ProxyPlacementName() == name {
			return p, fmt.Sprintf("proxy Placement %s belongs to policy %s", name, owner)
		}
	}
	return p, ""
}

// decisionsOf lists the PlacementDecisions of a Placement, by their label.
func (c *Controller) decisionsOf(namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	objs, err := c.decisionIndex.ByIndex(byPlacement, namespace+"/"+placement)
	if err != nil {
		return nil, fmt.Errorf("look up the PlacementDecisions of Placement %s/%s: %w", namespace, placement, err)
	}
	ds := make([]*clusterv1beta1.PlacementDecision, 0, len(objs))
	for _, o := range objs {
		if d, ok := o.(*clusterv1beta1.PlacementDecision); ok {
			ds = append(ds, d)
		}
	}
	return ds, nil
}

// proxyDecisionsOf lists the proxy's PlacementDecisions as this controller last wrote
// them: the cache's copies, newer ones this controller wrote, without those it deleted
// and with those it created, until the cache has caught up (see written).
func (c *Controller) proxyDecisionsOf(namespace, proxyName string) ([]*clusterv1beta1.PlacementDecision, error) {
	cached, err := c.decisionsOf(namespace, proxyName)
	if err != nil {
		return nil, err
	}
	return c.written.decisions.list(cached, func(d *clusterv1beta1.PlacementDecision) bool {
		return d.Namespace == namespace && d.Labels[clusterv1beta1.PlacementLabel] == proxyName
	}), nil
}

// realGroups reads the real Placement's decision groups, or says why they are not
// known: the Placement is missing or being deleted, or it has no decisions yet (its
// scheduler has not run). Then the proxy keeps what it has (rule 7).
func (c *Controller) realGroups(policy *trafficv1alpha1.TrafficMigrationPolicy) ([]decision.Group, string) {
	name := policy.Spec.PlacementRef.Name
	p, err := c.placements.Placements(policy.Namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("Placement %s not found: the proxy keeps its clusters", name)
	case err != nil:
		return nil, fmt.Sprintf("Placement %s cannot be read: the proxy keeps its clusters", name)
	case p.DeletionTimestamp != nil:
		return nil, fmt.Sprintf("Placement %s is being deleted: the proxy keeps its clusters", name)
	}
	ds, err := c.decisionsOf(policy.Namespace, name)
	if err != nil {
		return nil, fmt.Sprintf("Placement %s's decisions cannot be read (%v): the proxy keeps its clusters", name, err)
	}
	if len(ds) == 0 {
		return nil, fmt.Sprintf("Placement %s has no PlacementDecisions yet: the proxy keeps its clusters", name)
	}
	return proxy.Groups(ds), ""
}

// agentReports are what the spoke agents say, by cluster.
type agentReports struct {
	ready  sets.Set[string]
	labels map[string]map[string]string
	// addresses are the target Gateway's addresses.
	addresses map[string][]string
}

// readAgents reads the agent conditions of every cluster in the real or proxy
// decisions: the target Gateway's readiness and the metrics labels. An agent that is
// not installed or not available counts as not ready.
func (c *Controller) readAgents(policy *trafficv1alpha1.TrafficMigrationPolicy, groups ...[]decision.Group) agentReports {
	r := agentReports{ready: sets.New[string](), labels: map[string]map[string]string{}, addresses: map[string][]string{}}
	gatewayCondition := trafficv1alpha1.GatewayConditionType(policy.TargetNamespace(), policy.Spec.TargetRef.Name)
	gatewayKey := trafficv1alpha1.GatewayKey(policy.TargetNamespace(), policy.Spec.TargetRef.Name)
	seen := sets.New[string]()
	for _, gs := range groups {
		for _, g := range gs {
			for _, cluster := range g.Clusters {
				if seen.Has(cluster) {
					continue
				}
				seen.Insert(cluster)
				addon, err := c.addons.ManagedClusterAddOns(cluster).Get(trafficv1alpha1.AddonName)
				if err != nil {
					continue
				}
				if l := meta.FindStatusCondition(addon.Status.Conditions, trafficv1alpha1.ConditionClusterLabels); l != nil && l.Status == metav1.ConditionTrue {
					r.labels[cluster] = trafficv1alpha1.ParseClusterLabels(l.Message)
				}
				if trafficv1alpha1.GatewayReady(addon.Status.Conditions, gatewayCondition) {
					r.ready.Insert(cluster)
				}
				if policy.Spec.DNS != nil {
					if a := meta.FindStatusCondition(addon.Status.Conditions, trafficv1alpha1.ConditionGatewayAddresses); a != nil && a.Status == metav1.ConditionTrue {
						r.addresses[cluster] = trafficv1alpha1.ParseGatewayAddresses(a.Message)[gatewayKey]
					}
				}
			}
		}
	}
	return r
}

// drainingRows is the group of the clusters that the policy's status says drain, so
// that the agents of clusters the proxy lost (rule 12) are read too.
func drainingRows(policy *trafficv1alpha1.TrafficMigrationPolicy) []decision.Group {
	g := decision.Group{}
	for _, row := range policy.Status.Clusters {
		if row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld {
			g.Clusters = append(g.Clusters, row.Name)
		}
	}
	return []decision.Group{g}
}
