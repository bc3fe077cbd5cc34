// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"strings"
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestChartNotes: what `helm install` prints after installing the chart (its
// NOTES.txt), rendered by the real helm against the hub (a dry run: helm renders the
// notes only when it installs): the next steps with the release's namespace and
// image, enabling the agent with clusteradm (or, installed by Placement, the
// Placements that install it), the Prometheus Secret, a first policy, `kubectl
// traffic-migration status`, and the docs by name; never a link outside the release.
func TestChartNotes(t *testing.T) {
	dir, err := testbed.ChartDir()
	if err != nil {
		t.Fatal(err)
	}
	ns := bed.Hub.Namespace(t, "chart-notes")
	notes := func(t *testing.T, args ...string) string {
		t.Helper()
		// The bed's hub has the CRD already, outside any release: helm would refuse
		// to take it over.
		out, err := bed.Helm(t.Context(), append([]string{"install", "traffic-migration", dir, "--namespace", ns, "--dry-run=client", "--set", "crds.enabled=false"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, text, ok := strings.Cut(out, "\nNOTES:\n")
		if !ok {
			t.Fatalf("helm install printed no NOTES:\n%s", out)
		}
		return text
	}
	mustSay := func(t *testing.T, text string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("the notes lack %q:\n%s", w, text)
			}
		}
	}

	image, err := testbed.ChartImage()
	if err != nil {
		t.Fatal(err)
	}
	text := notes(t)
	mustSay(t, text,
		"installed in the namespace "+ns,
		image,
		"kubectl -n "+ns+" rollout status deployment/traffic-migration-manager",
		"kubectl -n "+ns+" rollout status deployment/traffic-migration-addon-manager",
		"clusteradm addon enable --names traffic-migration --clusters cluster1,cluster2",
		"kubectl get managedclusteraddons -A --field-selector metadata.name=traffic-migration",
		"(in\n   open-cluster-management-agent-addon)",
		"kubectl -n gateway-system create secret generic prometheus",
		"kubectl traffic-migration check -f policy.yaml",
		"kubectl traffic-migration status -n gateway-system",
		"docs/first-migration.md", "docs/commands.md", "docs/troubleshooting.md",
		"Users bound to the ClusterRole view",
	)
	for _, never := range []string{"http://", "../", "<no value>"} {
		if strings.Contains(strings.ReplaceAll(text, "https://prometheus.example.com", ""), never) {
			t.Errorf("the notes say %q:\n%s", never, text)
		}
	}

	text = notes(t, "--set", "addon.installStrategy.type=Placements",
		"--set", "addon.installStrategy.placements[0].name=gateway-proxy", "--set", "addon.installStrategy.placements[0].namespace=gateway-system",
		"--set", "manager.prometheusAllowlist[0]=*.monitoring.svc", "--set", "rbac.aggregateToDefaultRoles=false",
		"--set", "agentImage=registry.example/tm-agent:1")
	mustSay(t, text, "gateway-system/gateway-proxy", "lets policies query only: *.monitoring.svc", "the agents registry.example/tm-agent:1")
	for _, never := range []string{"clusteradm addon enable", "Users bound to the ClusterRole view"} {
		if strings.Contains(text, never) {
			t.Errorf("installed by Placement without the aggregated roles, the notes say %q:\n%s", never, text)
		}
	}
}
