// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"encoding/json"
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestTrafficShareDefaultsMatchCRD: WithDefaults fills in what the CRD's defaults
// would, and keeps what is set.
func TestTrafficShareDefaultsMatchCRD(t *testing.T) {
	b, err := os.ReadFile("../../../../manifests/crd/traffic.open-cluster-management.io_trafficmigrationpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties map[string]struct {
								Properties map[string]struct {
									Default json.RawMessage `json:"default"`
								} `json:"properties"`
							} `json:"properties"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	fields := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["trafficShare"].Properties
	defaulted := TrafficShare{}.WithDefaults()
	for field, got := range map[string]string{"clusterLabel": defaulted.ClusterLabel, "window": defaulted.Window} {
		var want string
		if err := json.Unmarshal(fields[field].Default, &want); err != nil {
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
