// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// ReasonDNSWithdrawn is the event reason when DNS lets go of draining clusters and
// their drain clock starts.
const ReasonDNSWithdrawn = "DNSWithdrawn"

// dnsRetry is how soon a policy with spec.dns is synced again while its DNSEndpoint
// cannot be read yet (the cache starts).
const dnsRetry = time.Second

// dnsState is what a sync gathered and did about the policy's DNS (spec.dns).
type dnsState struct {
	// current is the DNSEndpoint as it is (or as this sync wrote it); nil when none.
	current *dns.Observed
	// plan is what the DNSEndpoint must publish.
	plan dns.Plan
	// notServed: the hub serves no DNSEndpoints; drains count as without spec.dns.
	notServed bool
	// readErr says why the DNSEndpoint could not be read; drains wait.
	readErr error
	// applyErr says why writing it failed.
	applyErr error
	// settleAt is when the next cluster's Gateway will have settled; zero when none
	// waits.
	settleAt time.Time
	// held are the policy's hostnames it publishes; notAllowed those the hub admin
	// does not let its namespace publish; taken those another policy, or a deleted
	// one's DNSEndpoint, publishes, each with who, as the condition names it.
	held, notAllowed []string
	taken            []string
	// agents are the agents' reports the sync read.
	agents agentReports
	// previous is what the DNSEndpoint published before this sync wrote it, for the
	// event; addresses are the clusters' reported addresses, to name them in it.
	previous  *dns.Publication
	addresses map[string][]string
	// stepWaits says why step 2 of a switch waits on the name servers; "" when it
	// does not.
	stepWaits string
	// verifyAgain is how soon the policy must sync again to ask its name servers
	// again, while a withdrawal waits on them; zero when nothing waits on a round
	// that is not in flight.
	verifyAgain time.Duration
}

// usable reports whether the DNSEndpoint was read and is the manager's to write.
func (d *dnsState) usable() bool {
	return !d.notServed && d.readErr == nil && (d.current == nil || d.current.Ours)
}

// readDNS reads the policy's DNSEndpoint and which of its hostnames it may publish:
// nothing when drains do not follow DNS (no spec.dns, or no DNSEndpoint CRD on the
// hub).
func (c *Controller) readDNS(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, agents agentReports) {
	if policy.Spec.DNS == nil {
		return
	}
	d := &dnsState{agents: agents}
	st.dns = d
	if c.endpoints == nil {
		d.notServed = true
		return
	}
	d.current, d.readErr = c.endpoints.Get(ctx, policy.Namespace, policy.Name)
	if errors.Is(d.readErr, dns.ErrNotServed) {
		d.notServed, d.readErr = true, nil
		return
	}
	if !d.usable() {
		return
	}
	d.held, d.notAllowed, d.taken = c.claimHostnames(policy)
	d.addresses = agents.addresses
}

// decideDNS is the DNS stage of a sync: it decides what the policy's DNSEndpoint must
// publish (dns.Decide) and which draining clusters DNS let go of, for the proxy's
// decision. No cluster is withdrawn while the DNSEndpoint cannot be read or is not the
// manager's (the safe side: drains wait).
func (c *Controller) decideDNS(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state) {
	d := st.dns
	if d == nil || d.notServed {
		return
	}
	st.input.DNS = &decision.DNS{Withdrawn: sets.New[string]()}
	if !d.usable() {
		return
	}
	var real []string
	for _, g := range st.input.Real {
		real = append(real, g.Clusters...)
	}
	in := dns.Input{
		Hostnames:  d.held,
		Rules:      c.limits.DNSAddresses,
		TTL:        st.input.Policy.DNSTTL,
		RealKnown:  st.input.RealKnown,
		Real:       real,
		Programmed: c.settled(policy, d.agents, st.input.Now, d),
		Addresses:  d.agents.addresses,
	}
	if d.current != nil {
		in.Current, in.CurrentApplied = &d.current.Publication, d.current.Applied()
	}
	d.plan = dns.Decide(in)
	if d.plan.Desired != nil && in.CurrentApplied && dns.Shrinks(d.current.Publication, *d.plan.Desired) &&
		policy.Spec.DNS.VerifyMode() == trafficv1alpha1.DNSVerifyAuthoritative {
		// Step 2 of a switch: the old addresses go only once every name server
		// answers the new ones beside them, not once external-dns has read them.
		nameservers := policy.Spec.DNS.VerifyNameservers()
		q := questionOf(policy.UID, d.current.Generation, d.held, nameservers)
		served, why, again := c.nameServers.serves(ctx, keyOf(policy), q, d.held, nameservers, d.current.Publication, st.input.Policy.Interval)
		if !served {
			in.CurrentApplied = false
			d.plan = dns.Decide(in)
			d.stepWaits, d.verifyAgain = why, again
		}
	}
	var proxied []string
	for _, g := range st.input.Proxy {
		proxied = append(proxied, g.Clusters...)
	}
	// A policy that publishes none of its names has no DNS of its own to follow: no
	// drain clock starts (the safe side) while another holds them.
	if d.current != nil && len(d.held) > 0 {
		st.input.DNS.Withdrawn = dns.Withdrawn(&d.current.Publication, d.current.Applied(), proxied)
		if policy.Spec.DNS.VerifyMode() == trafficv1alpha1.DNSVerifyAuthoritative {
			c.verifyWithdrawals(ctx, policy, st, d, d.agents)
		}
	}
}

// verifyWithdrawals keeps in the decision's Withdrawn only the clusters that every
// authoritative name server of the zone answers without (spec.dns.verify, mode
// Authoritative): of the draining clusters that external-dns read the records
// without and whose drain clock has not started, those the last round of queries
// since then confirms. The others wait, with why in DNS.Waiting; the round that
// decides them is started here, apart from the sync, at most once per interval.
func (c *Controller) verifyWithdrawals(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, d *dnsState, agents agentReports) {
	if !st.input.RealKnown {
		// Which clusters leave is not known: none is asked about, and none is let go
		// of (nothing is removed meanwhile anyway, rule 7).
		st.input.DNS.Withdrawn = sets.New[string]()
		return
	}
	real := sets.New[string]()
	for _, g := range st.input.Real {
		real.Insert(g.Clusters...)
	}
	started := sets.New[string]()
	for _, row := range policy.Status.Clusters {
		if row.DNSWithdrawalTime != nil {
			started.Insert(row.Name)
		}
	}
	leaving := map[string][]string{}
	for cluster := range st.input.DNS.Withdrawn {
		if !real.Has(cluster) && !started.Has(cluster) {
			leaving[cluster] = agents.addresses[cluster]
		}
	}
	if len(leaving) == 0 {
		return
	}
	key := policy.Namespace + "/" + policy.Name
	nameservers := policy.Spec.DNS.VerifyNameservers()
	q := questionOf(policy.UID, d.current.Generation, d.held, nameservers)
	v := c.nameServers.verify(ctx, key, q, d.held, nameservers, d.current.Publication, leaving, st.input.Policy.Interval)
	for cluster := range leaving {
		if !v.confirmed.Has(cluster) {
			st.input.DNS.Withdrawn.Delete(cluster)
		}
	}
	st.input.DNS.Waiting = v.waiting
	if v.again > 0 && (d.verifyAgain <= 0 || v.again < d.verifyAgain) {
		d.verifyAgain = v.again
	}
}

// claimHostnames decides which of the policy's hostnames it publishes (dns.HoldsHostname):
// those the hub admin lets its namespace publish and that no other policy holds.
// notAllowed and taken say why the others are not, taken naming who holds each:
// a policy of the same namespace by name, one of another namespace only as such.
func (c *Controller) claimHostnames(policy *trafficv1alpha1.TrafficMigrationPolicy) (held, notAllowed, taken []string) {
	me := dns.PolicyRef{Namespace: policy.Namespace, Name: policy.Name, Created: policy.CreationTimestamp.Time}
	for _, h := range sortedHostnames(policy.Spec.DNS) {
		if !c.limits.DNSDomains.Allows(policy.Namespace, h) {
			notAllowed = append(notAllowed, h)
			continue
		}
		var claimants []dns.PolicyRef
		for _, key := range c.keysByIndex(byHostname, h) {
			if ref := c.claimant(key, h); ref != nil {
				claimants = append(claimants, *ref)
			}
		}
		var publishers []dns.Publisher
		for _, key := range c.endpoints.Publishers(h) {
			ns, _, _ := strings.Cut(key, "/")
			if !c.limits.DNSDomains.Allows(ns, h) {
				continue // it may not publish it: the admin's rule, not the record, counts
			}
			publishers = append(publishers, dns.Publisher{Endpoint: key, Policy: c.policyRef(key)})
		}
		holder := dns.HoldsHostname(me, claimants, publishers)
		if holder.Mine {
			held = append(held, h)
			continue
		}
		taken = append(taken, h+" by "+describeHolder(policy.Namespace, holder))
	}
	return held, notAllowed, taken
}

// claimant is the policy of key as a claimant of hostname: nil when it is gone, being
// deleted, or not allowed to publish it.
func (c *Controller) claimant(key, hostname string) *dns.PolicyRef {
	ref := c.policyRef(key)
	if ref == nil || !c.limits.DNSDomains.Allows(ref.Namespace, hostname) {
		return nil
	}
	return ref
}

// policyRef is the live policy of key; nil when it is gone or being deleted.
func (c *Controller) policyRef(key string) *dns.PolicyRef {
	ns, name, _ := strings.Cut(key, "/")
	p, err := c.policies.TrafficMigrationPolicies(ns).Get(name)
	if err != nil || p.DeletionTimestamp != nil {
		return nil
	}
	return &dns.PolicyRef{Namespace: p.Namespace, Name: p.Name, Created: p.CreationTimestamp.Time}
}

// describeHolder names who holds a hostname, for a policy of namespace: by name in its
// own namespace, never the name of another tenant's.
func describeHolder(namespace string, h dns.Holder) string {
	ns, name, _ := strings.Cut(h.By, "/")
	switch {
	case ns == namespace && h.Orphan:
		return fmt.Sprintf("DNSEndpoint %s, whose policy was deleted (delete it to hand the name over)", name)
	case ns == namespace:
		return "policy " + name
	case h.Orphan:
		return "the DNSEndpoint of a deleted policy in another namespace"
	}
	return "a policy in another namespace"
}

// sortedHostnames returns spec.dns.hostnames, sorted.
func sortedHostnames(spec *trafficv1alpha1.DNSPublishing) []string {
	out := dns.Hostnames(spec)
	slices.Sort(out)
	return slices.Compact(out)
}

// settled returns the clusters whose target Gateway has settled (dns.Settled) as this
// manager saw it, and sets d.settleAt to when the next one will have.
func (c *Controller) settled(policy *trafficv1alpha1.TrafficMigrationPolicy, agents agentReports, now time.Time, d *dnsState) (out sets.Set[string]) {
	c.memory.with(keyOf(policy), func(m *memory) {
		if m.programmedSince == nil {
			m.programmedSince = map[string]time.Time{}
		}
		out, d.settleAt = dns.Settled(m.programmedSince, agents.ready, agents.addresses, now)
	})
	return out
}

// applyDNS writes the policy's DNSEndpoint when its records must change. It runs after
// the proxy is written: a cluster is published once the Gateway that the proxy put on
// it is Programmed, and withdrawn while the proxy still keeps it.
func (c *Controller) applyDNS(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, d *dnsState) {
	if d == nil || !d.usable() || d.plan.Desired == nil {
		return
	}
	written, err := c.endpoints.Apply(ctx, policy, d.current, *d.plan.Desired)
	operation := "update"
	if d.current == nil {
		operation = "create"
	}
	if err != nil {
		d.applyErr = err
		c.metrics.dnsWrite(policy, operation, "Error")
		return
	}
	c.metrics.dnsWrite(policy, operation, "Written")
	c.expectations.wrote(keyOf(policy), kindDNSEndpoint, written.Object())
	if d.current != nil {
		d.previous = &d.current.Publication
	}
	edited := d.current != nil && d.current.EditedByOthers
	d.current = written
	change := dns.DescribeChange(d.previous, written.Publication, d.addresses)
	switch {
	case written.RecreatedAfterDelete:
		c.event(policy, corev1.EventTypeWarning, ReasonDNSEndpointRestored, fmt.Sprintf("DNSEndpoint %s was deleted by someone else: created it again. %s", policy.Name, change))
	case edited:
		c.event(policy, corev1.EventTypeWarning, ReasonDNSEndpointRestored, fmt.Sprintf("DNSEndpoint %s was edited by someone else: restored what the manager publishes. %s", policy.Name, change))
	case operation == "create":
		c.event(policy, corev1.EventTypeNormal, "DNSEndpointCreated", fmt.Sprintf("Created DNSEndpoint %s. %s", policy.Name, change))
	default:
		c.event(policy, corev1.EventTypeNormal, ReasonDNSEndpointUpdated, fmt.Sprintf("Updated DNSEndpoint %s. %s", policy.Name, change))
	}
}

// Event reasons of the DNSEndpoint's writes.
const (
	// ReasonDNSEndpointUpdated: the manager changed what the DNSEndpoint publishes.
	ReasonDNSEndpointUpdated = "DNSEndpointUpdated"
	// ReasonDNSEndpointRestored: someone else edited or deleted the DNSEndpoint, and
	// the manager wrote what it decides again.
	ReasonDNSEndpointRestored = "DNSEndpointRestored"
	// ReasonDNSAddressRefused: addresses an agent reported are never published.
	ReasonDNSAddressRefused = "DNSAddressRefused"
)

// reportRefused records an event when the addresses the policy's DNS refuses change
// (none when they stop being refused), so that a broken or compromised agent's report
// is seen once, not at every sync.
func (c *Controller) reportRefused(policy *trafficv1alpha1.TrafficMigrationPolicy, d *dnsState) {
	if d == nil {
		return
	}
	note := refusedNote(d.plan.Refused)
	var changed bool
	c.memory.with(keyOf(policy), func(m *memory) {
		changed = m.refusedNote != note
		m.refusedNote = note
	})
	if changed && note != "" {
		c.event(policy, corev1.EventTypeWarning, ReasonDNSAddressRefused, "Not published in DNS: "+note)
	}
}

// refusedNote lists the refused addresses by cluster, bounded; "" when none.
func refusedNote(refused map[string][]dns.Refused) string {
	clusters := slices.Sorted(maps.Keys(refused))
	parts := make([]string, 0, len(clusters))
	for _, c := range clusters {
		parts = append(parts, c+"'s "+refusedList(refused[c]))
	}
	return shortlist.Join(parts, maxNamesInEvent)
}

// refusedList lists one cluster's refused addresses, bounded.
func refusedList(refused []dns.Refused) string {
	parts := make([]string, 0, len(refused))
	for _, r := range refused {
		parts = append(parts, r.String())
	}
	return shortlist.Join(parts, maxNamesInEvent)
}

// noteRefusedOnRows adds to the row of each cluster with refused addresses which, and
// why.
func noteRefusedOnRows(rows []trafficv1alpha1.ClusterStatus, d *dnsState) {
	if d == nil || len(d.plan.Refused) == 0 {
		return
	}
	for i := range rows {
		if refused := d.plan.Refused[rows[i].Name]; len(refused) > 0 {
			rows[i].Message += "; not published in DNS: " + refusedList(refused)
		}
	}
}

// dnsRequeue is how soon the policy must be synced again for its DNS: shortly while
// its DNSEndpoint cache starts (the hub serving DNSEndpoints later wakes it, see
// Endpoints.SetServed); when the next Gateway
// settles, or the next round of name server queries may start, whichever comes first;
// zero otherwise (a change of the DNSEndpoint, or the end of a round, wakes it).
func dnsRequeue(d *dnsState, now time.Time) time.Duration {
	switch {
	case d == nil:
		return 0
	case errors.Is(d.readErr, dns.ErrNotSynced):
		return dnsRetry
	case !d.settleAt.IsZero() && (d.verifyAgain <= 0 || d.settleAt.Sub(now) < d.verifyAgain):
		return max(d.settleAt.Sub(now), 0) + 10*time.Millisecond
	case d.verifyAgain > 0:
		return d.verifyAgain + 10*time.Millisecond
	}
	return 0
}

// dnsStatus is the policy's status.dns; nil without spec.dns or a DNSEndpoint.
func dnsStatus(policy *trafficv1alpha1.TrafficMigrationPolicy, d *dnsState) *trafficv1alpha1.DNSStatus {
	switch {
	case d == nil:
		return nil
	case d.readErr != nil:
		// Not known now: what was last known stays.
		return policy.Status.DNS.DeepCopy()
	case d.notServed || d.current == nil || !d.current.Ours:
		return &trafficv1alpha1.DNSStatus{EndpointName: policy.Name}
	}
	return &trafficv1alpha1.DNSStatus{
		EndpointName:       policy.Name,
		PublishedClusters:  d.current.Publication.Clusters,
		Generation:         d.current.Generation,
		ObservedGeneration: d.current.ObservedGeneration,
	}
}

// dnsCondition is the policy's DNSPublished condition; ok is false when the policy
// has none (no spec.dns) or it stays as it is (the DNSEndpoint cache starts).
func dnsCondition(policy *trafficv1alpha1.TrafficMigrationPolicy, d *dnsState) (metav1.Condition, bool) {
	c := metav1.Condition{Type: trafficv1alpha1.ConditionDNSPublished, Status: metav1.ConditionFalse}
	name := policy.Name
	switch {
	case d == nil:
		return c, false
	case d.notServed:
		c.Reason = trafficv1alpha1.ReasonDNSEndpointCRDNotInstalled
		c.Message = "The hub does not serve dnsendpoints.externaldns.k8s.io/v1alpha1: install external-dns's DNSEndpoint CRD and an external-dns that reads it (--source=crd); until then nothing is published and drains count from when clusters leave the Placement"
	case errors.Is(d.readErr, dns.ErrNotSynced):
		return c, false
	case d.readErr != nil:
		c.Reason = trafficv1alpha1.ReasonApplyFailed
		c.Message = fmt.Sprintf("DNSEndpoint %s cannot be read, retrying; no drain starts meanwhile: %v", name, d.readErr)
	case d.current != nil && !d.current.Ours:
		c.Reason = trafficv1alpha1.ReasonDNSEndpointConflict
		c.Message = fmt.Sprintf("DNSEndpoint %s exists and is not this manager's (it lacks the policy label, or another manager's --dns-owner-id owns it): nothing is published, and no drain starts, until it is deleted or renamed", name)
	case d.applyErr != nil:
		c.Reason = trafficv1alpha1.ReasonApplyFailed
		c.Message = fmt.Sprintf("Writing DNSEndpoint %s failed, retrying: %v", name, d.applyErr)
	case len(d.notAllowed) > 0:
		c.Reason = trafficv1alpha1.ReasonHostnameNotAllowed
		c.Message = fmt.Sprintf("The hub admin does not let namespace %s publish %s (the manager's --dns-domains): not published", policy.Namespace,
			shortlist.Join(d.notAllowed, maxNamesInMessage)) + heldNote(d)
	case len(d.taken) > 0:
		c.Reason = trafficv1alpha1.ReasonHostnameTaken
		c.Message = "Published by another, so not by this policy: " + shortlist.Join(d.taken, maxNamesInMessage) + heldNote(d)
	case d.current == nil:
		c.Reason = trafficv1alpha1.ReasonNoPublishableCluster
		c.Message = "No cluster of the real Placement has the Gateway Programmed with an IP address: nothing is published yet" +
			unpublishable(d)
	case !d.current.Applied():
		c.Reason = trafficv1alpha1.ReasonWaitingForExternalDNS
		c.Message = fmt.Sprintf("DNSEndpoint %s publishes %s; external-dns has not applied its generation %d yet (it applied %d): check that an external-dns runs with --source=crd and a domain filter that covers the hostnames",
			name, dns.PublishedMessage(d.current.Publication.Clusters), d.current.Generation, d.current.ObservedGeneration) + unpublishable(d)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, trafficv1alpha1.ReasonDNSPublished
		c.Message = fmt.Sprintf("DNSEndpoint %s publishes %s, and external-dns applied it", name, dns.PublishedMessage(d.current.Publication.Clusters)) +
			unpublishable(d)
	}
	return c, true
}

// heldNote says, for a DNSPublished message about the names the policy does not
// publish, what it does publish.
func heldNote(d *dnsState) string {
	switch {
	case len(d.held) == 0:
		return "; this policy publishes no name, and no drain clock starts until it does"
	case d.current == nil:
		return fmt.Sprintf("; %s not published yet", shortlist.Join(d.held, maxNamesInMessage)) + unpublishable(d)
	}
	return fmt.Sprintf("; %s published for %s", shortlist.Join(d.held, maxNamesInMessage), dns.PublishedMessage(d.current.Publication.Clusters)) +
		unpublishable(d)
}

// unpublishable ends a DNSPublished message with the plan's clusters that cannot be
// published and the step of a switch under way, with why step 2 waits.
func unpublishable(d *dnsState) string {
	p := d.plan
	note := dns.UnpublishableMessage(p.Unpublishable) + dns.OverLimitMessage(p.OverLimit) + dns.StepMessage(p.Step)
	if d.stepWaits != "" {
		note += ", and every name server answers them: " + d.stepWaits
	}
	return note
}
