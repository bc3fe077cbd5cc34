// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"encoding/json"
	"testing"
)

// TestTrafficShareDefaultsMatchCRD: WithDefaults fills in what the CRD's defaults
// would, and keeps what is set.
func TestTrafficShareDefaultsMatchCRD(t *testing.T) {
	fields := crdSpec(t).Properties["trafficShare"].Properties
	defaulted := TrafficShare{}.WithDefaults()
	for field, got := range map[string]string{"clusterLabel": defaulted.ClusterLabel, "window": defaulted.Window} {
		var want string
		if fields[field].Default == nil {
			t.Fatalf("the CRD has no default of trafficShare.%s", field)
		}
		if err := json.Unmarshal(fields[field].Default.Raw, &want); err != nil {
			t.Fatalf("the CRD's default of trafficShare.%s: %v", field, err)
		}
		if got != want {
			t.Errorf("trafficShare.%s: WithDefaults gives %q, the CRD %q", field, got, want)
		}
	}
	set := TrafficShare{ClusterLabel: "region", Window: "1m"}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set fields: %+v", got)
	}
}
