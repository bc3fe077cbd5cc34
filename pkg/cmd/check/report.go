// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package check

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/gather"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// Report is what a check found, as -o json prints it.
type Report struct {
	// TypeMeta is the report's apiVersion and kind in the structured outputs
	// (cli.traffic.open-cluster-management.io/v1alpha1, CheckReport).
	metav1.TypeMeta `json:",inline"`
	// Policy and Namespace name the policy checked.
	Policy    string `json:"policy"`
	Namespace string `json:"namespace"`
	// Source is where the policy came from: "the hub" or the manifest's file name.
	Source string `json:"source"`
	// Prometheus is the URL queried and where it came from (the Secret or the flag).
	Prometheus string `json:"prometheus"`
	// Expectation is what a value must meet to pass, for example "<= 5".
	Expectation string `json:"expectation"`
	// Time is when the queries were evaluated.
	Time metav1.Time `json:"time"`
	// RealProblem says why the real Placement's decisions are not known, when they
	// are not: then the manager removes nothing (rule 7).
	RealProblem string `json:"realProblem,omitempty"`
	// WindowNote says, in the words of the manager's PrometheusReachable condition with
	// reason WindowTooShort, why trafficShare.window holds too few samples of its
	// series, as measured in Prometheus; empty when it holds enough, or when nothing
	// could be measured.
	WindowNote string `json:"windowNote,omitempty"`
	// Clusters are the clusters checked, sorted by name: those of the real Placement
	// and those draining.
	Clusters []ClusterReport `json:"clusters"`
}

// ClusterReport is the check of one cluster.
type ClusterReport struct {
	// Name is the cluster's name.
	Name string `json:"name"`
	// Phase is Active (in the real Placement), Draining or Held.
	Phase trafficv1alpha1.ClusterPhase `json:"phase"`
	// GatewayReady says whether the cluster's agent reports the target Gateway ready.
	GatewayReady bool `json:"gatewayReady"`
	// Query is the query with its template filled in for the cluster; empty when the
	// template does not resolve.
	Query string `json:"query,omitempty"`
	// Value is the value Prometheus returned, as it formatted it.
	Value string `json:"value,omitempty"`
	// Result is Pass, Fail, NoData or Error.
	Result trafficv1alpha1.EvaluationResult `json:"result"`
	// Reason is the reason of the PrometheusReachable condition the manager would set.
	Reason string `json:"reason"`
	// Message says what the check found and, unless it passed, what to look at.
	Message string `json:"message"`
	// Gate is what the removal gate would decide, for a draining cluster.
	Gate *GateReport `json:"gate,omitempty"`
	// Replacement is, with spec.replacement.metricsQuery, the cluster's replacement
	// check, for a cluster of the real Placement; nil otherwise.
	Replacement *ReplacementReport `json:"replacement,omitempty"`
}

// ReplacementReport is the replacement check (spec.replacement.metricsQuery) of a
// cluster of the real Placement, run now, and whether the cluster would count toward
// minReadyClusters.
type ReplacementReport struct {
	Query   string                           `json:"query,omitempty"`
	Value   string                           `json:"value,omitempty"`
	Result  trafficv1alpha1.EvaluationResult `json:"result"`
	Reason  string                           `json:"reason"`
	Message string                           `json:"message"`
	// Counts: the cluster counts toward minReadyClusters with this check, and why, in
	// the manager's words, while a cluster drains.
	Counts    bool   `json:"counts"`
	CountsWhy string `json:"countsWhy,omitempty"`
}

// GateReport is the removal gate of a draining cluster, decided by the manager's
// rules on the policy's status and this check.
type GateReport struct {
	// WouldRemove says whether the manager would remove the cluster now.
	WouldRemove bool `json:"wouldRemove"`
	// RemovalReason is why it would be removed: GatePassed, MaxDrainDurationRemove,
	// ManagedClusterGone or ForceRemoved.
	RemovalReason string `json:"removalReason,omitempty"`
	// WaitingFor is what the removal still waits for, as the status row would say it.
	WaitingFor string `json:"waitingFor,omitempty"`
	// CheckCounts says whether this check counts towards the run of passing checks:
	// the manager counts checks at least an interval apart, so a check made before
	// the cluster's next check is due shows the value but changes no count.
	CheckCounts bool `json:"checkCounts"`
	// ConsecutiveSuccesses is the run of passing checks, with this one if it counts;
	// unset for a cluster that would be removed.
	ConsecutiveSuccesses *int32 `json:"consecutiveSuccesses,omitempty"`
	// Needed is how many passing checks in a row the removal needs.
	Needed int32 `json:"needed"`
	// DrainStartTime is when the cluster started draining (now, when the manager has
	// not recorded its drain yet).
	DrainStartTime *metav1.Time `json:"drainStartTime,omitempty"`
	// NextCheck is when the manager checks the cluster next.
	NextCheck *metav1.Time `json:"nextCheck,omitempty"`
	// DNSWithdrawalTime is, with spec.dns, when DNS let go of the cluster: the start
	// of its minimum drain. Unset while it is still published.
	DNSWithdrawalTime *metav1.Time `json:"dnsWithdrawalTime,omitempty"`
}

// windowNote measures in Prometheus how far apart the samples of trafficShare's series
// are, as the manager does (promcheck.SampleSpacing), and says with the manager's
// words (promcheck.WindowTooShort) when the window holds too few of them; "" when it
// holds enough or nothing could be measured. A measure that fails says nothing: the
// checks say what is wrong with Prometheus.
func windowNote(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, q promcheck.Querier, at time.Time) string {
	ts := policy.Spec.TrafficShare
	if ts == nil {
		return ""
	}
	spacing, measured, err := promcheck.SampleSpacing(ctx, q, ts, at)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Could not measure the sample spacing of trafficShare's series", "err", err)
	}
	if err != nil || !measured {
		return ""
	}
	return promcheck.WindowTooShort(ts.WithDefaults().Window, spacing)
}

// dnsAsLastSeen is what the policy's DNS says, as its status last recorded it: the
// clusters its applied records no longer hold and, with spec.dns.verify mode
// Authoritative, that the manager saw the name servers let go of (their rows have a
// dnsWithdrawalTime; the others wait, with the manager's note on why). Nil without
// spec.dns, or when the hub serves no DNSEndpoints (then drains do not follow DNS, as
// in the manager).
func dnsAsLastSeen(policy *trafficv1alpha1.TrafficMigrationPolicy) *decision.DNS {
	if policy.Spec.DNS == nil {
		return nil
	}
	if c := meta.FindStatusCondition(policy.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); c != nil &&
		c.Reason == trafficv1alpha1.ReasonDNSEndpointCRDNotInstalled {
		return nil
	}
	withdrawn, waiting := sets.New[string](), map[string]string{}
	authoritative := policy.Spec.DNS.VerifyMode() == trafficv1alpha1.DNSVerifyAuthoritative
	if d := policy.Status.DNS; d != nil && d.Generation > 0 && d.ObservedGeneration >= d.Generation {
		published := sets.New(d.PublishedClusters...)
		for _, row := range policy.Status.Clusters {
			switch {
			case published.Has(row.Name):
			case authoritative && row.DNSWithdrawalTime == nil:
				// Only the manager asks the name servers: until it saw them let go of
				// the cluster, it waits, for what the manager's row last said.
				if note := decision.DNSWaitingNote(row.Message); note != "" {
					waiting[row.Name] = note
				}
			default:
				withdrawn.Insert(row.Name)
			}
		}
	}
	return &decision.DNS{Withdrawn: withdrawn, Waiting: waiting}
}

// failedClusters are the clusters whose query could not be run.
func (r *Report) failedClusters() []string {
	var names []string
	for _, c := range r.Clusters {
		if c.Result == trafficv1alpha1.EvaluationError {
			names = append(names, c.Name)
		}
	}
	return names
}

// run checks every cluster of the real Placement and every draining one at the time
// the hub was read, and asks the manager's decision function what it would do with
// what was read and these checks.
func run(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, hub *gather.Hub, q promcheck.Querier) *Report {
	at := hub.Input.Now.Truncate(time.Second)
	in := hub.Input
	in.Checks, in.DNS = map[string]decision.Check{}, dnsAsLastSeen(policy)
	report := &Report{Policy: policy.Name, Namespace: policy.Namespace, Time: metav1.NewTime(at), RealProblem: hub.RealProblem}
	if expect, err := policy.Spec.Expectation(); err == nil {
		report.Expectation = expect.String()
	}
	report.WindowNote = windowNote(ctx, policy, q, at)

	for _, name := range hub.Clusters() {
		data := promcheck.NewQueryData(policy, promcheck.ClusterInfo{Name: name, Labels: hub.Labels[name]})
		ev := promcheck.Run(ctx, q, &policy.Spec, data, at)
		in.Checks[name] = decision.Check{Result: ev.Result, Value: ev.Value, Query: ev.Query, Message: ev.Message, At: at}
		report.Clusters = append(report.Clusters, ClusterReport{
			Name: name, Phase: trafficv1alpha1.ClusterActive, GatewayReady: in.GatewayReady.Has(name),
			Query: ev.Query, Value: ev.Value, Result: ev.Result, Reason: ev.Reason, Message: ev.Message,
		})
	}

	due := map[string]bool{}
	for _, name := range decision.Due(in) {
		due[name] = true
	}
	if replacement := policy.Spec.Replacement.Check(); replacement != nil {
		// The replacement checks that are due, run now, as the manager would.
		in.ReplacementChecks = map[string]decision.Check{}
		for i := range report.Clusters {
			c := &report.Clusters[i]
			if !hub.InReal(c.Name) {
				continue
			}
			data := promcheck.NewQueryData(policy, promcheck.ClusterInfo{Name: c.Name, Labels: hub.Labels[c.Name]})
			ev := promcheck.Run(ctx, q, replacement, data, at)
			c.Replacement = &ReplacementReport{Query: ev.Query, Value: ev.Value, Result: ev.Result, Reason: ev.Reason, Message: ev.Message}
			in.ReplacementChecks[c.Name] = decision.Check{Result: ev.Result, Value: ev.Value, Query: ev.Query, Message: ev.Message, At: at}
		}
	}
	replacements := decision.Replacements(in)
	out := decision.Decide(in)
	rows := map[string]trafficv1alpha1.ClusterStatus{}
	for _, row := range out.Clusters {
		rows[row.Name] = row
	}
	removed := map[string]decision.RemovalReason{}
	for _, r := range out.Removed {
		removed[r.Cluster] = r.Reason
	}
	needed := in.Policy.ConsecutiveSuccesses
	if needed <= 0 {
		needed = decision.DefaultConsecutiveSuccesses
	}
	for i := range report.Clusters {
		c := &report.Clusters[i]
		row := rows[c.Name]
		if c.Replacement != nil {
			c.Replacement.Counts, c.Replacement.CountsWhy = replacements[c.Name].Counts, replacements[c.Name].Why
		}
		reason, isRemoved := removed[c.Name]
		draining := row.Phase == trafficv1alpha1.ClusterDraining || row.Phase == trafficv1alpha1.ClusterHeld
		if !isRemoved && !draining {
			continue // active: the decision keeps it for the real Placement
		}
		gr := &GateReport{CheckCounts: due[c.Name], Needed: needed}
		c.Phase = trafficv1alpha1.ClusterDraining
		if isRemoved {
			gr.WouldRemove, gr.RemovalReason = true, string(reason)
		} else {
			c.Phase = row.Phase
			successes := row.ConsecutiveSuccesses
			gr.WaitingFor, gr.ConsecutiveSuccesses = row.Message, &successes
			gr.DrainStartTime, gr.NextCheck = row.DrainStartTime, row.NextEvaluationTime
			gr.DNSWithdrawalTime = row.DNSWithdrawalTime
		}
		c.Gate = gr
	}
	return report
}
