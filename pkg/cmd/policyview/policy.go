// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package policyview is the one view, for people, of TrafficMigrationPolicies: plain
// structs built from a policy and what a command reads beside it (its proxy
// PlacementDecisions, its clusters' ManagedClusterAddOns), with every string a
// person reads already formatted by the rules of format.go. "traffic-migration
// status" renders them as text, JSON or YAML; "traffic-migration dashboard" serves
// them to the browser, which only draws them. The builders read objects and change
// none.
package policyview

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// The states of a cluster's target Gateway, read from the conditions the spoke
// agent writes on its ManagedClusterAddOn.
const (
	// GatewayReady: the agent is available and reports the target Gateway Programmed.
	GatewayReady = "Ready"
	// GatewayNotReady: the agent is available but the Gateway is missing, not
	// Programmed, or the cluster has no Gateway API.
	GatewayNotReady = "NotReady"
	// GatewayNoAgent: the add-on is not installed on the cluster or its agent is not
	// available; the manager counts the Gateway as not ready.
	GatewayNoAgent = "NoAgent"
	// GatewayUnknown: the add-on could not be read, or was not read.
	GatewayUnknown = "Unknown"
)

// StalledHint says in a line what a stalled drain is and what to do about it, for the
// views that mark a stalled cluster without showing its whole message.
const StalledHint = "DNS let go of it but its traffic has not fallen by half: clients on long-lived connections " +
	"(HTTP/2, gRPC, pooled keep-alive) or resolvers that ignore the TTL keep sending to it; bound the Gateway's " +
	"connection lifetime (docs/troubleshooting.md#stalled-drains)"

// Phases are the phases of clusters in the order the views list them.
var Phases = []string{
	string(trafficv1alpha1.ClusterActive), string(trafficv1alpha1.ClusterDraining),
	string(trafficv1alpha1.ClusterHeld), string(trafficv1alpha1.ClusterRemoved),
}

// Policy is one TrafficMigrationPolicy: a summary, its check, its conditions and one
// row per cluster. status -o json and -o yaml print it as it is, and the dashboard
// sends it to the browser, so its field names are part of both commands' output.
type Policy struct {
	// TypeMeta is the view's apiVersion and kind in status's structured outputs
	// (cli.traffic.open-cluster-management.io/v1alpha1, PolicyView); empty elsewhere.
	metav1.TypeMeta   `json:",inline"`
	Namespace         string      `json:"namespace"`
	Name              string      `json:"name"`
	CreationTimestamp metav1.Time `json:"creationTimestamp"`
	// Age is the time since creationTimestamp, as kubectl writes it.
	Age string `json:"age"`
	// Ready is the status of the Ready condition, "" when the manager set none yet;
	// ReadyReason and ReadyMessage are its reason and message.
	Ready        string `json:"ready"`
	ReadyReason  string `json:"readyReason,omitempty"`
	ReadyMessage string `json:"readyMessage,omitempty"`
	// Prometheus is the reason of the PrometheusReachable condition.
	Prometheus string `json:"prometheus,omitempty"`
	// Placement is the real Placement the proxy mirrors.
	Placement string `json:"placement"`
	// ProxyPlacement is the proxy Placement workloads point at.
	ProxyPlacement string `json:"proxyPlacement"`
	// ProxyClusters is how many clusters the manager last wrote to the proxy.
	ProxyClusters int32 `json:"proxyClusters"`
	// Gateway is the target Gateway on the spokes, as namespace/name.
	Gateway            string `json:"gateway"`
	Check              Check  `json:"check"`
	Suspended          bool   `json:"suspended"`
	ActiveClusters     int32  `json:"activeClusters"`
	DrainingClusters   int32  `json:"drainingClusters"`
	Generation         int64  `json:"generation"`
	ObservedGeneration int64  `json:"observedGeneration"`
	// Conditions are the policy's status conditions, in the manager's order.
	Conditions []Condition `json:"conditions"`
	// Clusters has a row for every cluster in the status or in the proxy's
	// PlacementDecisions, sorted by name.
	Clusters []Cluster `json:"clusters"`
	// Phases names the clusters of the status by phase, in the order of Phases;
	// phases without clusters are left out.
	Phases []PhaseClusters `json:"phases,omitempty"`
	// StalledClusters are the clusters whose drain is stalled, sorted by name.
	StalledClusters []string `json:"stalledClusters,omitempty"`
	// DNS is what the manager publishes for spec.dns; nil without it.
	DNS *DNS `json:"dns,omitempty"`
	// Warnings say what the view could not show or what does not add up.
	Warnings []string `json:"warnings,omitempty"`
}

// PhaseClusters are the clusters of one phase, sorted by name.
type PhaseClusters struct {
	Phase    string   `json:"phase"`
	Clusters []string `json:"clusters"`
}

// DNS is the policy's DNS (spec.dns) and what the manager published of it.
type DNS struct {
	Hostnames []string `json:"hostnames"`
	TTL       string   `json:"ttl"`
	// Endpoint is the DNSEndpoint the manager writes; PublishedClusters are the
	// clusters whose addresses it holds.
	Endpoint          string   `json:"endpoint"`
	PublishedClusters []string `json:"publishedClusters,omitempty"`
	// Reason and Message are the DNSPublished condition's.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Summary is all of it in one line: "gw.example.com (TTL 1m), DNSEndpoint gw
	// publishing c2: Published".
	Summary string `json:"summary"`
}

// Check is the removal check of a policy with the manager's defaults applied.
type Check struct {
	// Summary is the check in words: "traffic share <= 5% (...)" or "<query> <= 0.05".
	Summary string `json:"summary"`
	// Expectation is what a value must meet, e.g. "<= 5"; empty when it cannot be parsed.
	Expectation          string                        `json:"expectation,omitempty"`
	MetricsQuery         string                        `json:"metricsQuery,omitempty"`
	TrafficShare         *trafficv1alpha1.TrafficShare `json:"trafficShare,omitempty"`
	Interval             string                        `json:"interval"`
	ConsecutiveSuccesses int32                         `json:"consecutiveSuccesses"`
	MinDrainDuration     string                        `json:"minDrainDuration"`
	// MaxDrainDuration is empty when the drain has no deadline.
	MaxDrainDuration   string `json:"maxDrainDuration,omitempty"`
	OnMaxDrainDuration string `json:"onMaxDrainDuration"`
	// Deadline is the maximum drain and what follows it, "24h, then Hold", or "none".
	Deadline     string `json:"deadline"`
	NoDataPolicy string `json:"noDataPolicy"`
	// MinReadyClusters is spec.replacement's, 0 without it; Replacement says it in
	// words: "2 Active clusters with the Gateway ready", or "another cluster with the
	// Gateway ready" without spec.replacement.
	MinReadyClusters int32  `json:"minReadyClusters,omitempty"`
	Replacement      string `json:"replacement"`
	// ReplacementQuery and ReplacementExpectation are spec.replacement's check, which
	// an Active cluster must pass to count; empty without it.
	ReplacementQuery       string `json:"replacementQuery,omitempty"`
	ReplacementExpectation string `json:"replacementExpectation,omitempty"`
}

// Condition is one condition of the policy.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}

// Cluster is one cluster of the policy: its status row, its Gateway as the agent
// reports it, and whether the proxy's PlacementDecisions agree with the status.
type Cluster struct {
	Name string `json:"name"`
	// Phase is the row's phase; empty when the status has no row for the cluster.
	Phase string `json:"phase,omitempty"`
	// Stalled is the row's stalled: DNS let go of the draining cluster but its
	// traffic has not fallen by half (StalledHint). It removes nothing.
	Stalled bool `json:"stalled,omitempty"`
	// State is the phase as the views show it: "Draining, stalled" (or "Held,
	// stalled") for a stalled drain, else the phase.
	State string `json:"state,omitempty"`
	// Gateway is Ready, NotReady, NoAgent or Unknown; GatewayDetail says why.
	Gateway       string `json:"gateway"`
	GatewayDetail string `json:"gatewayDetail,omitempty"`
	// InProxyDecisions is whether the proxy's PlacementDecisions list the cluster.
	InProxyDecisions bool `json:"inProxyDecisions"`
	// Discrepancy says how the status and the proxy decisions disagree about the
	// cluster; empty when they agree or the decisions could not be read.
	Discrepancy string `json:"discrepancy,omitempty"`
	LastResult  string `json:"lastResult,omitempty"`
	LastValue   string `json:"lastValue,omitempty"`
	// Value is the last check's value next to what it must meet, "2.1 / <= 5"; empty
	// for a cluster that does not drain and has no value.
	Value                string `json:"value,omitempty"`
	ConsecutiveSuccesses int32  `json:"consecutiveSuccesses"`
	RequiredSuccesses    int32  `json:"requiredSuccesses"`
	// Successes is a draining cluster's run of passed checks, "2/3" or "3/3 met".
	Successes      string       `json:"successes,omitempty"`
	DrainStartTime *metav1.Time `json:"drainStartTime,omitempty"`
	// DrainingFor is the time since drainStartTime of a draining or held cluster.
	DrainingFor string `json:"drainingFor,omitempty"`
	// DNSWithdrawalTime is, with spec.dns, when DNS let go of the cluster: its drain
	// clock. OutOfDNS is the time since then, or "in DNS" while a draining cluster is
	// still published.
	DNSWithdrawalTime  *metav1.Time `json:"dnsWithdrawalTime,omitempty"`
	OutOfDNS           string       `json:"outOfDNS,omitempty"`
	LastEvaluationTime *metav1.Time `json:"lastEvaluationTime,omitempty"`
	NextEvaluationTime *metav1.Time `json:"nextEvaluationTime,omitempty"`
	// NextCheck is "in 12s", or "due" once nextEvaluationTime has passed.
	NextCheck string `json:"nextCheck,omitempty"`
	// EstimatedRemovalTime is when the manager expects a draining cluster's checks to
	// let it go; Expected is that as "in 4m" ("due" once past), or "unknown" for a
	// draining cluster without an estimate (a stalled drain has none).
	EstimatedRemovalTime *metav1.Time `json:"estimatedRemovalTime,omitempty"`
	Expected             string       `json:"expected,omitempty"`
	RemovalTime          *metav1.Time `json:"removalTime,omitempty"`
	ResolvedQuery        string       `json:"resolvedQuery,omitempty"`
	Message              string       `json:"message,omitempty"`
	// LastCheckDetail is what the last check reported beyond its value.
	LastCheckDetail string `json:"lastCheckDetail,omitempty"`
	// History are the cluster's last checks while it drains, oldest first.
	History []trafficv1alpha1.CheckRecord `json:"history,omitempty"`
}

// Draining reports whether the cluster is still draining (Held included).
func (c Cluster) Draining() bool {
	return c.Phase == string(trafficv1alpha1.ClusterDraining) || c.Phase == string(trafficv1alpha1.ClusterHeld)
}

// List is a list of policies: status -o json and -o yaml without a policy name, and
// the dashboard's fleet page.
type List struct {
	// TypeMeta is the list's apiVersion and kind in status's structured outputs
	// (cli.traffic.open-cluster-management.io/v1alpha1, PolicyViewList).
	metav1.TypeMeta `json:",inline"`
	// Namespace is the namespace listed; empty for all namespaces.
	Namespace string   `json:"namespace"`
	Items     []Policy `json:"items"`
	// Totals counts the clusters of every policy by phase, in the order of Phases.
	Totals []PhaseCount `json:"totals"`
}

// PhaseCount is how many clusters are in a phase.
type PhaseCount struct {
	Phase    string `json:"phase"`
	Clusters int    `json:"clusters"`
}

// NewList lists the views of a namespace's policies ("" for all namespaces), sorted
// by namespace and name.
func NewList(namespace string, items []Policy) List {
	l := List{Namespace: namespace, Items: slices.Clone(items), Totals: []PhaseCount{}}
	if l.Items == nil {
		l.Items = []Policy{}
	}
	slices.SortFunc(l.Items, func(a, b Policy) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	counts := map[string]int{}
	for _, p := range l.Items {
		for _, g := range p.Phases {
			counts[g.Phase] += len(g.Clusters)
		}
	}
	for _, phase := range Phases {
		l.Totals = append(l.Totals, PhaseCount{Phase: phase, Clusters: counts[phase]})
	}
	return l
}

// Objects are the objects one Policy is built from.
type Objects struct {
	Policy *trafficv1alpha1.TrafficMigrationPolicy
	// Detail is set when decisions and add-ons were read; without it the view has no
	// cross-check and no Gateway states.
	Detail bool
	// Decisions are the proxy Placement's PlacementDecisions; DecisionsErr says why
	// they could not be read.
	Decisions    []*clusterv1beta1.PlacementDecision
	DecisionsErr error
	// Addons are the traffic-migration ManagedClusterAddOns by cluster; a cluster
	// without one has none installed. AddonErrs holds clusters whose add-on could not
	// be read.
	Addons    map[string]*addonv1alpha1.ManagedClusterAddOn
	AddonErrs map[string]error
}

// Build makes the view of one policy from its objects at time now.
func Build(in Objects, now time.Time) Policy {
	p := in.Policy
	v := Policy{
		Namespace:          p.Namespace,
		Name:               p.Name,
		CreationTimestamp:  p.CreationTimestamp,
		Age:                Since(p.CreationTimestamp.Time, now),
		Placement:          p.Spec.PlacementRef.Name,
		ProxyPlacement:     p.ProxyPlacementName(),
		Gateway:            p.TargetNamespace() + "/" + p.Spec.TargetRef.Name,
		Check:              buildCheck(&p.Spec),
		Suspended:          p.Spec.Suspend,
		ActiveClusters:     p.Status.ActiveClusters,
		DrainingClusters:   p.Status.DrainingClusters,
		Generation:         p.Generation,
		ObservedGeneration: p.Status.ObservedGeneration,
		Conditions:         []Condition{},
	}
	if pp := p.Status.ProxyPlacement; pp != nil {
		if pp.Name != "" {
			v.ProxyPlacement = pp.Name
		}
		v.ProxyClusters = pp.NumberOfClusters
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionReady); c != nil {
		v.Ready, v.ReadyReason, v.ReadyMessage = string(c.Status), c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionPrometheusReachable); c != nil {
		v.Prometheus = c.Reason
	}
	for _, c := range p.Status.Conditions {
		v.Conditions = append(v.Conditions, Condition{
			Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransitionTime: c.LastTransitionTime,
		})
	}
	if p.Status.ObservedGeneration < p.Generation {
		v.Warnings = append(v.Warnings, fmt.Sprintf(
			"the status describes generation %d of the policy, not the current %d: the manager has not caught up (is it running?)",
			p.Status.ObservedGeneration, p.Generation))
	}
	v.Clusters = buildClusters(in, v.Check, now)
	for _, phase := range Phases {
		group := PhaseClusters{Phase: phase}
		for _, c := range v.Clusters {
			if c.Phase == phase {
				group.Clusters = append(group.Clusters, c.Name)
			}
		}
		if len(group.Clusters) > 0 {
			v.Phases = append(v.Phases, group)
		}
	}
	for _, c := range v.Clusters {
		if c.Stalled {
			v.StalledClusters = append(v.StalledClusters, c.Name)
		}
	}
	v.DNS = buildDNS(p)
	if in.Detail {
		v.Warnings = append(v.Warnings, readWarnings(in)...)
	}
	return v
}

// buildDNS describes the policy's spec.dns and what the manager published; nil
// without spec.dns.
func buildDNS(p *trafficv1alpha1.TrafficMigrationPolicy) *DNS {
	if p.Spec.DNS == nil {
		return nil
	}
	v := &DNS{Endpoint: p.Name, TTL: Duration(decision.PolicyFromSpec(&p.Spec).DNSTTL)}
	for _, h := range p.Spec.DNS.Hostnames {
		v.Hostnames = append(v.Hostnames, string(h))
	}
	if p.Status.DNS != nil {
		v.PublishedClusters = p.Status.DNS.PublishedClusters
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); c != nil {
		v.Reason, v.Message = c.Reason, c.Message
	}
	v.Summary = fmt.Sprintf("%s (TTL %s), DNSEndpoint %s publishing %s: %s", strings.Join(v.Hostnames, ", "), v.TTL,
		v.Endpoint, OrNone(strings.Join(v.PublishedClusters, ", ")), OrNone(v.Reason))
	return v
}

// buildCheck describes the policy's removal check with the manager's defaults applied.
func buildCheck(spec *trafficv1alpha1.TrafficMigrationPolicySpec) Check {
	rules := decision.PolicyFromSpec(spec)
	c := Check{
		MetricsQuery:         spec.MetricsQuery,
		TrafficShare:         spec.TrafficShare,
		Interval:             Duration(rules.Interval),
		ConsecutiveSuccesses: rules.ConsecutiveSuccesses,
		MinDrainDuration:     Duration(rules.MinDrainDuration),
		OnMaxDrainDuration:   string(rules.OnMaxDrainDuration),
		Deadline:             "none",
		NoDataPolicy:         string(rules.NoDataPolicy),
		MinReadyClusters:     rules.MinReadyClusters,
		Replacement:          "another cluster with the Gateway ready",
	}
	if n := rules.MinReadyClusters; n > 0 {
		c.Replacement = fmt.Sprintf("%d Active cluster%s with the Gateway ready", n, map[bool]string{true: "", false: "s"}[n == 1])
	}
	if rc := spec.Replacement.Check(); rc != nil {
		c.ReplacementQuery = rc.MetricsQuery
		if e, err := rc.Expectation(); err == nil {
			c.ReplacementExpectation = e.String()
		}
		c.Replacement += fmt.Sprintf(" and passing %s %s", OneLine(rc.MetricsQuery), c.ReplacementExpectation)
	}
	if rules.MaxDrainDuration != nil {
		c.MaxDrainDuration = Duration(*rules.MaxDrainDuration)
		c.Deadline = c.MaxDrainDuration + ", then " + c.OnMaxDrainDuration
	}
	expectation, err := spec.Expectation()
	if err == nil {
		c.Expectation = expectation.String()
	}
	switch {
	case spec.TrafficShare != nil:
		c.Summary = trafficShareSummary(spec.TrafficShare)
	case err != nil:
		c.Summary = fmt.Sprintf("%s (invalid expectedMetricsResult: %v)", OneLine(spec.MetricsQuery), err)
	default:
		c.Summary = OneLine(spec.MetricsQuery) + " " + c.Expectation
	}
	return c
}

// trafficShareSummary describes a trafficShare check in words, with the defaults the
// CRD declares for its unset fields.
func trafficShareSummary(spec *trafficv1alpha1.TrafficShare) string {
	ts := spec.WithDefaults()
	volume := ""
	if ts.MinRequestsPerSecond > 0 {
		volume = fmt.Sprintf(", at least %s requests/s in all", strconv.FormatFloat(ts.MinRequestsPerSecond, 'g', -1, 64))
	}
	return fmt.Sprintf("traffic share <= %s%% (%s by label %s over %s%s)",
		strconv.FormatFloat(ts.MaxPercent, 'g', -1, 64), ts.Metric, ts.ClusterLabel, ts.Window, volume)
}

// buildClusters makes one row per cluster in the status or in the proxy's decisions,
// and marks those the two disagree about.
func buildClusters(in Objects, check Check, now time.Time) []Cluster {
	p := in.Policy
	inDecisions := map[string]bool{}
	for _, d := range in.Decisions {
		for _, cd := range d.Status.Decisions {
			inDecisions[cd.ClusterName] = true
		}
	}
	decisionsKnown := in.Detail && in.DecisionsErr == nil
	gatewayCondition := trafficv1alpha1.GatewayConditionType(p.TargetNamespace(), p.Spec.TargetRef.Name)

	rows := map[string]Cluster{}
	for _, s := range p.Status.Clusters {
		row := Cluster{
			Name:                 s.Name,
			Phase:                string(s.Phase),
			State:                string(s.Phase),
			LastResult:           string(s.LastResult),
			LastValue:            s.LastValue,
			ConsecutiveSuccesses: s.ConsecutiveSuccesses,
			RequiredSuccesses:    check.ConsecutiveSuccesses,
			DrainStartTime:       s.DrainStartTime,
			DNSWithdrawalTime:    s.DNSWithdrawalTime,
			LastEvaluationTime:   s.LastEvaluationTime,
			NextEvaluationTime:   s.NextEvaluationTime,
			EstimatedRemovalTime: s.EstimatedRemovalTime,
			RemovalTime:          s.RemovalTime,
			ResolvedQuery:        s.ResolvedQuery,
			Message:              s.Message,
			LastCheckDetail:      s.LastCheckDetail,
			History:              s.History,
		}
		if s.NextEvaluationTime != nil {
			// A draining cluster's next check, or an Active one's next replacement check.
			row.NextCheck = Until(s.NextEvaluationTime.Time, now)
		}
		if row.Draining() {
			if s.Stalled {
				row.Stalled, row.State = true, row.Phase+", stalled"
			}
			if s.DrainStartTime != nil {
				row.DrainingFor = Since(s.DrainStartTime.Time, now)
			}
			if p.Spec.DNS != nil {
				row.OutOfDNS = "in DNS"
				if s.DNSWithdrawalTime != nil {
					row.OutOfDNS = Since(s.DNSWithdrawalTime.Time, now)
				}
			}
			row.Expected = "unknown"
			if s.EstimatedRemovalTime != nil {
				row.Expected = Until(s.EstimatedRemovalTime.Time, now)
			}
		}
		expectation := check.Expectation
		if s.Phase == trafficv1alpha1.ClusterActive {
			expectation = check.ReplacementExpectation
		}
		row.Value, row.Successes = valueText(row, expectation), successesText(row)
		rows[s.Name] = row
	}
	for name := range inDecisions {
		if _, ok := rows[name]; !ok {
			rows[name] = Cluster{Name: name, RequiredSuccesses: check.ConsecutiveSuccesses}
		}
	}

	out := make([]Cluster, 0, len(rows))
	for name, row := range rows {
		row.InProxyDecisions = inDecisions[name]
		if decisionsKnown {
			row.Discrepancy = discrepancy(row)
		}
		row.Gateway, row.GatewayDetail = GatewayUnknown, ""
		if in.Detail {
			row.Gateway, row.GatewayDetail = gatewayState(in.Addons[name], in.AddonErrs[name], gatewayCondition)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// valueText shows the last checked value next to what it must meet, "2.1 / <= 5";
// empty for a cluster that does not drain and has no value.
func valueText(c Cluster, expectation string) string {
	if !c.Draining() && c.LastValue == "" {
		return ""
	}
	value := OrNone(CheckValue(c.LastValue, trafficv1alpha1.EvaluationResult(c.LastResult)))
	if expectation == "" {
		return value
	}
	return value + " / " + expectation
}

// successesText is a draining cluster's run of passed checks, "2/3" or "3/3 met";
// empty for a cluster that does not drain.
func successesText(c Cluster) string {
	if !c.Draining() {
		return ""
	}
	return Successes(c.ConsecutiveSuccesses, c.RequiredSuccesses)
}

// discrepancy says how the status row of a cluster and the proxy decisions disagree.
func discrepancy(row Cluster) string {
	switch {
	case row.Phase == "" && row.InProxyDecisions:
		return "in the proxy decisions but not in the policy status"
	case row.Phase == string(trafficv1alpha1.ClusterRemoved) && row.InProxyDecisions:
		return "Removed in the policy status but still in the proxy decisions"
	case row.Phase != "" && row.Phase != string(trafficv1alpha1.ClusterRemoved) && !row.InProxyDecisions:
		return row.Phase + " in the policy status but not in the proxy decisions"
	}
	return ""
}

// gatewayState reads the target Gateway's state from a cluster's add-on, as the manager
// does: ready only when the agent is available and reports the Gateway Programmed.
func gatewayState(addon *addonv1alpha1.ManagedClusterAddOn, readErr error, conditionType string) (string, string) {
	if readErr != nil {
		return GatewayUnknown, fmt.Sprintf("the %s add-on cannot be read: %v", trafficv1alpha1.AddonName, readErr)
	}
	if addon == nil {
		return GatewayNoAgent, fmt.Sprintf("the %s add-on is not enabled on the cluster", trafficv1alpha1.AddonName)
	}
	conds := addon.Status.Conditions
	if trafficv1alpha1.GatewayReady(conds, conditionType) {
		return GatewayReady, meta.FindStatusCondition(conds, conditionType).Message
	}
	// Not ready: say why, from the most basic reason on.
	if !meta.IsStatusConditionTrue(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
		detail := "the agent is not available"
		if c := meta.FindStatusCondition(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable); c != nil {
			detail += conditionDetail(c)
		}
		return GatewayNoAgent, detail
	}
	if c := meta.FindStatusCondition(conds, trafficv1alpha1.ConditionGatewayAPI); c != nil && c.Status == metav1.ConditionFalse {
		return GatewayNotReady, "the cluster has no Gateway API" + conditionDetail(c)
	}
	if c := meta.FindStatusCondition(conds, conditionType); c != nil {
		return GatewayNotReady, "the Gateway is not programmed" + conditionDetail(c)
	}
	return GatewayNotReady, "the agent reports no such Gateway"
}

// conditionDetail formats a condition's reason and message for a detail text.
func conditionDetail(c *metav1.Condition) string {
	switch {
	case c.Reason != "" && c.Message != "":
		return fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
	case c.Reason != "":
		return " (" + c.Reason + ")"
	case c.Message != "":
		return " (" + c.Message + ")"
	}
	return ""
}

// readWarnings says which of the policy's related objects could not be read.
func readWarnings(in Objects) []string {
	var ws []string
	if in.DecisionsErr != nil {
		ws = append(ws, fmt.Sprintf("cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: %v", in.DecisionsErr))
	}
	if len(in.AddonErrs) > 0 {
		clusters := make([]string, 0, len(in.AddonErrs))
		for c := range in.AddonErrs {
			clusters = append(clusters, c)
		}
		slices.Sort(clusters)
		ws = append(ws, fmt.Sprintf("cannot read the %s add-on of %s: %v",
			trafficv1alpha1.AddonName, strings.Join(clusters, ", "), in.AddonErrs[clusters[0]]))
	}
	return ws
}
