// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hub

import (
	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// trimForCache is the transform of every cache of the manager. It drops what nothing
// in the manager reads, before the object is stored:
//   - managedFields, often the largest part of an object;
//   - of a ManagedCluster, all but its metadata, its spec's acceptance and taints, and
//     its status's conditions and version. A registered cluster's CA bundle, capacity,
//     allocatable and cluster claims make up most of its size, and a hub caches one
//     per cluster. The policy controller reads only which ManagedClusters exist; the
//     add-on framework reads their labels, annotations, Available condition and
//     Kubernetes version. Without the framework (--controllers=policy) the manager
//     lists the ManagedClusters' metadata alone, and this drops its managed fields.
//
// Nothing writes a cached ManagedCluster back (the manager never writes
// ManagedClusters), so no update can lose what the cache left out. A change of a
// dropped field still arrives as an update event, as before.
func trimForCache(obj any) (any, error) {
	if o, err := meta.Accessor(obj); err == nil {
		o.SetManagedFields(nil)
	}
	if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
		mc.Spec.ManagedClusterClientConfigs = nil
		mc.Status = clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions, Version: mc.Status.Version}
	}
	return obj, nil
}
