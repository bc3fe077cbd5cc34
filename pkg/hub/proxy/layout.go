// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package proxy lays out a Placement's decision groups as PlacementDecision objects the
// way OCM's placement scheduler does, and reads them back. The proxy Placement's
// decisions are built with it, so consumers that read them by label (sdk-go's
// PlacementDecisionClustersTracker, the add-on manager, ManifestWorkReplicaSet) find
// what they find on a scheduled Placement.
package proxy

import (
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
)

// MaxClustersPerDecision is how many clusters one PlacementDecision lists at most, as in
// OCM's scheduler.
const MaxClustersPerDecision = 100

// DecisionName is the name of a Placement's n-th PlacementDecision (n counts from 1
// across all groups, as OCM names them).
func DecisionName(placement string, n int) string {
	return fmt.Sprintf("%s-decision-%d", placement, n)
}

// Groups reads the decision groups of a Placement from its PlacementDecisions: the
// clusters of the decisions that carry the same decision-group-index, sorted by index,
// each with its clusters sorted and unique. A decision without a readable group index
// counts as group 0, as sdk-go's tracker reads it.
func Groups(decisions []*clusterv1beta1.PlacementDecision) []decision.Group {
	byIndex := map[int32]*decision.Group{}
	clusters := map[int32]sets.Set[string]{}
	for _, d := range decisions {
		index := int32(0)
		if v, err := strconv.ParseInt(d.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32); err == nil && v >= 0 {
			index = int32(v)
		}
		g, ok := byIndex[index]
		if !ok {
			g = &decision.Group{Index: index, Name: d.Labels[clusterv1beta1.DecisionGroupNameLabel]}
			byIndex[index] = g
			clusters[index] = sets.New[string]()
		}
		for _, c := range d.Status.Decisions {
			if c.ClusterName != "" {
				clusters[index].Insert(c.ClusterName)
			}
		}
	}
	groups := make([]decision.Group, 0, len(byIndex))
	for index, g := range byIndex {
		g.Clusters = sets.List(clusters[index])
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b decision.Group) int { return int(a.Index) - int(b.Index) })
	return groups
}

// Clusters reads the clusters of a Placement from its PlacementDecisions, whatever
// their groups: sorted, each once.
func Clusters(decisions []*clusterv1beta1.PlacementDecision) []string {
	clusters := sets.New[string]()
	for _, d := range decisions {
		for _, c := range d.Status.Decisions {
			if c.ClusterName != "" {
				clusters.Insert(c.ClusterName)
			}
		}
	}
	return sets.List(clusters)
}

// Decisions lays out groups as the PlacementDecisions of the Placement placement in
// namespace: each group's clusters, sorted, in slices of at most
// MaxClustersPerDecision, named <placement>-decision-<n> with n counting from 1 over
// all groups in index order, labelled with the placement's name and the group's index
// and name. A group without clusters still gets one empty decision, and so does a
// Placement without groups, as OCM's scheduler writes them. The objects carry their
// decisions in Status, which is written through the status subresource.
func Decisions(namespace, placement string, groups []decision.Group) []*clusterv1beta1.PlacementDecision {
	if len(groups) == 0 {
		groups = []decision.Group{{Index: 0}}
	}
	groups = slices.Clone(groups)
	slices.SortFunc(groups, func(a, b decision.Group) int { return int(a.Index) - int(b.Index) })
	var out []*clusterv1beta1.PlacementDecision
	for _, g := range groups {
		clusters := slices.Sorted(slices.Values(g.Clusters))
		clusters = slices.Compact(clusters)
		for start := 0; start == 0 || start < len(clusters); start += MaxClustersPerDecision {
			chunk := clusters[start:min(start+MaxClustersPerDecision, len(clusters))]
			d := &clusterv1beta1.PlacementDecision{
				ObjectMeta: metav1.ObjectMeta{
					Name:      DecisionName(placement, len(out)+1),
					Namespace: namespace,
					Labels: map[string]string{
						clusterv1beta1.PlacementLabel:          placement,
						clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(int(g.Index)),
						clusterv1beta1.DecisionGroupNameLabel:  g.Name,
					},
				},
				Status: clusterv1beta1.PlacementDecisionStatus{Decisions: make([]clusterv1beta1.ClusterDecision, 0, len(chunk))},
			}
			for _, c := range chunk {
				d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
			}
			out = append(out, d)
		}
	}
	return out
}

// GroupStatus is the decisionGroups of a Placement's status for the decisions that
// Decisions laid out.
func GroupStatus(decisions []*clusterv1beta1.PlacementDecision) []clusterv1beta1.DecisionGroupStatus {
	var out []clusterv1beta1.DecisionGroupStatus
	for _, d := range decisions {
		index, _ := strconv.Atoi(d.Labels[clusterv1beta1.DecisionGroupIndexLabel])
		if len(out) == 0 || out[len(out)-1].DecisionGroupIndex != int32(index) {
			out = append(out, clusterv1beta1.DecisionGroupStatus{
				DecisionGroupIndex: int32(index),
				DecisionGroupName:  d.Labels[clusterv1beta1.DecisionGroupNameLabel],
			})
		}
		g := &out[len(out)-1]
		g.Decisions = append(g.Decisions, d.Name)
		g.ClustersCount += int32(len(d.Status.Decisions))
	}
	return out
}
