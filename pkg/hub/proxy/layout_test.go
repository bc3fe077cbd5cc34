// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package proxy

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

func clusterNames(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

// summary is what a test compares of a decision: name, labels and cluster count.
type summary struct {
	Name, Index, GroupName string
	Clusters               int
	First                  string
}

func summarize(ds []*clusterv1beta1.PlacementDecision) []summary {
	var out []summary
	for _, d := range ds {
		s := summary{Name: d.Name, Index: d.Labels[clusterv1beta1.DecisionGroupIndexLabel], GroupName: d.Labels[clusterv1beta1.DecisionGroupNameLabel], Clusters: len(d.Status.Decisions)}
		if d.Labels[clusterv1beta1.PlacementLabel] != "gw-proxy" || d.Namespace != "ns" {
			s.Name = "WRONG PLACEMENT LABEL OR NAMESPACE " + s.Name
		}
		if len(d.Status.Decisions) > 0 {
			s.First = d.Status.Decisions[0].ClusterName
		}
		out = append(out, s)
	}
	return out
}

func TestDecisions(t *testing.T) {
	tests := map[string]struct {
		groups []decision.Group
		want   []summary
	}{
		"no groups: one empty decision": {
			want: []summary{{Name: "gw-proxy-decision-1", Index: "0"}},
		},
		"one group, unsorted and duplicated clusters": {
			groups: []decision.Group{{Clusters: []string{"c2", "c1", "c2"}}},
			want:   []summary{{Name: "gw-proxy-decision-1", Index: "0", Clusters: 2, First: "c1"}},
		},
		"250 clusters in one group: three decisions": {
			groups: []decision.Group{{Clusters: clusterNames("c", 250)}},
			want: []summary{
				{Name: "gw-proxy-decision-1", Index: "0", Clusters: 100, First: "c000"},
				{Name: "gw-proxy-decision-2", Index: "0", Clusters: 100, First: "c100"},
				{Name: "gw-proxy-decision-3", Index: "0", Clusters: 50, First: "c200"},
			},
		},
		"groups numbered across, in index order, empty group kept": {
			groups: []decision.Group{
				{Index: 2, Name: "canary", Clusters: []string{"z"}},
				{Index: 0, Name: "prod", Clusters: clusterNames("p", 101)},
				{Index: 1, Name: "empty"},
			},
			want: []summary{
				{Name: "gw-proxy-decision-1", Index: "0", GroupName: "prod", Clusters: 100, First: "p000"},
				{Name: "gw-proxy-decision-2", Index: "0", GroupName: "prod", Clusters: 1, First: "p100"},
				{Name: "gw-proxy-decision-3", Index: "1", GroupName: "empty"},
				{Name: "gw-proxy-decision-4", Index: "2", GroupName: "canary", Clusters: 1, First: "z"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Decisions("ns", "gw-proxy", tc.groups)
			if s := summarize(got); !reflect.DeepEqual(s, tc.want) {
				t.Errorf("got %+v\nwant %+v", s, tc.want)
			}
			// What Decisions writes, Groups reads back (empty groups aside).
			var nonEmpty []decision.Group
			for _, g := range Groups(got) {
				if len(g.Clusters) > 0 {
					nonEmpty = append(nonEmpty, g)
				}
			}
			var wantGroups []decision.Group
			for _, g := range tc.groups {
				if len(g.Clusters) > 0 {
					g.Clusters = slices.Compact(slices.Sorted(slices.Values(g.Clusters)))
					wantGroups = append(wantGroups, g)
				}
			}
			slices.SortFunc(wantGroups, func(a, b decision.Group) int { return int(a.Index) - int(b.Index) })
			if !reflect.DeepEqual(nonEmpty, wantGroups) {
				t.Errorf("round trip: got %+v, want %+v", nonEmpty, wantGroups)
			}
		})
	}
}

func TestGroups(t *testing.T) {
	decision := func(name, index, group string, clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if index != "" {
			d.Labels[clusterv1beta1.DecisionGroupIndexLabel] = index
		}
		d.Labels[clusterv1beta1.DecisionGroupNameLabel] = group
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	got := Groups([]*clusterv1beta1.PlacementDecision{
		decision("p-decision-3", "1", "b", "c3"),
		decision("p-decision-1", "0", "a", "c2", "c1"),
		decision("p-decision-2", "0", "a", "c1", "c0", ""),
		decision("odd", "not-a-number", "", "x"),
	})
	want := []struct {
		Index    int32
		Name     string
		Clusters []string
	}{
		{0, "a", []string{"c0", "c1", "c2", "x"}},
		{1, "b", []string{"c3"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Index != want[i].Index || got[i].Name != want[i].Name || !reflect.DeepEqual(got[i].Clusters, want[i].Clusters) {
			t.Errorf("group %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestGroupStatus(t *testing.T) {
	ds := Decisions("ns", "gw-proxy", []decision.Group{
		{Index: 0, Name: "prod", Clusters: clusterNames("p", 150)},
		{Index: 1, Name: "canary", Clusters: []string{"c"}},
	})
	got := GroupStatus(ds)
	want := []clusterv1beta1.DecisionGroupStatus{
		{DecisionGroupIndex: 0, DecisionGroupName: "prod", Decisions: []string{"gw-proxy-decision-1", "gw-proxy-decision-2"}, ClustersCount: 150},
		{DecisionGroupIndex: 1, DecisionGroupName: "canary", Decisions: []string{"gw-proxy-decision-3"}, ClustersCount: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestClusters(t *testing.T) {
	ds := Decisions("ns", "gw-proxy", []decision.Group{
		{Index: 0, Name: "prod", Clusters: clusterNames("p", 150)},
		{Index: 1, Name: "canary", Clusters: []string{"c", "p001"}},
	})
	ds = append(ds, &clusterv1beta1.PlacementDecision{Status: clusterv1beta1.PlacementDecisionStatus{
		Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: ""}, {ClusterName: "a"}},
	}})
	got := Clusters(ds)
	want := append([]string{"a", "c"}, clusterNames("p", 150)...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %d clusters %v...\nwant %d %v...", len(got), got[:min(3, len(got))], len(want), want[:3])
	}
	if got := Clusters(nil); len(got) != 0 {
		t.Errorf("no decisions: got %v, want none", got)
	}
}
