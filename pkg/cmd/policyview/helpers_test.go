// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview/policyviewtest"
)

var (
	now              = policyviewtest.Now
	at               = policyviewtest.At
	condition        = policyviewtest.Condition
	newPolicy        = policyviewtest.NewPolicy
	newDecision      = policyviewtest.NewDecision
	newAddon         = policyviewtest.NewAddon
	readyAddon       = policyviewtest.ReadyAddon
	gatewayCondition = policyviewtest.GatewayCondition
	diff             = policyviewtest.Diff
)

const (
	testNamespace = policyviewtest.Namespace
	testPolicy    = policyviewtest.Policy
	testProxy     = policyviewtest.Proxy
)

// objects are the objects of the test policy with the given decisions and add-ons.
func objects(p *trafficv1alpha1.TrafficMigrationPolicy, decisions []*clusterv1beta1.PlacementDecision, addons ...*addonv1alpha1.ManagedClusterAddOn) Objects {
	return Objects{Policy: p, Detail: true, Decisions: decisions, Addons: policyviewtest.Addons(addons...)}
}
