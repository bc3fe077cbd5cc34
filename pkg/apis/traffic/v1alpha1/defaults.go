// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// Defaults of trafficShare, as the CRD declares them (the +kubebuilder:default markers
// of TrafficShare; a test keeps the two the same).
const (
	// DefaultShareClusterLabel is the default of trafficShare.clusterLabel.
	DefaultShareClusterLabel = "cluster"
	// DefaultShareWindow is the default of trafficShare.window.
	DefaultShareWindow = "5m"
)

// WithDefaults returns the trafficShare with the CRD's defaults in its unset fields,
// so that one the API server never defaulted (a manifest given to check, an object
// of a fake client) is read the same by every reader.
func (t TrafficShare) WithDefaults() TrafficShare {
	if t.ClusterLabel == "" {
		t.ClusterLabel = DefaultShareClusterLabel
	}
	if t.Window == "" {
		t.Window = DefaultShareWindow
	}
	return t
}
