// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"fmt"
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

// dnsSettle is how long a cluster's Gateway must have been reported Programmed, with
// its addresses and a route, before DNS sends clients to it: Gateway implementations
// apply their configuration a moment after they write the status (Traefik throttles
// its providers' updates by 2s by default), and a client that DNS sends there meanwhile
// gets "no route". The time is the manager's own view, so clocks of the spokes do not
// matter; a manager that restarts waits again (later, never earlier).
const dnsSettle = 5 * time.Second

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
}

// usable reports whether the DNSEndpoint was read and is the manager's to write.
func (d *dnsState) usable() bool {
	return !d.notServed && d.readErr == nil && (d.current == nil || d.current.Ours)
}

// gatherDNS reads the policy's DNSEndpoint, decides what it must publish, and says
// what the decision follows: nil when drains do not follow DNS (no spec.dns, or no
// DNSEndpoint CRD on the hub); no cluster withdrawn while the DNSEndpoint cannot be
// read or is not the manager's (the safe side: drains wait).
func (c *Controller) gatherDNS(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, st *state, agents agentReports) {
	if policy.Spec.DNS == nil {
		return
	}
	d := &dnsState{}
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
	st.input.DNS = &decision.DNS{Withdrawn: sets.New[string]()}
	if !d.usable() {
		return
	}
	var real []string
	for _, g := range st.input.Real {
		real = append(real, g.Clusters...)
	}
	in := dns.Input{
		Hostnames:  dns.Hostnames(policy.Spec.DNS),
		TTL:        st.input.Policy.DNSTTL,
		RealKnown:  st.input.RealKnown,
		Real:       real,
		Programmed: c.settled(policy, agents, st.input.Now, d),
		Addresses:  agents.addresses,
	}
	if d.current != nil {
		in.Current, in.CurrentApplied = &d.current.Endpoint, d.current.Applied()
	}
	d.plan = dns.Decide(in)
	var proxied []string
	for _, g := range st.input.Proxy {
		proxied = append(proxied, g.Clusters...)
	}
	if d.current != nil {
		st.input.DNS.Withdrawn = dns.Withdrawn(&d.current.Endpoint, d.current.Applied(), proxied)
	}
}

// settled returns the clusters whose target Gateway has been Programmed, with an
// address reported, for dnsSettle as this manager saw it, and sets d.settleAt to when
// the next one will have.
func (c *Controller) settled(policy *trafficv1alpha1.TrafficMigrationPolicy, agents agentReports, now time.Time, d *dnsState) sets.Set[string] {
	key := policy.Namespace + "/" + policy.Name
	c.programmedMu.Lock()
	defer c.programmedMu.Unlock()
	seen := c.programmedSince[key]
	if seen == nil {
		seen = map[string]time.Time{}
		c.programmedSince[key] = seen
	}
	out := sets.New[string]()
	for cluster := range seen {
		if !agents.ready.Has(cluster) || len(agents.addresses[cluster]) == 0 {
			delete(seen, cluster)
		}
	}
	for cluster := range agents.ready {
		if len(agents.addresses[cluster]) == 0 {
			continue
		}
		since, ok := seen[cluster]
		if !ok {
			since = now
			seen[cluster] = now
		}
		if at := since.Add(dnsSettle); now.Before(at) {
			if d.settleAt.IsZero() || at.Before(d.settleAt) {
				d.settleAt = at
			}
			continue
		}
		out.Insert(cluster)
	}
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
	if err != nil {
		d.applyErr = err
		return
	}
	created := d.current == nil
	d.current = written
	if created {
		c.event(policy, corev1.EventTypeNormal, "DNSEndpointCreated", fmt.Sprintf("Created DNSEndpoint %s publishing %s", policy.Name, shortlist.Join(written.Endpoint.Clusters, maxNamesInEvent)))
	}
}

// dnsRequeue is how soon the policy must be synced again for its DNS: shortly while
// its DNSEndpoint cache starts; while the hub serves no DNSEndpoints, when the manager
// asks again (nothing else would tell it that the CRD came); zero otherwise (a change
// of the DNSEndpoint wakes it).
func dnsRequeue(d *dnsState, now time.Time) time.Duration {
	switch {
	case d == nil:
		return 0
	case errors.Is(d.readErr, dns.ErrNotSynced):
		return dnsRetry
	case d.notServed:
		return dns.CRDRecheck
	case !d.settleAt.IsZero():
		return max(d.settleAt.Sub(now), 0) + 10*time.Millisecond
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
		PublishedClusters:  d.current.Endpoint.Clusters,
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
		c.Message = fmt.Sprintf("DNSEndpoint %s exists and was not created by traffic-migration: nothing is published, and no drain starts, until it is deleted or renamed", name)
	case d.applyErr != nil:
		c.Reason = trafficv1alpha1.ReasonApplyFailed
		c.Message = fmt.Sprintf("Writing DNSEndpoint %s failed, retrying: %v", name, d.applyErr)
	case d.current == nil:
		c.Reason = trafficv1alpha1.ReasonNoPublishableCluster
		c.Message = "No cluster of the real Placement has the Gateway Programmed with an IP address: nothing is published yet" +
			unpublishable(d.plan)
	case !d.current.Applied():
		c.Reason = trafficv1alpha1.ReasonWaitingForExternalDNS
		c.Message = fmt.Sprintf("DNSEndpoint %s publishes %s; external-dns has not applied its generation %d yet (it applied %d): check that an external-dns runs with --source=crd and a domain filter that covers the hostnames",
			name, dns.PublishedMessage(d.current.Endpoint.Clusters), d.current.Generation, d.current.ObservedGeneration) + unpublishable(d.plan)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, trafficv1alpha1.ReasonDNSPublished
		c.Message = fmt.Sprintf("DNSEndpoint %s publishes %s, and external-dns applied it", name, dns.PublishedMessage(d.current.Endpoint.Clusters)) +
			unpublishable(d.plan)
	}
	return c, true
}

// unpublishable ends a DNSPublished message with the plan's clusters that cannot be
// published and the step of a switch under way.
func unpublishable(p dns.Plan) string {
	return dns.UnpublishableMessage(p.Unpublishable) + dns.StepMessage(p.Step)
}
