// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 holds the TrafficMigrationPolicy API of the traffic-migration add-on:
// a policy that keeps a cluster in a proxy Placement until Prometheus shows that little
// traffic still reaches it.
//
// +k8s:deepcopy-gen=package
// +groupName=traffic.open-cluster-management.io
package v1alpha1
