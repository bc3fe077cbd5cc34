// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"strings"
	"testing"

	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
)

func TestRenderFleet(t *testing.T) {
	v := policyview.Fleet{Clusters: []policyview.FleetCluster{
		{Name: "c1", Agent: policyview.AgentAvailable, Gateways: []policyview.FleetGateway{{Gateway: "apps.other"}, {Gateway: "gateway-system.gw", Ready: true}},
			Labels: "cluster=us-east-1,cluster_name=c1", Draining: "Draining", DrainingFor: "draining for policy ns/p (Gateway gateway-system/gw)"},
		{Name: "c2", Agent: policyview.AgentNotAvailable},
		{Name: "c3", Agent: policyview.AgentNotEnabled},
	}}
	var b bytes.Buffer
	if err := renderFleet(&b, v, false, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CLUSTER   AGENT", "apps.other NotReady, gateway-system.gw Ready", "c1: draining for policy ns/p (Gateway gateway-system/gw)", "c3        NotEnabled"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := renderFleet(&b, v, true, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "c1    Available") || strings.Contains(b.String(), "CLUSTER") {
		t.Errorf("--no-headers -o wide printed:\n%s", b.String())
	}
}
