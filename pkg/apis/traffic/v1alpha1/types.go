// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=tmpolicy;tmpolicies,categories=open-cluster-management
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeClusters`
// +kubebuilder:printcolumn:name="Draining",type=integer,JSONPath=`.status.drainingClusters`
// +kubebuilder:printcolumn:name="Proxy",type=string,JSONPath=`.status.proxyPlacement.name`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TrafficMigrationPolicy keeps a cluster that leaves a Placement in a proxy Placement
// until Prometheus shows that little traffic still reaches the policy's Gateway there.
//
// Workloads point at the proxy Placement instead of the real one. The proxy's
// PlacementDecisions mirror the real ones at once when clusters are added; a cluster
// that leaves the real decisions stays listed (it is draining) until its removal gate
// passes: the metrics check succeeded consecutiveSuccesses times in a row,
// minDrainDuration has passed, and another cluster in the proxy still has the Gateway
// ready.
type TrafficMigrationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which Placement to mirror, which Gateway to watch and how to decide
	// that a draining cluster no longer carries traffic.
	// +required
	Spec TrafficMigrationPolicySpec `json:"spec"`

	// status is written by the traffic-migration manager: its conditions, the proxy
	// Placement and one row per cluster that the proxy lists.
	// +optional
	Status TrafficMigrationPolicyStatus `json:"status,omitempty"`
}

// TrafficMigrationPolicySpec is the desired behaviour of a TrafficMigrationPolicy.
//
// +kubebuilder:validation:XValidation:rule="has(self.metricsQuery) != has(self.trafficShare)",message="exactly one of metricsQuery and trafficShare must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.metricsQuery) || has(self.expectedMetricsResult)",message="metricsQuery needs expectedMetricsResult, for example '<= 0.05'"
// +kubebuilder:validation:XValidation:rule="has(self.metricsQuery) || !has(self.trafficShare) || !has(self.expectedMetricsResult)",message="expectedMetricsResult goes with metricsQuery; with trafficShare set trafficShare.maxPercent instead"
// +kubebuilder:validation:XValidation:rule="!has(self.proxyPlacementName) || self.proxyPlacementName != self.placementRef.name",message="proxyPlacementName must differ from placementRef.name: the proxy cannot be the Placement it mirrors"
// +kubebuilder:validation:XValidation:rule="has(self.proxyPlacementName) || size(self.placementRef.name) <= 57",message="placementRef.name is longer than 57 characters, so the default proxy name '<placementRef.name>-proxy' would not fit in 63: set proxyPlacementName"
// +kubebuilder:validation:XValidation:rule="(has(self.proxyPlacementName) ? self.proxyPlacementName : self.placementRef.name + '-proxy') == (has(oldSelf.proxyPlacementName) ? oldSelf.proxyPlacementName : oldSelf.placementRef.name + '-proxy')",message="the proxy Placement's name cannot change, since workloads point at it: create a new policy instead"
// +kubebuilder:validation:XValidation:rule="!has(self.maxDrainDuration) || !has(self.minDrainDuration) || duration(self.maxDrainDuration) >= duration(self.minDrainDuration)",message="maxDrainDuration must not be shorter than minDrainDuration"
// +kubebuilder:validation:XValidation:rule="!has(self.onMaxDrainDuration) || self.onMaxDrainDuration != 'Remove' || has(self.maxDrainDuration)",message="onMaxDrainDuration: Remove needs maxDrainDuration"
type TrafficMigrationPolicySpec struct {
	// placementRef names the real Placement, in the policy's namespace, whose
	// decisions the proxy Placement mirrors. This is the Placement the admin edits.
	// +required
	PlacementRef PlacementReference `json:"placementRef"`

	// proxyPlacementName is the name of the proxy Placement that the manager creates
	// in the policy's namespace and that workloads point at. It defaults to
	// "<placementRef.name>-proxy" and cannot change once set, because consumers
	// point at it. The manager never takes over a Placement it did not create.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="proxyPlacementName must be a DNS label: lower case letters, digits and '-', starting and ending with a letter or digit"
	ProxyPlacementName string `json:"proxyPlacementName,omitempty"`

	// targetRef is the Gateway whose traffic is watched and whose readiness, as the
	// spoke agents report it, gates removal: the last cluster with a ready Gateway is
	// never removed.
	// +required
	TargetRef GatewayReference `json:"targetRef"`

	// prometheusSecret names a Secret in the policy's namespace that says how to reach
	// Prometheus: key "url" (required), and optionally "token" (bearer), "username"
	// and "password" (basic), "oauth2ClientID", "oauth2ClientSecret", "oauth2TokenURL"
	// and "oauth2Scopes" (OAuth2 client credentials), "tls.crt" and "tls.key" (a
	// client certificate), "ca.crt", "insecureSkipVerify", "X-Scope-OrgID" and
	// "header.<Name>" (custom headers). See docs/security.md.
	// +required
	PrometheusSecret SecretReference `json:"prometheusSecret"`

	// metricsQuery is a PromQL query, as a Go template, whose result for a draining
	// cluster is compared with expectedMetricsResult. The template's data are
	// .Cluster.Name, .Cluster.Labels (the labels the spoke agent reports),
	// .Gateway.Name, .Gateway.Namespace, .Policy.Name and .Policy.Namespace. Its
	// actions may use these fields, index (which fails on a missing key), quote
	// (which writes a value as a PromQL string), if/else and eq, ne, and, or, not:
	// nothing else. A value written without quote must be a plain token (letters,
	// digits and _.:-/@+); write label values as
	// cluster={{ index .Cluster.Labels "cluster" | quote }}. The filled-in query is at
	// most 16 KiB. It must return a scalar or a single series. Exactly one of
	// metricsQuery and trafficShare is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	// +kubebuilder:validation:XValidation:rule="!self.matches('[{][{]-?([^}]*[[:space:](|])?(range|with|template|define|block|break|continue|printf|print|println|call|slice|len|html|js|urlquery)([^A-Za-z0-9_]|$)')",message="metricsQuery: a template action may use only the documented fields, index, quote, if/else and eq, ne, and, or, not; range, with, template, define, block and functions such as printf are not allowed"
	MetricsQuery string `json:"metricsQuery,omitempty"`

	// expectedMetricsResult is what metricsQuery must return for a check to pass: a
	// comparison operator (<=, <, >=, >, ==, !=) and a number, for example "<= 0.05".
	// A bare number means "<=". The exponent has at most two digits, so every number
	// the API accepts is a finite float64 (with the length limit, below 1e164).
	// Required with metricsQuery, not allowed with trafficShare.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*(<=|>=|<|>|==|!=)?\\\\s*[-+]?([0-9]+(\\\\.[0-9]*)?|\\\\.[0-9]+)([eE][-+]?[0-9]{1,2})?\\\\s*$')",message="expectedMetricsResult must be a comparison operator (<=, <, >=, >, ==, !=) and a number, for example '<= 0.05', with an exponent of at most two digits such as 1e-3 or 2.5e12; a bare number means '<='"
	ExpectedMetricsResult string `json:"expectedMetricsResult,omitempty"`

	// trafficShare is the first-class form of the common check "at most maxPercent of
	// the Gateway's traffic still reaches the draining cluster". The manager builds
	// the query 100 * sum(rate(metric{clusterLabel="value",selector}[window])) /
	// sum(rate(metric{selector}[window])) and compares it with maxPercent. Exactly one
	// of metricsQuery and trafficShare is set.
	// +optional
	TrafficShare *TrafficShare `json:"trafficShare,omitempty"`

	// interval is how often each draining cluster is evaluated. Default 30s; at least 1s.
	// +optional
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="interval must be at least 1s"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// consecutiveSuccesses is how many evaluations in a row, interval apart, must pass
	// before a draining cluster is removed. Any failed, erroneous or (with
	// noDataPolicy Hold) empty evaluation starts the count over. Default 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ConsecutiveSuccesses int32 `json:"consecutiveSuccesses,omitempty"`

	// minDrainDuration is the least time a cluster stays draining, whatever the
	// metrics say; set it to cover the longest DNS TTL clients may cache. Default 2m.
	// +optional
	// +kubebuilder:default="2m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	MinDrainDuration *metav1.Duration `json:"minDrainDuration,omitempty"`

	// maxDrainDuration is an optional deadline for a drain. What happens past it is
	// onMaxDrainDuration. No deadline when unset.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	MaxDrainDuration *metav1.Duration `json:"maxDrainDuration,omitempty"`

	// onMaxDrainDuration is what happens to a cluster still draining at
	// maxDrainDuration: Hold keeps it in the proxy (phase Held, with a condition and an
	// event) until its gate passes; Remove removes it and records an event. Default Hold.
	// +optional
	// +kubebuilder:default=Hold
	OnMaxDrainDuration DeadlineAction `json:"onMaxDrainDuration,omitempty"`

	// noDataPolicy is how an empty query result or NaN counts: Hold counts it as a
	// failed check (the cluster stays and its run of successes starts over); Pass
	// counts it as a passed check. Default Hold.
	// +optional
	// +kubebuilder:default=Hold
	NoDataPolicy NoDataPolicy `json:"noDataPolicy,omitempty"`

	// suspend stops all removals while true. Additions still mirror the real Placement
	// at once and draining clusters are still evaluated. Default false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// replacement asks more of the clusters that take the traffic over before a
	// draining cluster may leave. Unset: a cluster leaves only while another cluster
	// left in the proxy has the Gateway ready.
	// +optional
	Replacement *Replacement `json:"replacement,omitempty"`

	// dns, when set, makes the manager publish the names clients resolve for the
	// Gateway: it keeps one external-dns DNSEndpoint (externaldns.k8s.io/v1alpha1),
	// named like the policy in its namespace, whose records hold the Gateway's
	// addresses on the clusters of the REAL Placement whose agent reports it
	// Programmed (make-before-break: a leaving cluster stays published until another
	// cluster of the real Placement is), for an external-dns on the hub to write to
	// its DNS provider. A draining cluster's drain then starts counting when its
	// addresses left DNS (dnsWithdrawalTime of its row). Unset: the manager publishes
	// nothing, and whatever publishes DNS must follow the real Placement, not the
	// proxy (see docs/dns.md).
	// +optional
	DNS *DNSPublishing `json:"dns,omitempty"`
}

// Replacement is what the clusters that stay must be before a draining cluster leaves.
//
// +kubebuilder:validation:XValidation:rule="has(self.metricsQuery) == has(self.expectedMetricsResult)",message="replacement.metricsQuery and replacement.expectedMetricsResult go together: set both, for example expectedMetricsResult '> 1' for a query of the cluster's request rate"
type Replacement struct {
	// minReadyClusters is how many Active clusters (those of the real Placement) must
	// have the Gateway Programmed, as their agents report it, and pass metricsQuery
	// when it is set, for any draining cluster to leave the proxy; the deadline does
	// not override it. Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MinReadyClusters int32 `json:"minReadyClusters,omitempty"`

	// metricsQuery, when set, is a check that an Active cluster must pass to count
	// toward minReadyClusters: that it serves, for example "more than 1 request/s" or
	// "a 5xx ratio under 1%". It is a PromQL query, as a Go template with the same
	// data and rules as spec.metricsQuery, .Cluster being the Active cluster. While a
	// cluster drains, each Active cluster is checked every interval; one counts only
	// while its last check passed and is at most two intervals old. An empty result,
	// NaN or an error never counts, whatever noDataPolicy says.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	// +kubebuilder:validation:XValidation:rule="!self.matches('[{][{]-?([^}]*[[:space:](|])?(range|with|template|define|block|break|continue|printf|print|println|call|slice|len|html|js|urlquery)([^A-Za-z0-9_]|$)')",message="replacement.metricsQuery: a template action may use only the documented fields, index, quote, if/else and eq, ne, and, or, not; range, with, template, define, block and functions such as printf are not allowed"
	MetricsQuery string `json:"metricsQuery,omitempty"`

	// expectedMetricsResult is what replacement.metricsQuery must return for an Active
	// cluster to count: an operator and a number, as spec.expectedMetricsResult, for
	// example "> 1". Required with replacement.metricsQuery.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*(<=|>=|<|>|==|!=)?\\\\s*[-+]?([0-9]+(\\\\.[0-9]*)?|\\\\.[0-9]+)([eE][-+]?[0-9]{1,2})?\\\\s*$')",message="replacement.expectedMetricsResult must be a comparison operator (<=, <, >=, >, ==, !=) and a number, for example '> 1', with an exponent of at most two digits; a bare number means '<='"
	ExpectedMetricsResult string `json:"expectedMetricsResult,omitempty"`
}

// DNSPublishing says which names the manager publishes for the Gateway, and how.
type DNSPublishing struct {
	// hostnames are the DNS names that clients resolve to reach the Gateway: 1 to 8
	// fully qualified names, lower case, without the final dot, optionally starting
	// with "*." for a wildcard. Each gets an A record (and an AAAA record when some
	// published address is IPv6) with the Gateway's addresses. A name belongs to one
	// policy: two policies publishing one name fight over its records.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Hostnames []Hostname `json:"hostnames"`

	// ttl is the records' time to live, in whole seconds, from 1s to 24h. A draining
	// cluster's minDrainDuration is never shorter than it. Default 60s.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{1,5}(h|m|s)){1,3}$')",message="dns.ttl must be a duration in whole seconds, such as 60s or 5m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,5}(h|m|s)){1,3}$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="dns.ttl must be between 1s and 24h"
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// verify says how the manager confirms that DNS let go of a leaving cluster, the
	// moment its drain clock (dnsWithdrawalTime) starts. Unset: mode Authoritative,
	// with the name servers of each hostname's zone.
	// +optional
	Verify *DNSVerification `json:"verify,omitempty"`
}

// DNSVerificationMode is how the manager confirms a withdrawal from DNS.
// +kubebuilder:validation:Enum=Authoritative;ExternalDNS
type DNSVerificationMode string

const (
	// DNSVerifyAuthoritative: a leaving cluster is withdrawn once external-dns has
	// read the generation of the DNSEndpoint that drops it and every authoritative
	// name server of the zone answers each hostname without its addresses.
	DNSVerifyAuthoritative DNSVerificationMode = "Authoritative"
	// DNSVerifyExternalDNS: a leaving cluster is withdrawn once external-dns has read
	// the generation of the DNSEndpoint that drops it (its status.observedGeneration),
	// whatever DNS serves: for hubs that cannot reach the zone's name servers.
	DNSVerifyExternalDNS DNSVerificationMode = "ExternalDNS"
)

// MaxVerifyNameservers is the most name servers spec.dns.verify.nameservers lists.
const MaxVerifyNameservers = 10

// DNSVerification says how the manager confirms that DNS let go of a leaving cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'ExternalDNS' || !has(self.nameservers) || size(self.nameservers) == 0",message="dns.verify.nameservers goes with mode Authoritative: with ExternalDNS no name server is asked"
type DNSVerification struct {
	// mode is Authoritative (the default) or ExternalDNS. Authoritative: a leaving
	// cluster counts as withdrawn from DNS only once external-dns has read the
	// generation of the DNSEndpoint that drops it AND every authoritative name server
	// of the zone, asked directly (every address of each, without recursion), answers
	// each hostname's A and AAAA records without any of the cluster's addresses, and
	// with an address for each record set that is published. A server that does not
	// answer, refuses, fails or still answers an old address keeps the cluster
	// "still published in DNS", its row's message naming the server and its answer.
	// ExternalDNS: external-dns having read that generation suffices; for hubs that
	// cannot reach the zone's name servers (a private zone, for instance).
	// +optional
	// +kubebuilder:default=Authoritative
	Mode DNSVerificationMode `json:"mode,omitempty"`

	// nameservers are the authoritative name servers to ask, each "host" or
	// "host:port" (an IPv6 address in brackets with a port), port 53 by default; a
	// host name is resolved with the manager's resolver, and each of its addresses is
	// asked. At most 10. Empty: the manager finds each hostname's zone (the closest
	// enclosing name with an SOA record) and asks its NS servers, through the
	// manager's resolver (the system's /etc/resolv.conf).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=10
	Nameservers []Nameserver `json:"nameservers,omitempty"`
}

// Nameserver is a name server's "host" or "host:port": a host name, an IPv4 address,
// an IPv6 address, or an IPv6 address in brackets with a port.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=261
// +kubebuilder:validation:XValidation:rule="self.matches('^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\\\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?|\\\\[[0-9a-fA-F:.]+\\\\](:[0-9]{1,5})?|[0-9a-fA-F.]*:[0-9a-fA-F.]*:[0-9a-fA-F:.]*)$')",message="dns.verify.nameservers must be host or host:port, such as ns1.example.com, 192.0.2.53:5353, 2001:db8::53 or [2001:db8::53]:5353, host names in lower case"
// +kubebuilder:validation:XValidation:rule="!self.matches('^([^:]+|\\\\[.*\\\\]):[0-9]{1,5}$') || (int(self.substring(self.lastIndexOf(':') + 1)) >= 1 && int(self.substring(self.lastIndexOf(':') + 1)) <= 65535)",message="dns.verify.nameservers: the port must be between 1 and 65535"
type Nameserver string

// Hostname is a fully qualified DNS name without the final dot, optionally a wildcard
// ("*." and a name).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="self.matches('^(\\\\*\\\\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$')",message="dns.hostnames must be fully qualified DNS names in lower case without the final dot, such as gateway.example.com or *.apps.example.com, each label at most 63 characters"
type Hostname string

// PlacementReference names a Placement in the policy's namespace.
type PlacementReference struct {
	// name is the Placement's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="placementRef.name must be a DNS subdomain: lower case letters, digits, '-' and '.'"
	Name string `json:"name"`
}

// SecretReference names a Secret in the policy's namespace. Secrets of other
// namespaces cannot be named.
type SecretReference struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="prometheusSecret.name must be a DNS subdomain: lower case letters, digits, '-' and '.'"
	Name string `json:"name"`
}

// GatewayReference names a Gateway API Gateway on the spoke clusters.
type GatewayReference struct {
	// group is the Gateway's API group. Only gateway.networking.k8s.io is supported.
	// +optional
	// +kubebuilder:default="gateway.networking.k8s.io"
	// +kubebuilder:validation:Enum=gateway.networking.k8s.io
	Group string `json:"group,omitempty"`

	// kind is the Gateway's kind. Only Gateway is supported.
	// +optional
	// +kubebuilder:default=Gateway
	// +kubebuilder:validation:Enum=Gateway
	Kind string `json:"kind,omitempty"`

	// name is the Gateway's name on the spoke clusters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="targetRef.name must be a DNS subdomain: lower case letters, digits, '-' and '.'"
	Name string `json:"name"`

	// namespace is the Gateway's namespace on the spoke clusters. It defaults to the
	// policy's namespace.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="targetRef.namespace must be a DNS label: lower case letters, digits and '-'"
	Namespace string `json:"namespace,omitempty"`
}

// TrafficShare describes the check "at most maxPercent of the Gateway's traffic still
// reaches the draining cluster" on a request counter.
type TrafficShare struct {
	// metric is a counter of requests served by the Gateway, for example
	// istio_requests_total.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z_:][a-zA-Z0-9_:]*$')",message="trafficShare.metric must be a Prometheus metric name, for example istio_requests_total"
	Metric string `json:"metric"`

	// selector holds extra label matchers added to both sides of the ratio, in PromQL
	// syntax without braces, for example destination_service_name="gw-istio".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('{') && !self.contains('}')",message="trafficShare.selector holds label matchers without braces, for example destination_service_name=\"gw-istio\""
	Selector string `json:"selector,omitempty"`

	// clusterLabel is the metric's label that names the cluster. Default "cluster".
	// +optional
	// +kubebuilder:default=cluster
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z_][a-zA-Z0-9_]*$')",message="trafficShare.clusterLabel must be a Prometheus label name, for example cluster"
	ClusterLabel string `json:"clusterLabel,omitempty"`

	// clusterLabelValue is the value of clusterLabel for a cluster, as a Go template
	// with the same data and functions as metricsQuery but quote, for example
	// '{{ index .Cluster.Labels "cluster" }}': the manager quotes the value it gives.
	// Default: the cluster's name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.matches('[{][{]-?([^}]*[[:space:](|])?(range|with|template|define|block|break|continue|printf|print|println|call|slice|len|html|js|urlquery)([^A-Za-z0-9_]|$)')",message="trafficShare.clusterLabelValue: a template action may use only the documented fields, index, quote, if/else and eq, ne, and, or, not; range, with, template, define, block and functions such as printf are not allowed"
	ClusterLabelValue string `json:"clusterLabelValue,omitempty"`

	// window is the range of the rate() in the built query, as a Prometheus duration:
	// units from the largest to the smallest (y, w, d, h, m, s, ms), each at most once,
	// longer than zero. The number of digits of each unit is bounded so that the total
	// stays within the range Prometheus can hold. Default 5m.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{1,2}y)?([0-9]{1,3}w)?([0-9]{1,4}d)?([0-9]{1,5}h)?([0-9]{1,6}m)?([0-9]{1,7}s)?([0-9]{1,9}ms)?$') && self != ''",message="trafficShare.window must be a Prometheus duration, for example 5m or 1h30m, with its units from the largest to the smallest (y, w, d, h, m, s, ms), each at most once"
	// +kubebuilder:validation:XValidation:rule="self.matches('[1-9]')",message="trafficShare.window must be longer than 0s: a rate over an empty range has no data"
	Window string `json:"window,omitempty"`

	// maxPercent is the largest share of the Gateway's traffic, in percent (0 to 100),
	// that a draining cluster may still carry for a check to pass.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MaxPercent float64 `json:"maxPercent"`

	// minRequestsPerSecond is the least traffic, in requests per second over window
	// and summed over every cluster, at which a share means something: at night, 1
	// request in 3 is 33%. Below it a check has no data (noDataPolicy decides how it
	// counts, Hold by default), and the PrometheusReachable condition says the traffic
	// was too low (TrafficTooLow). Default 0: no minimum.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	MinRequestsPerSecond float64 `json:"minRequestsPerSecond,omitempty"`
}

// DeadlineAction is what happens to a cluster that is still draining at maxDrainDuration.
// +kubebuilder:validation:Enum=Hold;Remove
type DeadlineAction string

const (
	// DeadlineHold keeps the cluster in the proxy and reports it as Held.
	DeadlineHold DeadlineAction = "Hold"
	// DeadlineRemove removes the cluster from the proxy and records an event.
	DeadlineRemove DeadlineAction = "Remove"
)

// NoDataPolicy is how an empty query result or NaN counts.
// +kubebuilder:validation:Enum=Hold;Pass
type NoDataPolicy string

const (
	// NoDataHold counts no data as a failed check.
	NoDataHold NoDataPolicy = "Hold"
	// NoDataPass counts no data as a passed check.
	NoDataPass NoDataPolicy = "Pass"
)

// TrafficMigrationPolicyStatus is the observed state of a TrafficMigrationPolicy.
type TrafficMigrationPolicyStatus struct {
	// observedGeneration is the policy's generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the policy's state. Types: Ready, PrometheusReachable,
	// Draining, Held. Their reasons are listed with the condition type constants.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// proxyPlacement is the proxy Placement that the manager writes.
	// +optional
	ProxyPlacement *ProxyPlacementStatus `json:"proxyPlacement,omitempty"`

	// activeClusters is the number of clusters that are in the real Placement's
	// decisions (and so in the proxy's).
	// +optional
	ActiveClusters int32 `json:"activeClusters"`

	// drainingClusters is the number of clusters that left the real decisions but
	// are still in the proxy's, Held ones included.
	// +optional
	DrainingClusters int32 `json:"drainingClusters"`

	// clusters has one row per cluster in the proxy, and a row for a cluster removed
	// a short while ago, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterStatus `json:"clusters,omitempty"`

	// dns is what the manager published for spec.dns; unset without spec.dns.
	// +optional
	DNS *DNSStatus `json:"dns,omitempty"`
}

// DNSStatus is what the manager published in the policy's DNSEndpoint, and whether
// external-dns applied it.
type DNSStatus struct {
	// endpointName is the name of the DNSEndpoint, in the policy's namespace.
	// +required
	EndpointName string `json:"endpointName"`

	// publishedClusters are the clusters whose Gateway addresses the DNSEndpoint
	// holds, as the manager last wrote it, sorted.
	// +optional
	// +listType=atomic
	PublishedClusters []string `json:"publishedClusters,omitempty"`

	// generation is the DNSEndpoint's metadata.generation as the manager last wrote
	// or read it.
	// +optional
	Generation int64 `json:"generation,omitempty"`

	// observedGeneration is the DNSEndpoint's status.observedGeneration: the
	// generation external-dns has read. external-dns writes it when its CRD source
	// reads the object, before its provider applies the records: it does not say
	// that DNS serves them.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ProxyPlacementStatus describes the proxy Placement.
type ProxyPlacementStatus struct {
	// name is the proxy Placement's name, in the policy's namespace.
	// +required
	Name string `json:"name"`

	// numberOfClusters is how many clusters the proxy's decisions list.
	// +optional
	NumberOfClusters int32 `json:"numberOfClusters"`
}

// ClusterPhase is where a cluster stands in a migration.
// +kubebuilder:validation:Enum=Active;Draining;Held;Removed
type ClusterPhase string

const (
	// ClusterActive: the cluster is in the real decisions and in the proxy's.
	ClusterActive ClusterPhase = "Active"
	// ClusterDraining: the cluster left the real decisions; the proxy keeps it until
	// its removal gate passes.
	ClusterDraining ClusterPhase = "Draining"
	// ClusterHeld: the cluster is still draining past maxDrainDuration and
	// onMaxDrainDuration is Hold.
	ClusterHeld ClusterPhase = "Held"
	// ClusterRemoved: the cluster left the proxy a short while ago.
	ClusterRemoved ClusterPhase = "Removed"
)

// EvaluationResult is the outcome of one metrics check of a draining cluster.
// +kubebuilder:validation:Enum=Pass;Fail;NoData;Error
type EvaluationResult string

const (
	// EvaluationPass: the query's value met the expected result.
	EvaluationPass EvaluationResult = "Pass"
	// EvaluationFail: the query's value did not meet the expected result.
	EvaluationFail EvaluationResult = "Fail"
	// EvaluationNoData: the query returned nothing or NaN; noDataPolicy decides.
	EvaluationNoData EvaluationResult = "NoData"
	// EvaluationError: the query could not be made or its result not read.
	EvaluationError EvaluationResult = "Error"
)

// ClusterStatus is the state of one cluster of the proxy Placement.
type ClusterStatus struct {
	// name is the ManagedCluster's name.
	// +required
	Name string `json:"name"`

	// phase is Active, Draining, Held or Removed.
	// +required
	Phase ClusterPhase `json:"phase"`

	// drainStartTime is when the manager saw the cluster leave the real decisions.
	// +optional
	DrainStartTime *metav1.Time `json:"drainStartTime,omitempty"`

	// dnsWithdrawalTime is, with spec.dns, when the manager saw the cluster's
	// addresses gone from the published records, external-dns having read that
	// generation of the DNSEndpoint and, with spec.dns.verify.mode Authoritative (the
	// default), every authoritative name server of the zone answering without them:
	// its drain clock. minDrainDuration counts from it. Unset while the cluster is
	// still published, and without spec.dns.
	// +optional
	DNSWithdrawalTime *metav1.Time `json:"dnsWithdrawalTime,omitempty"`

	// dnsWithdrawalCheck is, with spec.dns, the first check with a value made at or
	// after dnsWithdrawalTime: what the cluster's traffic was when DNS let go of it,
	// the reference that stalled compares the latest check with. The manager keeps it
	// while the cluster drains, however many checks the history has dropped since.
	// +optional
	DNSWithdrawalCheck *CheckRecord `json:"dnsWithdrawalCheck,omitempty"`

	// stalled is true for a draining or held cluster whose drain does not move
	// although DNS let go of it: with spec.dns and an expectation that the value falls
	// under ("<" or "<="), its latest check with a value was made longer after
	// dnsWithdrawalTime than the larger of the TTL plus 60s and four times
	// trafficShare.window (four intervals with a metricsQuery), did not pass, and is
	// still more than half the value of dnsWithdrawalCheck. The likely cause is clients
	// on long-lived connections (HTTP/2, gRPC, pooled keep-alive) or behind resolvers
	// that ignore the TTL, which keep sending to the old Gateway whatever DNS says; the
	// remedy is to bound the Gateway's connection lifetime
	// (docs/troubleshooting.md#stalled-drains). It removes nothing: the cluster stays
	// until its gate passes, maxDrainDuration ends the drain, or it is force-removed.
	// The manager sets it with the check that changes it.
	// +optional
	Stalled bool `json:"stalled,omitempty"`

	// estimatedRemovalTime is, for a draining or held cluster, when its checks are
	// expected to let it go: the first scheduled check at which the trend of its
	// history meets the threshold, the passing checks in a row that follow, and never
	// before its minimum drain ends. Unset when it is unknown: fewer than three checks
	// with a value, a trend that does not move toward the threshold, DNS still
	// publishing the cluster, or a stalled drain. The manager writes it with the check
	// that changes it.
	// +optional
	EstimatedRemovalTime *metav1.Time `json:"estimatedRemovalTime,omitempty"`

	// removalTime is when the cluster left the proxy (phase Removed).
	// +optional
	RemovalTime *metav1.Time `json:"removalTime,omitempty"`

	// consecutiveSuccesses is the current run of passed checks.
	// +optional
	ConsecutiveSuccesses int32 `json:"consecutiveSuccesses,omitempty"`

	// lastEvaluationTime is when the cluster was last checked.
	// +optional
	LastEvaluationTime *metav1.Time `json:"lastEvaluationTime,omitempty"`

	// nextEvaluationTime is when the cluster is checked next.
	// +optional
	NextEvaluationTime *metav1.Time `json:"nextEvaluationTime,omitempty"`

	// lastResult is the outcome of the last check: Pass, Fail, NoData or Error.
	// +optional
	LastResult EvaluationResult `json:"lastResult,omitempty"`

	// lastValue is the value the last check returned, as Prometheus formatted it.
	// +optional
	LastValue string `json:"lastValue,omitempty"`

	// resolvedQuery is the PromQL query of the last check, with the template filled
	// in for this cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	ResolvedQuery string `json:"resolvedQuery,omitempty"`

	// message says in words why the cluster is where it is: what its gate still waits
	// for, or what went wrong with its last check.
	// +optional
	Message string `json:"message,omitempty"`

	// lastCheckDetail is what the last check reported beyond its value, such as the
	// error that made it fail; the manager carries it from one check to the next, and
	// keeps at most 512 bytes of it.
	// +optional
	LastCheckDetail string `json:"lastCheckDetail,omitempty"`

	// history holds the cluster's last checks while it drains, oldest first, at most
	// MaxCheckHistory of them. The manager writes it with the rest of the row, in the
	// same status write, keeps it on the Removed row, and clears it when the cluster
	// is Active again.
	//
	// Size: a full history is at most about 1.3 KiB of JSON (10 checks with values of
	// 64 bytes). A policy with 100 draining clusters, each with a full history, a
	// resolved query of 1 KiB, a lastCheckDetail of 512 bytes, every reason to wait
	// in its message and a stalled drain's (its message, dnsWithdrawalCheck and
	// stalled add about 0.6 KiB), is about 470 KiB: 31% of etcd's 1.5 MiB request
	// limit, which bounds any object. Only draining, held and recently removed clusters have one.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	History []CheckRecord `json:"history,omitempty"`
}

// MaxCheckHistory is how many checks a cluster row keeps in its history.
const MaxCheckHistory = 10

// CheckRecord is one check of a draining cluster, as kept in its history.
type CheckRecord struct {
	// time is when the check was evaluated.
	// +required
	Time metav1.Time `json:"time"`

	// result is the outcome of the check: Pass, Fail, NoData or Error.
	// +required
	Result EvaluationResult `json:"result"`

	// value is the value the check returned, as Prometheus formatted it; empty when
	// the check returned none.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// TrafficMigrationPolicyList is a list of TrafficMigrationPolicies.
type TrafficMigrationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the policies.
	Items []TrafficMigrationPolicy `json:"items"`
}
