// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// The states of a cluster's target Gateway as the status command shows them, read
// from the conditions the spoke agent writes on its ManagedClusterAddOn.
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

// PolicyView is what the status command shows of one TrafficMigrationPolicy: a
// summary, the conditions and one row per cluster. -o json and -o yaml print it as
// it is, so its field names are part of the command's output.
type PolicyView struct {
	Namespace         string      `json:"namespace"`
	Name              string      `json:"name"`
	CreationTimestamp metav1.Time `json:"creationTimestamp"`
	// Age is the time since creationTimestamp, as kubectl writes it.
	Age string `json:"age"`
	// Ready is the status of the Ready condition, "" when the manager set none yet.
	Ready       string `json:"ready"`
	ReadyReason string `json:"readyReason,omitempty"`
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
	Conditions []ConditionView `json:"conditions"`
	// Clusters has a row for every cluster in the status or in the proxy's
	// PlacementDecisions, sorted by name.
	Clusters []ClusterView `json:"clusters"`
	// DNS is what the manager publishes for spec.dns; nil without it.
	DNS *DNSView `json:"dns,omitempty"`
	// Warnings say what the view could not show or what does not add up.
	Warnings []string `json:"warnings,omitempty"`
}

// DNSView is the policy's DNS (spec.dns) and what the manager published of it.
type DNSView struct {
	Hostnames []string `json:"hostnames"`
	TTL       string   `json:"ttl"`
	// Endpoint is the DNSEndpoint the manager writes; PublishedClusters are the
	// clusters whose addresses it holds.
	Endpoint          string   `json:"endpoint"`
	PublishedClusters []string `json:"publishedClusters,omitempty"`
	// Reason and Message are the DNSPublished condition's.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Check is the removal check of a policy with the manager's defaults applied.
type Check struct {
	// Summary is the check in words: "traffic share <= 5%" or "<query> <= 0.05".
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
	NoDataPolicy       string `json:"noDataPolicy"`
}

// ConditionView is one condition of the policy.
type ConditionView struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}

// ClusterView is one cluster of the policy: its status row, its Gateway as the agent
// reports it, and whether the proxy's PlacementDecisions agree with the status.
type ClusterView struct {
	Name string `json:"name"`
	// Phase is the row's phase; empty when the status has no row for the cluster.
	Phase string `json:"phase,omitempty"`
	// Gateway is Ready, NotReady, NoAgent or Unknown; GatewayDetail says why.
	Gateway       string `json:"gateway"`
	GatewayDetail string `json:"gatewayDetail,omitempty"`
	// InProxyDecisions is whether the proxy's PlacementDecisions list the cluster.
	InProxyDecisions bool `json:"inProxyDecisions"`
	// Discrepancy says how the status and the proxy decisions disagree about the
	// cluster; empty when they agree or the decisions could not be read.
	Discrepancy          string       `json:"discrepancy,omitempty"`
	LastResult           string       `json:"lastResult,omitempty"`
	LastValue            string       `json:"lastValue,omitempty"`
	ConsecutiveSuccesses int32        `json:"consecutiveSuccesses"`
	RequiredSuccesses    int32        `json:"requiredSuccesses"`
	DrainStartTime       *metav1.Time `json:"drainStartTime,omitempty"`
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
	NextCheck     string       `json:"nextCheck,omitempty"`
	RemovalTime   *metav1.Time `json:"removalTime,omitempty"`
	ResolvedQuery string       `json:"resolvedQuery,omitempty"`
	Message       string       `json:"message,omitempty"`
	// LastCheckDetail is what the last check reported beyond its value.
	LastCheckDetail string `json:"lastCheckDetail,omitempty"`
	// History are the cluster's last checks while it drains, oldest first.
	History []trafficv1alpha1.CheckRecord `json:"history,omitempty"`
}

// Draining reports whether the cluster is still draining (Held included).
func (c ClusterView) Draining() bool {
	return c.Phase == string(trafficv1alpha1.ClusterDraining) || c.Phase == string(trafficv1alpha1.ClusterHeld)
}

// PolicyViewList is the -o json and -o yaml output without a policy name.
type PolicyViewList struct {
	Items []PolicyView `json:"items"`
}

// policyObjects are the objects one PolicyView is built from.
type policyObjects struct {
	policy *trafficv1alpha1.TrafficMigrationPolicy
	// detail is set when decisions and add-ons were read; without it the view has no
	// cross-check and no Gateway states.
	detail bool
	// decisions are the proxy Placement's PlacementDecisions; decisionsErr says why
	// they could not be read.
	decisions    []*clusterv1beta1.PlacementDecision
	decisionsErr error
	// addons are the traffic-migration ManagedClusterAddOns by cluster; a cluster
	// without one has none installed. addonErrs holds clusters whose add-on could not
	// be read.
	addons    map[string]*addonv1alpha1.ManagedClusterAddOn
	addonErrs map[string]error
}

// buildView makes the view of one policy from its objects at time now. It reads the
// objects and changes none of them.
func buildView(in policyObjects, now time.Time) PolicyView {
	p := in.policy
	v := PolicyView{
		Namespace:          p.Namespace,
		Name:               p.Name,
		CreationTimestamp:  p.CreationTimestamp,
		Age:                since(p.CreationTimestamp.Time, now),
		Placement:          p.Spec.PlacementRef.Name,
		ProxyPlacement:     p.ProxyPlacementName(),
		Gateway:            p.TargetNamespace() + "/" + p.Spec.TargetRef.Name,
		Check:              buildCheck(&p.Spec),
		Suspended:          p.Spec.Suspend,
		ActiveClusters:     p.Status.ActiveClusters,
		DrainingClusters:   p.Status.DrainingClusters,
		Generation:         p.Generation,
		ObservedGeneration: p.Status.ObservedGeneration,
		Conditions:         []ConditionView{},
		Clusters:           []ClusterView{},
	}
	if pp := p.Status.ProxyPlacement; pp != nil {
		if pp.Name != "" {
			v.ProxyPlacement = pp.Name
		}
		v.ProxyClusters = pp.NumberOfClusters
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionReady); c != nil {
		v.Ready, v.ReadyReason = string(c.Status), c.Reason
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionPrometheusReachable); c != nil {
		v.Prometheus = c.Reason
	}
	for _, c := range p.Status.Conditions {
		v.Conditions = append(v.Conditions, ConditionView{
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
	v.DNS = buildDNS(p)
	if in.detail {
		v.Warnings = append(v.Warnings, readWarnings(in)...)
	}
	return v
}

// buildDNS describes the policy's spec.dns and what the manager published; nil
// without spec.dns.
func buildDNS(p *trafficv1alpha1.TrafficMigrationPolicy) *DNSView {
	if p.Spec.DNS == nil {
		return nil
	}
	v := &DNSView{Endpoint: p.Name, TTL: shortDuration(decision.PolicyFromSpec(&p.Spec).DNSTTL)}
	for _, h := range p.Spec.DNS.Hostnames {
		v.Hostnames = append(v.Hostnames, string(h))
	}
	if p.Status.DNS != nil {
		v.PublishedClusters = p.Status.DNS.PublishedClusters
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); c != nil {
		v.Reason, v.Message = c.Reason, c.Message
	}
	return v
}

// buildCheck describes the policy's removal check with the manager's defaults applied.
func buildCheck(spec *trafficv1alpha1.TrafficMigrationPolicySpec) Check {
	rules := decision.PolicyFromSpec(spec)
	c := Check{
		MetricsQuery:         spec.MetricsQuery,
		TrafficShare:         spec.TrafficShare,
		Interval:             shortDuration(rules.Interval),
		ConsecutiveSuccesses: rules.ConsecutiveSuccesses,
		MinDrainDuration:     shortDuration(rules.MinDrainDuration),
		OnMaxDrainDuration:   string(rules.OnMaxDrainDuration),
		NoDataPolicy:         string(rules.NoDataPolicy),
	}
	if rules.MaxDrainDuration != nil {
		c.MaxDrainDuration = shortDuration(*rules.MaxDrainDuration)
	}
	expectation, err := spec.Expectation()
	if err == nil {
		c.Expectation = expectation.String()
	}
	switch {
	case spec.TrafficShare != nil:
		c.Summary = trafficShareSummary(spec.TrafficShare)
	case err != nil:
		c.Summary = fmt.Sprintf("%s (invalid expectedMetricsResult: %v)", oneLine(spec.MetricsQuery), err)
	default:
		c.Summary = oneLine(spec.MetricsQuery) + " " + c.Expectation
	}
	return c
}

// trafficShareSummary describes a trafficShare check in words, with the defaults the
// CRD declares for its unset fields.
func trafficShareSummary(ts *trafficv1alpha1.TrafficShare) string {
	label, window := ts.ClusterLabel, ts.Window
	if label == "" {
		label = "cluster"
	}
	if window == "" {
		window = "5m"
	}
	return fmt.Sprintf("traffic share <= %s%% (%s by label %s over %s)",
		strconv.FormatFloat(ts.MaxPercent, 'g', -1, 64), ts.Metric, label, window)
}

// buildClusters makes one row per cluster in the status or in the proxy's decisions,
// and marks those the two disagree about.
func buildClusters(in policyObjects, check Check, now time.Time) []ClusterView {
	p := in.policy
	inDecisions := map[string]bool{}
	for _, d := range in.decisions {
		for _, cd := range d.Status.Decisions {
			inDecisions[cd.ClusterName] = true
		}
	}
	decisionsKnown := in.detail && in.decisionsErr == nil
	gatewayCondition := trafficv1alpha1.GatewayConditionType(p.TargetNamespace(), p.Spec.TargetRef.Name)

	rows := map[string]ClusterView{}
	for _, s := range p.Status.Clusters {
		row := ClusterView{
			Name:                 s.Name,
			Phase:                string(s.Phase),
			LastResult:           string(s.LastResult),
			LastValue:            s.LastValue,
			ConsecutiveSuccesses: s.ConsecutiveSuccesses,
			RequiredSuccesses:    check.ConsecutiveSuccesses,
			DrainStartTime:       s.DrainStartTime,
			DNSWithdrawalTime:    s.DNSWithdrawalTime,
			LastEvaluationTime:   s.LastEvaluationTime,
			NextEvaluationTime:   s.NextEvaluationTime,
			RemovalTime:          s.RemovalTime,
			ResolvedQuery:        s.ResolvedQuery,
			Message:              s.Message,
			LastCheckDetail:      s.LastCheckDetail,
			History:              s.History,
		}
		if row.Draining() {
			if s.DrainStartTime != nil {
				row.DrainingFor = since(s.DrainStartTime.Time, now)
			}
			if p.Spec.DNS != nil {
				row.OutOfDNS = "in DNS"
				if s.DNSWithdrawalTime != nil {
					row.OutOfDNS = since(s.DNSWithdrawalTime.Time, now)
				}
			}
			if s.NextEvaluationTime != nil {
				row.NextCheck = nextCheck(s.NextEvaluationTime.Time, now)
			}
		}
		rows[s.Name] = row
	}
	for name := range inDecisions {
		if _, ok := rows[name]; !ok {
			rows[name] = ClusterView{Name: name, RequiredSuccesses: check.ConsecutiveSuccesses}
		}
	}

	out := make([]ClusterView, 0, len(rows))
	for name, row := range rows {
		row.InProxyDecisions = inDecisions[name]
		if decisionsKnown {
			row.Discrepancy = discrepancy(row)
		}
		row.Gateway, row.GatewayDetail = GatewayUnknown, ""
		if in.detail {
			row.Gateway, row.GatewayDetail = gatewayState(in.addons[name], in.addonErrs[name], gatewayCondition)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b ClusterView) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// discrepancy says how the status row of a cluster and the proxy decisions disagree.
func discrepancy(row ClusterView) string {
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
func readWarnings(in policyObjects) []string {
	var ws []string
	if in.decisionsErr != nil {
		ws = append(ws, fmt.Sprintf("cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: %v", in.decisionsErr))
	}
	if len(in.addonErrs) > 0 {
		clusters := make([]string, 0, len(in.addonErrs))
		for c := range in.addonErrs {
			clusters = append(clusters, c)
		}
		slices.Sort(clusters)
		ws = append(ws, fmt.Sprintf("cannot read the %s add-on of %s: %v",
			trafficv1alpha1.AddonName, strings.Join(clusters, ", "), in.addonErrs[clusters[0]]))
	}
	return ws
}

// since is the time from t to now as kubectl writes ages; "<unknown>" for a zero t.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// nextCheck says when a check is due: "in 12s", or "due" once its time has come.
func nextCheck(at, now time.Time) string {
	if !at.After(now) {
		return "due"
	}
	return "in " + duration.HumanDuration(at.Sub(now))
}

// shortDuration writes d as the policy's fields are usually written: "2m", not "2m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// oneLine collapses a multi-line query into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
