// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// TestLargePlacement: a real Placement of 250 clusters is mirrored in PlacementDecisions
// of at most 100 clusters each, named, split and labelled as OCM's scheduler does for
// the real one, and the proxy Placement's status counts them as the real one's does.
// A real Placement with two decision groups (selected by a label) is mirrored group by
// group: the same group indexes and names on the same slices of clusters.
// Rules: 1 (every real cluster is in the proxy), 10 (the proxy Placement's status);
// docs/design.md section 3 (at most 100 per object, decision groups mirrored).
func TestLargePlacement(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	ns := f.namespace(t, "large")
	member, zone := "large-"+ns, "zone-"+ns
	names := make([]string, 250)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", ns, i)
	}
	start := time.Now()
	f.createManyClusters(t, names, func(i int) map[string]string {
		if i < 150 {
			return map[string]string{member: "true", zone: "east"}
		}
		return map[string]string{member: "true", zone: "west"}
	})
	t.Logf("created %d ManagedClusters in %s", len(names), time.Since(start).Round(time.Millisecond))

	f.placement(t, ns, "flat", map[string]string{member: "true"})
	grouped := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: "grouped", Namespace: ns},
		Spec: clusterv1beta1.PlacementSpec{
			Predicates: fixture.SelectorPredicates(map[string]string{member: "true"}),
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				DecisionGroups: []clusterv1beta1.DecisionGroup{
					{GroupName: "east", ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{zone: "east"}}}},
					{GroupName: "west", ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{zone: "west"}}}},
				},
			}},
		},
	}
	if _, err := f.Cluster.ClusterV1beta1().Placements(ns).Create(t.Context(), grouped, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Placement grouped: %v", err)
	}
	f.waitForClusters(t, ns, "flat", names, 60*time.Second)
	f.waitForClusters(t, ns, "grouped", names, 60*time.Second)
	f.createPolicy(t, idlePolicy(ns, "flat"))
	f.createPolicy(t, idlePolicy(ns, "grouped"))

	for _, tc := range []struct {
		placement string
		// want are the proxy's decisions in order: clusters, group index and name.
		want []wantDecision
	}{
		{"flat", []wantDecision{{100, "0", ""}, {100, "0", ""}, {50, "0", ""}}},
		{"grouped", []wantDecision{{100, "0", "east"}, {50, "0", "east"}, {100, "1", "west"}}},
	} {
		proxy := tc.placement + "-proxy"
		f.waitForClusters(t, ns, proxy, names, 60*time.Second)
		var status clusterv1beta1.PlacementStatus
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := f.Cluster.ClusterV1beta1().Placements(ns).Get(ctx, proxy, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			status = p.Status
			return p.Status.NumberOfSelectedClusters == int32(len(names)), nil
		})
		if err != nil {
			t.Fatalf("proxy Placement %s: want numberOfSelectedClusters %d, status %+v", proxy, len(names), status)
		}
		f.compareProxyDecisions(t, ns, tc.placement, proxy, tc.want)
	}
}

// wantDecision is what one proxy PlacementDecision should hold.
type wantDecision struct {
	clusters              int
	groupIndex, groupName string
}

// compareProxyDecisions checks that the proxy's decisions are laid out as want and as the
// real Placement's decisions are (decision n of one holds the clusters and group labels
// of decision n of the other), and that the two Placements' statuses agree.
func (f *fleet) compareProxyDecisions(t *testing.T, ns, real, proxy string, want []wantDecision) {
	t.Helper()
	ctx := t.Context()
	decisions := func(placement string) map[string]clusterv1beta1.PlacementDecision {
		list, err := f.Cluster.ClusterV1beta1().PlacementDecisions(ns).List(ctx, metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]clusterv1beta1.PlacementDecision{}
		for _, d := range list.Items {
			byName[d.Name] = d
		}
		return byName
	}
	clusterNames := func(d clusterv1beta1.PlacementDecision) []string {
		var out []string
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
		return out
	}
	realDecisions, proxyDecisions := decisions(real), decisions(proxy)
	if len(realDecisions) != len(want) || len(proxyDecisions) != len(want) {
		t.Errorf("%s: want %d decisions in the real and the proxy Placement, got %d and %d", real, len(want), len(realDecisions), len(proxyDecisions))
	}
	for i, w := range want {
		rd, rok := realDecisions[fmt.Sprintf("%s-decision-%d", real, i+1)]
		pd, pok := proxyDecisions[fmt.Sprintf("%s-decision-%d", proxy, i+1)]
		if !rok || !pok {
			t.Errorf("%s: decision %d missing (real %t, proxy %t)", real, i+1, rok, pok)
			continue
		}
		for _, label := range []string{clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel} {
			rv, rhas := rd.Labels[label]
			pv, phas := pd.Labels[label]
			if rv != pv || rhas != phas {
				t.Errorf("%s: label %s: real decision %d has %q (%t), the proxy's %q (%t)", real, label, i+1, rv, rhas, pv, phas)
			}
		}
		if got := (wantDecision{len(pd.Status.Decisions), pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], pd.Labels[clusterv1beta1.DecisionGroupNameLabel]}); got != w {
			t.Errorf("%s: proxy decision %d holds %+v, want %+v", real, i+1, got, w)
		}
		if rc, pc := clusterNames(rd), clusterNames(pd); !slices.Equal(rc, pc) {
			t.Errorf("%s: decision %d lists other clusters in the proxy (%d) than in the real Placement (%d)", real, i+1, len(pc), len(rc))
		}
		if pd.Labels[clusterv1beta1.PlacementLabel] != proxy {
			t.Errorf("%s: proxy decision %d labelled for Placement %q", real, i+1, pd.Labels[clusterv1beta1.PlacementLabel])
		}
	}

	placements := f.Cluster.ClusterV1beta1().Placements(ns)
	rp, err := placements.Get(ctx, real, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := placements.Get(ctx, proxy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Status.NumberOfSelectedClusters != pp.Status.NumberOfSelectedClusters {
		t.Errorf("%s: numberOfSelectedClusters: real %d, proxy %d", real, rp.Status.NumberOfSelectedClusters, pp.Status.NumberOfSelectedClusters)
	}
	mirrored := slices.Clone(rp.Status.DecisionGroups)
	for i := range mirrored {
		mirrored[i].Decisions = nil
		for _, name := range rp.Status.DecisionGroups[i].Decisions {
			mirrored[i].Decisions = append(mirrored[i].Decisions, proxy+strings.TrimPrefix(name, real))
		}
	}
	if len(mirrored) == 0 || !sameJSON(mirrored, pp.Status.DecisionGroups) {
		t.Errorf("%s: the proxy's decisionGroups do not mirror the real ones:\nreal  %+v\nproxy %+v", real, rp.Status.DecisionGroups, pp.Status.DecisionGroups)
	}
}

// idlePolicy is a policy that nothing ever checks: its real Placement's clusters do not
// leave. The Secret it names need not exist.
func idlePolicy(ns, placement string) *trafficv1alpha1.TrafficMigrationPolicy {
	return &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: placement, Namespace: ns},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: placement},
			TargetRef:        trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewayNamespace},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: "prometheus"},
			TrafficShare:     &trafficv1alpha1.TrafficShare{Metric: "test_gateway_requests_total", Window: "4s", MaxPercent: 5},
		},
	}
}

// createManyClusters creates ManagedClusters, a few at a time, and deletes them all when
// the test ends. Unlike managedCluster it makes no namespaces: nothing reports for
// these clusters.
func (f *fleet) createManyClusters(t *testing.T, names []string, labelsOf func(i int) map[string]string) {
	t.Helper()
	ctx := context.Background()
	client := f.Cluster.ClusterV1().ManagedClusters()
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(names); i += 4 {
					if err := client.Delete(ctx, names[i], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						t.Errorf("delete ManagedCluster %s: %v", names[i], err)
					}
				}
			}()
		}
		wg.Wait()
	})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(names) && !t.Failed(); i += 4 {
				mc := &clusterv1.ManagedCluster{
					ObjectMeta: metav1.ObjectMeta{Name: names[i], Labels: labelsOf(i)},
					Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
				}
				if _, err := client.Create(ctx, mc, metav1.CreateOptions{}); err != nil {
					t.Errorf("create ManagedCluster %s: %v", names[i], err)
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
