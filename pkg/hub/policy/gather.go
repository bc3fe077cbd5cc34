// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
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
	evaluations map[string]promcheck.Check
	// replacementEvaluations are the Active clusters' replacement checks this sync
	// decides with, by cluster.
	replacementEvaluations map[string]promcheck.Check
	// windowNote says why trafficShare.window is too short for the spacing of its
	// series' samples, from the round this sync decides with; "" when it is not.
	windowNote string
	// due are the checks that are due and have no result yet.
	due dueChecks
	// checked are the checks that run, due now or later.
	checked dueChecks
	// clusterLabels are the agents' metrics labels, by cluster, for the checks' queries.
	clusterLabels map[string]map[string]string
	// dns is what the sync gathered and did about spec.dns; nil without it.
	dns *dnsState
}

// gather reads everything a decision needs from the informers' caches (gather.Read,
// which the check command reads the API with); the Prometheus checks run apart (see
// evaluator), so that a slow Prometheus never delays a sync. It never fails: what
// cannot be read is reported in the state and decided on the safe side.
func (c *Controller) gather(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, now time.Time) *state {
	st := &state{proxyName: policy.ProxyPlacementName()}
	st.proxy, st.conflict = c.proxyPlacement(policy, st.proxyName)
	hub := gather.Read(ctx, caches{c}, policy, c.limits.policyOf(&policy.Spec), now)
	st.input, st.proxyDecisions, st.realProblem, st.clusterLabels = hub.Input, hub.ProxyDecisions, hub.RealProblem, hub.Labels
	if hub.ProxyErr != nil && st.conflict == "" {
		// Without P nothing can be decided safely: write nothing, as for a conflict.
		st.conflict = hub.ProxyErr.Error() + ": nothing is written"
	}
	if st.conflict == "" {
		c.readDNS(ctx, policy, st, agentReports{ready: hub.Input.GatewayReady, labels: hub.Labels, addresses: hub.Addresses})
	}
	return st
}

// caches reads the hub for gather.Read through the controller's informers' caches,
// which show every write of the policy's previous syncs (see expectations).
type caches struct{ c *Controller }

// errNotSynced: the ManagedClusters are not known until their cache has synced.
var errNotSynced = errors.New("the ManagedClusters are not synced yet")

func (r caches) Placement(_ context.Context, namespace, name string) (*clusterv1beta1.Placement, error) {
	return r.c.placements.Placements(namespace).Get(name)
}

// Decisions lists the cache's PlacementDecisions of a Placement.
func (r caches) Decisions(_ context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	return r.c.decisionsOf(namespace, placement)
}

func (r caches) ClusterExists(_ context.Context, name string) (bool, error) {
	if !r.c.clusterSynced() {
		return false, errNotSynced
	}
	_, exists, err := r.c.clusters.GetByKey(name)
	return exists, err
}

func (r caches) Addon(_ context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	return r.c.addons.ManagedClusterAddOns(cluster).Get(trafficv1alpha1.AddonName)
}

// useEvaluations gives the decision the checks that finished for clusters that are due,
// and leaves in st.due the ones still to check.
func (st *state) useEvaluations(results roundResults, at time.Time) {
	st.due.draining = useChecks(st.due.draining, results.draining, at, &st.evaluations, &st.input.Checks)
	st.due.replacements = useChecks(st.due.replacements, results.replacements, at, &st.replacementEvaluations, &st.input.ReplacementChecks)
	st.windowNote = results.windowNote
}

// useChecks moves the results of the due clusters into evaluations, with their
// reasons, and into the decision's input, and returns the due clusters without a
// result yet. The maps are made on the first result.
func useChecks(due []string, results map[string]promcheck.Check, at time.Time,
	evaluations *map[string]promcheck.Check, input *map[string]decision.Check) []string {
	var unchecked []string
	for _, name := range due {
		ev, ok := results[name]
		if !ok {
			unchecked = append(unchecked, name)
			continue
		}
		if *evaluations == nil {
			*evaluations, *input = map[string]promcheck.Check{}, map[string]decision.Check{}
		}
		(*evaluations)[name] = ev
		(*input)[name] = decision.Check{Result: ev.Result, Value: ev.Value, Query: ev.Query, Message: ev.Message, At: at}
	}
	return unchecked
}

// proxyPlacement returns the proxy Placement if it exists, and a conflict message when
// the name is taken by a Placement this manager did not create for this policy.
func (c *Controller) proxyPlacement(policy *trafficv1alpha1.TrafficMigrationPolicy, name string) (*clusterv1beta1.Placement, string) {
	p, err := c.placements.Placements(policy.Namespace).Get(name)
	if err != nil {
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

// agentReports are what the spoke agents say, by cluster.
type agentReports struct {
	ready  sets.Set[string]
	labels map[string]map[string]string
	// addresses are the target Gateway's addresses.
	addresses map[string][]string
}
