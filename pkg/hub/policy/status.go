// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// maxNamesInMessage bounds how many cluster names a condition message lists.
const maxNamesInMessage = 10

// buildStatus is the policy's status after a sync: the decision's rows and the four
// conditions. It is a pure function of its inputs; messages carry no timestamps and no
// live values, so an unchanged state gives an unchanged status and no write.
// ceilingNote, when not empty, says that the hub's ceiling can end the policy's drains.
func buildStatus(policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, out decision.Output, applyErr error, ceilingNote string) trafficv1alpha1.TrafficMigrationPolicyStatus {
	s := *policy.Status.DeepCopy()
	s.ObservedGeneration = policy.Generation
	s.ProxyPlacement = &trafficv1alpha1.ProxyPlacementStatus{Name: st.proxyName}
	if st.conflict == "" && applyErr == nil {
		// What was decided is what the proxy now lists. When the proxy could not be
		// written, the rows stay as they were: the next sync decides again.
		s.Clusters = out.Clusters
		noteRefusedOnRows(s.Clusters, st.dns)
	}
	s.ActiveClusters, s.DrainingClusters = 0, 0
	var draining, held []string
	for _, row := range s.Clusters {
		switch row.Phase {
		case trafficv1alpha1.ClusterActive:
			s.ActiveClusters++
		case trafficv1alpha1.ClusterDraining:
			s.DrainingClusters++
			draining = append(draining, row.Name)
		case trafficv1alpha1.ClusterHeld:
			s.DrainingClusters++
			held = append(held, row.Name)
		}
	}
	s.ProxyPlacement.NumberOfClusters = s.ActiveClusters + s.DrainingClusters

	set := func(c metav1.Condition) {
		c.ObservedGeneration = policy.Generation
		meta.SetStatusCondition(&s.Conditions, c)
	}
	set(readyCondition(policy, st, s.ProxyPlacement.NumberOfClusters, applyErr))
	if c, ok := prometheusCondition(st, s.DrainingClusters); ok {
		set(c)
	}
	set(drainingCondition(policy, append(draining, held...), ceilingNote))
	set(heldCondition(held, ceilingNote))
	s.DNS = dnsStatus(policy, st.dns)
	if c, ok := dnsCondition(policy, st.dns); ok {
		set(c)
	} else if st.dns == nil {
		meta.RemoveStatusCondition(&s.Conditions, trafficv1alpha1.ConditionDNSPublished)
	}
	return s
}

func readyCondition(policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, clusters int32, applyErr error) metav1.Condition {
	c := metav1.Condition{Type: trafficv1alpha1.ConditionReady, Status: metav1.ConditionFalse}
	_, expectationErr := policy.Spec.Expectation()
	switch {
	case st.conflict != "":
		c.Reason, c.Message = trafficv1alpha1.ReasonProxyPlacementConflict, st.conflict
	case applyErr != nil:
		c.Reason, c.Message = trafficv1alpha1.ReasonApplyFailed, "Writing the proxy failed, retrying: "+applyErr.Error()
	case st.realProblem != "":
		c.Reason, c.Message = trafficv1alpha1.ReasonPlacementNotFound, st.realProblem
	case expectationErr != nil:
		c.Reason, c.Message = trafficv1alpha1.ReasonInvalidQuery, "expectedMetricsResult: "+expectationErr.Error()+": no check can pass"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, trafficv1alpha1.ReasonReconciled
		c.Message = fmt.Sprintf("Proxy Placement %s mirrors Placement %s and lists %d clusters", st.proxyName, policy.Spec.PlacementRef.Name, clusters)
	}
	return c
}

// prometheusCondition reports the checks of this sync. Without draining clusters there
// is nothing to check; with draining clusters but no check due in this sync, the
// condition stays as the last checks left it (ok is false).
func prometheusCondition(st *state, draining int32) (metav1.Condition, bool) {
	c := metav1.Condition{Type: trafficv1alpha1.ConditionPrometheusReachable}
	if draining == 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, trafficv1alpha1.ReasonNothingToEvaluate, "No cluster is draining"
		return c, true
	}
	if len(st.evaluations) == 0 && len(st.replacementEvaluations) == 0 {
		return c, false
	}
	for _, checks := range []struct {
		what string
		evs  map[string]promcheck.Check
	}{{"Check", st.evaluations}, {"Replacement check", st.replacementEvaluations}} {
		for _, name := range slices.Sorted(maps.Keys(checks.evs)) {
			ev := checks.evs[name]
			if ev.Reason != trafficv1alpha1.ReasonQuerySucceeded {
				c.Status, c.Reason = metav1.ConditionFalse, ev.Reason
				c.Message = fmt.Sprintf("%s of cluster %s: %s", checks.what, name, ev.Message)
				return c, true
			}
		}
	}
	c.Status, c.Reason = metav1.ConditionTrue, trafficv1alpha1.ReasonQuerySucceeded
	c.Message = "The last checks of the draining clusters got a result from Prometheus"
	if st.windowNote != "" {
		c.Reason = trafficv1alpha1.ReasonWindowTooShort
		c.Message = "The last checks of the draining clusters got a result from Prometheus, but " + st.windowNote
	}
	return c, true
}

func drainingCondition(policy *trafficv1alpha1.TrafficMigrationPolicy, names []string, ceilingNote string) metav1.Condition {
	c := metav1.Condition{Type: trafficv1alpha1.ConditionDraining}
	slices.Sort(names)
	switch {
	case len(names) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, trafficv1alpha1.ReasonNoClustersDraining, "No cluster is draining"
	case policy.Spec.Suspend:
		c.Status, c.Reason = metav1.ConditionTrue, trafficv1alpha1.ReasonSuspended
		c.Message = "Removals are suspended; draining: " + nameList(names) + ceilingNote
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, trafficv1alpha1.ReasonClustersDraining, "Draining: "+nameList(names)+ceilingNote
	}
	return c
}

func heldCondition(names []string, ceilingNote string) metav1.Condition {
	if len(names) == 0 {
		return metav1.Condition{Type: trafficv1alpha1.ConditionHeld, Status: metav1.ConditionFalse,
			Reason: trafficv1alpha1.ReasonWithinDeadline, Message: "No cluster is past maxDrainDuration" + ceilingNote}
	}
	return metav1.Condition{Type: trafficv1alpha1.ConditionHeld, Status: metav1.ConditionTrue,
		Reason: trafficv1alpha1.ReasonMaxDrainDurationExceeded, Message: "Kept past maxDrainDuration or the hub's ceiling: " + nameList(names) + ceilingNote}
}

func nameList(names []string) string { return shortlist.Join(names, maxNamesInMessage) }

// report records events for what changed (conditions, cluster phases, removals) and
// updates the metrics. It never records an event for a sync that changed nothing.
func (c *Controller) report(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, newStatus *trafficv1alpha1.TrafficMigrationPolicyStatus, st *state, out decision.Output, applyErr error) {
	c.metrics.observe(policy, newStatus)
	c.reportRefused(policy, st.dns)
	for _, nc := range newStatus.Conditions {
		old := meta.FindStatusCondition(policy.Status.Conditions, nc.Type)
		if old != nil && old.Status == nc.Status && old.Reason == nc.Reason {
			continue
		}
		warning := (nc.Status == metav1.ConditionFalse && (nc.Type == trafficv1alpha1.ConditionReady || nc.Type == trafficv1alpha1.ConditionPrometheusReachable ||
			(nc.Type == trafficv1alpha1.ConditionDNSPublished && nc.Reason != trafficv1alpha1.ReasonWaitingForExternalDNS))) ||
			(nc.Status == metav1.ConditionTrue && nc.Type == trafficv1alpha1.ConditionHeld)
		if old == nil && !warning && !(nc.Type == trafficv1alpha1.ConditionDraining && nc.Status == metav1.ConditionTrue) {
			// A new policy's conditions in their usual state are no news: a thousand
			// policies created at once would otherwise make thousands of events.
			continue
		}
		c.event(policy, eventTypeOf(warning), nc.Reason, fmt.Sprintf("%s is %s: %s", nc.Type, nc.Status, nc.Message))
	}
	if applyErr != nil {
		c.metrics.errors.WithLabelValues(trafficv1alpha1.ReasonApplyFailed).Inc()
		return
	}
	for _, changed := range phaseChanges(policy.Status.Clusters, newStatus.Clusters) {
		c.event(policy, eventTypeOf(changed.phase == trafficv1alpha1.ClusterHeld), phaseEventReasons[changed.phase], changed.note())
	}
	for _, r := range out.Removed {
		c.metrics.removed(policy, r, newStatus)
		c.event(policy, corev1.EventTypeNormal, string(r.Reason), fmt.Sprintf("Removed cluster %s from proxy Placement %s (%s)", r.Cluster, st.proxyName, r.Reason))
	}
	if len(out.Restored) > 0 {
		c.event(policy, corev1.EventTypeWarning, ReasonProxyRestored, fmt.Sprintf("Proxy Placement %s had lost draining %s; listed again, as the status says they drain", st.proxyName, nameList(out.Restored)))
	}
	if len(out.DNSWithdrawn) > 0 {
		c.event(policy, corev1.EventTypeNormal, ReasonDNSWithdrawn, fmt.Sprintf("DNS let go of %s: the drain clock starts now", nameList(out.DNSWithdrawn)))
	}
	for _, s := range out.ForceRemoveSkipped {
		c.event(policy, corev1.EventTypeWarning, string(s.Reason), fmt.Sprintf("Force-remove of cluster %s removed nothing (%s)", s.Cluster, s.Reason))
	}
	klog.FromContext(ctx).V(6).Info("Reported", "conditions", len(newStatus.Conditions))
}

// phaseChange is the clusters that entered one phase in a sync.
type phaseChange struct {
	phase trafficv1alpha1.ClusterPhase
	rows  []trafficv1alpha1.ClusterStatus
}

// maxNamesInEvent bounds the cluster names one event lists.
const maxNamesInEvent = 10

// phaseChanges groups the clusters whose phase changed by their new phase, in the
// order of the phases, so that a Placement that adds or drops hundreds of clusters
// makes one event per phase and not hundreds. Removals have events of their own.
func phaseChanges(old, updated []trafficv1alpha1.ClusterStatus) []phaseChange {
	oldPhase := map[string]trafficv1alpha1.ClusterPhase{}
	for _, row := range old {
		oldPhase[row.Name] = row.Phase
	}
	var out []phaseChange
	for _, phase := range []trafficv1alpha1.ClusterPhase{trafficv1alpha1.ClusterActive, trafficv1alpha1.ClusterDraining, trafficv1alpha1.ClusterHeld} {
		change := phaseChange{phase: phase}
		for _, row := range updated {
			if row.Phase == phase && oldPhase[row.Name] != phase {
				change.rows = append(change.rows, row)
			}
		}
		if len(change.rows) > 0 {
			out = append(out, change)
		}
	}
	return out
}

// note says which clusters entered the phase and why: one cluster with its own
// message; several by name (at most maxNamesInEvent), with their message if they
// share one.
func (p phaseChange) note() string {
	if len(p.rows) == 1 {
		return fmt.Sprintf("Cluster %s is %s: %s", p.rows[0].Name, p.phase, p.rows[0].Message)
	}
	names := make([]string, 0, len(p.rows))
	same := true
	for _, row := range p.rows {
		names = append(names, row.Name)
		same = same && row.Message == p.rows[0].Message
	}
	note := fmt.Sprintf("%d clusters are %s: %s", len(p.rows), p.phase, shortlist.Join(names, maxNamesInEvent))
	if same && p.rows[0].Message != "" {
		note += ": " + p.rows[0].Message
	}
	return note
}

// clearForceRemove removes from the force-remove annotation the names this sync acted
// on, so each is acted on once; a name deferred because the real decisions could not
// be read stays. Nothing else of the policy changes.
func (c *Controller) clearForceRemove(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, out decision.Output) error {
	if len(st.input.ForceRemove) == 0 {
		return nil
	}
	// The names acted on leave the annotation; a name deferred because the real
	// decisions could not be read stays, and so does a name added meanwhile.
	acted := sets.New(st.input.ForceRemove...)
	if len(out.Restored) > 0 {
		c.event(policy, corev1.EventTypeWarning, ReasonProxyRestored, fmt.Sprintf("Proxy Placement %s had lost draining %s; listed again, as the status says they drain", st.proxyName, nameList(out.Restored)))
	}
	if len(out.DNSWithdrawn) > 0 {
		c.event(policy, corev1.EventTypeNormal, ReasonDNSWithdrawn, fmt.Sprintf("DNS let go of %s: the drain clock starts now", nameList(out.DNSWithdrawn)))
	}
	for _, s := range out.ForceRemoveSkipped {
		if s.Reason == decision.SkipRealDecisionsUnknown {
			acted.Delete(s.Cluster)
		}
	}
	return c.patchPolicy(ctx, policy, "clear the force-remove annotation", func(w *policyWriter, current *trafficv1alpha1.TrafficMigrationPolicy) error {
		var keep []string
		for _, name := range trafficv1alpha1.ParseForceRemove(current.Annotations[trafficv1alpha1.ForceRemoveAnnotation]) {
			if !acted.Has(name) {
				keep = append(keep, name)
			}
		}
		updated := current.DeepCopy()
		if len(keep) == 0 {
			delete(updated.Annotations, trafficv1alpha1.ForceRemoveAnnotation)
		} else {
			updated.Annotations[trafficv1alpha1.ForceRemoveAnnotation] = strings.Join(keep, ",")
		}
		_, err := w.patchMeta(ctx, current, updated.ObjectMeta, current.ObjectMeta)
		return err
	})
}
