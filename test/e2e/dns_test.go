// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The story's DNS: the zone the test bed's CoreDNS serves, the name the story's policy
// publishes there (spec.dns), and the records' TTL; and what a draining cluster's row
// says while it is still published, or while no other cluster has the Gateway ready.
const (
	storyZone       = "e2e.test."
	storyHostname   = "gw.e2e.test"
	storyDNSTTL     = 3 * time.Second
	msgStillInDNS   = "still published in DNS"
	msgNoOtherReady = "no other cluster has the Gateway ready"
)

// dnsWithoutCRD creates a policy with spec.dns while the hub does not serve external-dns's
// DNSEndpoint CRD (the story installs it later): the manager says so in the policy's
// DNSPublished condition, and publishes nothing. The policy and its namespace are
// deleted at once, so that nothing asks the manager about DNSEndpoints again before the
// story installs the CRD.
func (a *addonTest) dnsWithoutCRD(t *testing.T) {
	ctx := t.Context()
	const ns = "dns-without-crd"
	if _, err := hub.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := hub.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	}()
	policy := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-crd", Namespace: ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: placementName},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewaySystem},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: "prometheus"},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric: trafficMetric, Selector: trafficSelector, ClusterLabel: trafficClusterKey, Window: "10s", MaxPercent: 5,
			},
			// No DNS server serves the name: external-dns alone would confirm a withdrawal.
			DNS: &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"no-crd.e2e.test"},
				Verify: &trafficv1alpha1.DNSVerification{Mode: trafficv1alpha1.DNSVerifyExternalDNS}},
		},
	}
	policies := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(ns)
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *trafficv1alpha1.TrafficMigrationPolicy
	eventually(t, "the policy's DNSPublished condition", func(ctx context.Context) error {
		p, err := policies.Get(ctx, policy.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != trafficv1alpha1.ReasonDNSEndpointCRDNotInstalled {
			return fmt.Errorf("DNSPublished %+v; status:\n%s", c, statusString(p))
		}
		got = p
		return nil
	})
	c := meta.FindStatusCondition(got.Status.Conditions, trafficv1alpha1.ConditionDNSPublished)
	if !strings.Contains(c.Message, "dnsendpoints.externaldns.k8s.io/v1alpha1") {
		t.Errorf("DNSPublished's message does not name the missing resource: %q", c.Message)
	}
	if d := got.Status.DNS; d != nil && len(d.PublishedClusters) != 0 {
		t.Errorf("status.dns publishes %v without a DNSEndpoint CRD", d.PublishedClusters)
	}
	if err := policies.Delete(ctx, policy.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startStoryDNS installs external-dns's DNSEndpoint CRD on the hub and starts the test
// bed's real DNS for the story's zone: CoreDNS serving it from etcd, written by
// external-dns's engine from the DNSEndpoints of gatewaySystem.
func startStoryDNS(t *testing.T) *testbed.DNS {
	t.Helper()
	ctx := t.Context()
	if err := testbed.InstallDNSEndpointCRD(ctx, bed.Hub.Config); err != nil {
		t.Fatal(err)
	}
	dns, err := bed.StartDNS(ctx, testbed.DNSOptions{Zones: []string{storyZone}, Namespace: gatewaySystem, OwnerID: "e2e-story"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dns.Stop)
	return dns
}

// answer asks CoreDNS for the story's name and returns its addresses as strings.
func answer(ctx context.Context, dns *testbed.DNS) ([]string, error) {
	addrs, err := dns.Lookup(ctx, storyHostname)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.String())
	}
	return out, nil
}

// answersOnly reports whether CoreDNS answers the story's name with exactly want.
func answersOnly(ctx context.Context, dns *testbed.DNS, want string) error {
	got, err := answer(ctx, dns)
	if err != nil {
		return err
	}
	if !slices.Equal(got, []string{want}) {
		return fmt.Errorf("CoreDNS answers %s with %v, want %s only", storyHostname, got, want)
	}
	return nil
}

// waitAnswer waits until CoreDNS answers the story's name with the address only.
func waitAnswer(t *testing.T, dns *testbed.DNS, address string) {
	t.Helper()
	if _, err := netip.ParseAddr(address); err != nil {
		t.Fatalf("Traefik's address %q: %v", address, err)
	}
	eventually(t, "CoreDNS answering "+storyHostname+" with "+address+" only", func(ctx context.Context) error {
		return answersOnly(ctx, dns, address)
	})
}

// dnsPublishes checks that the policy's DNSPublished condition is True and its
// status.dns publishes exactly the clusters.
func dnsPublishes(p *trafficv1alpha1.TrafficMigrationPolicy, clusters ...string) error {
	if c := meta.FindStatusCondition(p.Status.Conditions, trafficv1alpha1.ConditionDNSPublished); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("DNSPublished %+v", c)
	}
	if d := p.Status.DNS; d == nil || d.EndpointName != policyName || !slices.Equal(d.PublishedClusters, clusters) || d.ObservedGeneration != d.Generation {
		return fmt.Errorf("status.dns %+v, want DNSEndpoint %s publishing %v, applied", d, policyName, clusters)
	}
	return nil
}
