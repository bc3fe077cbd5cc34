// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// placementsStrategy is the chart's addon.installStrategy that installs the agent on
// the clusters of agentsPlacement.
var placementsStrategy = map[string]any{"addon": map[string]any{"installStrategy": map[string]any{
	"type":       "Placements",
	"placements": []any{map[string]any{"name": agentsPlacement, "namespace": policyNamespace}},
}}}

// installByPlacement turns the chart's install strategy to Placements, naming a
// Placement of the clusters labelled agentsLabel, which selects none at first. When
// cluster1 gets the label, OCM's addon manager enables the add-on there, with no
// `clusteradm addon enable`: its ManagedClusterAddOn appears, and the agent's
// Deployment runs on cluster1's node and makes the add-on Available. When the label
// goes, the agent goes. cluster2, never selected, never gets the add-on.
func installByPlacement(t *testing.T) {
	ctx := t.Context()
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: agentsPlacement, Namespace: policyNamespace},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: fixture.SelectorPredicates(map[string]string{agentsLabel: "true"})},
	}
	if _, err := hub.Cluster.ClusterV1beta1().Placements(policyNamespace).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	upgradeChart(t, placementsStrategy)
	cma, err := hub.Addon.AddonV1alpha1().ClusterManagementAddOns().Get(ctx, addonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := cma.Spec.InstallStrategy; s.Type != addonv1alpha1.AddonInstallStrategyPlacements || len(s.Placements) != 1 ||
		s.Placements[0].Name != agentsPlacement || s.Placements[0].Namespace != policyNamespace {
		t.Fatalf("ClusterManagementAddOn install strategy %+v, want the Placement %s/%s", s, policyNamespace, agentsPlacement)
	}

	setClusterLabel(t, cluster1, agentsLabel, "true")
	waitDecisions(t, agentsPlacement, cluster1)
	eventually(t, "the ManagedClusterAddOn of cluster1, made by OCM's addon manager", func(ctx context.Context) error {
		mca, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster1).Get(ctx, addonName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, o := range mca.OwnerReferences {
			if o.Kind == "ClusterManagementAddOn" && o.Name == addonName {
				return nil
			}
		}
		return fmt.Errorf("owners %+v", mca.OwnerReferences)
	})
	if err := bed.Spokes[cluster1].WaitDeploymentAvailable(ctx, testbed.AgentAddonNamespace, agentDeployment); err != nil {
		t.Fatal(err)
	}
	waitAddonCondition(t, cluster1, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
	if _, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster2).Get(ctx, addonName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster2, which the Placement does not select, has the add-on: %v", err)
	}

	// The agent follows the Placement: out of it, cluster1 loses the add-on.
	setClusterLabel(t, cluster1, agentsLabel, "")
	waitDecisions(t, agentsPlacement)
	eventually(t, "the add-on gone from cluster1 once the Placement no longer selects it", func(ctx context.Context) error {
		_, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster1).Get(ctx, addonName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("its ManagedClusterAddOn: %v", err)
		}
		_, err = spoke1.AppsV1().Deployments(testbed.AgentAddonNamespace).Get(ctx, agentDeployment, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return errors.Join(errors.New("the agent's Deployment is still on cluster1"), err)
		}
		return nil
	})
}

// waitAddonCondition waits until the add-on's ManagedClusterAddOn of a cluster has a
// condition of the type, True.
func waitAddonCondition(t *testing.T, cluster, condType string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s True on the add-on of %s", condType, cluster), func(ctx context.Context) error {
		mca, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addonName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(mca.Status.Conditions, condType) {
			return fmt.Errorf("conditions %+v", mca.Status.Conditions)
		}
		return nil
	})
}
