// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package strategies

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// followEvery is how often the follower looks at the Placements and the Gateways.
const followEvery = 200 * time.Millisecond

// dnsFollower is the DNS automation of the rows without spec.dns, as a user has one:
// it publishes, in a DNSEndpoint of the row's name that external-dns's engine applies,
// the addresses of the clusters of the row's REAL Placement whose Gateway is
// Programmed, has accepted the row's HTTPRoute (as external-dns's gateway-httproute
// source publishes a route's hostname once its Gateway accepted it) and answers the
// row's hostname (as a DNS with health checks publishes only an endpoint that answers:
// Traefik applies a route a moment after it accepts it), and while no cluster is,
// keeps what it published (it never withdraws the last
// serving cluster, as the manager does with spec.dns). So every row's DNS follows its
// real Placement, whatever its Gateway follows.
type dnsFollower struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func startDNSFollower(t *testing.T, h *fixture.Fleet, traefik map[string]*testbed.Traefik, ttl time.Duration, rs []*row) *dnsFollower {
	t.Helper()
	client, err := dynamic.NewForConfig(fastConfig(bed.Hub.Config))
	if err != nil {
		t.Fatal(err)
	}
	gateways := map[string]gatewayclient.Interface{}
	for c := range traefik {
		if gateways[c], err = gatewayclient.NewForConfig(fastConfig(bed.Spokes[c].Config)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &dnsFollower{cancel: cancel}
	t.Cleanup(f.stop)
	published := map[string][]string{}
	f.done.Go(func() {
		tick := time.NewTicker(followEvery)
		defer tick.Stop()
		for {
			serving := map[string][]string{} // by cluster, the Gateways that serve their route
			for c, gw := range gateways {
				serving[c] = servingGateways(ctx, gw)
			}
			for _, r := range rs {
				if r.specDNS {
					continue
				}
				decided, err := fixture.DecisionClusters(ctx, h.Cluster, namespace, r.name)
				if err != nil {
					continue
				}
				var addrs []string
				for _, c := range decided {
					url := "http://" + net.JoinHostPort(traefik[c].Address, strconv.Itoa(r.port)) + "/"
					if slices.Contains(serving[c], r.gateway()) && served(ctx, url, r.hostname()) == nil {
						addrs = append(addrs, traefik[c].Address)
					}
				}
				slices.Sort(addrs)
				if len(addrs) == 0 || slices.Equal(addrs, published[r.name]) {
					continue
				}
				if err := publish(ctx, client, r, addrs, ttl); err != nil {
					t.Logf("DNS follower: %s: %v", r.name, err)
					continue
				}
				published[r.name] = addrs
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return f
}

// servingGateways lists the Gateways of a cluster that are Programmed and have
// accepted an HTTPRoute.
func servingGateways(ctx context.Context, gw gatewayclient.Interface) []string {
	gws, err := gw.GatewayV1().Gateways(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	routes, err := gw.GatewayV1().HTTPRoutes(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, g := range gws.Items {
		if !meta.IsStatusConditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)) {
			continue
		}
		accepted := slices.ContainsFunc(routes.Items, func(r gatewayv1.HTTPRoute) bool {
			return slices.ContainsFunc(r.Status.Parents, func(p gatewayv1.RouteParentStatus) bool {
				return string(p.ParentRef.Name) == g.Name && meta.IsStatusConditionTrue(p.Conditions, string(gatewayv1.RouteConditionAccepted))
			})
		})
		if accepted {
			out = append(out, g.Name)
		}
	}
	return out
}

// stop stops the follower; it leaves the DNSEndpoints as they are.
func (f *dnsFollower) stop() {
	f.cancel()
	f.done.Wait()
}

// publish writes the row's DNSEndpoint: its hostname's A records.
func publish(ctx context.Context, client dynamic.Interface, r *row, addrs []string, ttl time.Duration) error {
	record := dns.Record{DNSName: r.hostname(), RecordType: "A", TTL: int64(ttl.Seconds()), Targets: addrs}
	endpointsClient := client.Resource(dns.Resource).Namespace(namespace)
	obj, err := endpointsClient.Get(ctx, r.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = endpointsClient.Create(ctx, fixture.DNSEndpoint(namespace, r.name, record), metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(obj.Object, fixture.DNSEndpointRecords(record), "spec", "endpoints"); err != nil {
		return err
	}
	_, err = endpointsClient.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}
