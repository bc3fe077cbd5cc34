// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hub

import "testing"

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns1/events":                                                                          "events",
		"/apis/events.k8s.io/v1/namespaces/ns1/events":                                                           "events",
		"/apis/cluster.open-cluster-management.io/v1beta1/namespaces/ns1/placementdecisions":                     "placementdecisions",
		"/apis/cluster.open-cluster-management.io/v1beta1/namespaces/ns1/placementdecisions/p-decision-1/status": "placementdecisions/status",
		"/apis/traffic.open-cluster-management.io/v1alpha1/namespaces/ns1/trafficmigrationpolicies/p1":           "trafficmigrationpolicies",
		"/apis/cluster.open-cluster-management.io/v1/managedclusters/c1":                                         "managedclusters",
		"/api/v1/namespaces/ns1":                               "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/ns1/leases/l": "leases",
		"/healthz": "other",
		"/api/v1":  "other",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}
