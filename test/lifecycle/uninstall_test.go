// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package lifecycle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// leftoversDoc holds the table of what each uninstall step removes and leaves, which
// this test checks; the users read the same table.
const leftoversDoc = "../../docs/upgrading-and-uninstalling.md"

// leftoversMarker is the line above the table in leftoversDoc.
const leftoversMarker = "<!-- leftovers: test/lifecycle checks this table -->"

// The steps of the table's first column.
const (
	stepDisable   = "clusteradm addon disable"
	stepUninstall = "helm uninstall"
)

// leftover is one row of the table: after a step, on the hub or the spoke, the objects
// of a resource (resource.group) whose namespace and name match (path.Match patterns,
// with the table's placeholders filled in) are removed, or stay.
type leftover struct {
	step, on, resource, namespace, name string
	stays                               bool
}

func (l leftover) String() string {
	fate := "removed"
	if l.stays {
		fate = "stays"
	}
	return fmt.Sprintf("%s on the %s: %s %s/%s %s", l.step, l.on, l.resource, l.namespace, l.name, fate)
}

// placeholders are the table's names for what differs from one fleet to the next,
// with this test's values.
var placeholders = strings.NewReplacer(
	"<cluster>", cluster1,
	"<agent-namespace>", testbed.AgentAddonNamespace,
	"<release-namespace>", releaseNamespace,
	"<policy-namespace>", policyNamespace,
	"<policy>", policyName,
	"<proxy-placement>", proxyName,
)

// readLeftovers reads the table of leftoversDoc: | step | on | resource | name | fate | why |,
// with the name namespace/name for a namespaced resource.
func readLeftovers(t *testing.T) []leftover {
	t.Helper()
	f, err := os.Open(leftoversDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []leftover
	inTable := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == leftoversMarker {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if len(cells) < 5 || cells[0] == "after" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		l := leftover{step: cells[0], on: cells[1], resource: cells[2], stays: cells[4] == "stays"}
		if cells[4] != "stays" && cells[4] != "removed" {
			t.Fatalf("%s: row %q: the fate is %q, want stays or removed", leftoversDoc, line, cells[4])
		}
		name := placeholders.Replace(cells[3])
		if ns, n, ok := strings.Cut(name, "/"); ok {
			l.namespace, l.name = ns, n
		} else {
			l.name = name
		}
		rows = append(rows, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table under %q", leftoversDoc, leftoversMarker)
	}
	return rows
}

// stepRows are the rows of one step on one side.
func stepRows(rows []leftover, step, on string) []leftover {
	var out []leftover
	for _, r := range rows {
		if r.step == step && r.on == on {
			out = append(out, r)
		}
	}
	return out
}

// ours says whether an object is the add-on's: named for it, one of its API's, or a
// proxy Placement (labelled with its policy).
func ours(resource schema.GroupVersionResource, name string, labels map[string]string) bool {
	_, proxy := labels[trafficv1alpha1.PolicyLabel]
	return strings.Contains(name, "traffic-migration") || resource.Group == trafficv1alpha1.GroupName || proxy
}

// inventory is what takeInventory found: each object as "resource namespace/name".
type inventory map[string]bool

// takeInventory lists, on one side, the objects of the resources that rows name, in
// the namespaces they name (or cluster-wide for a cluster-scoped resource), that are
// the add-on's or match a row.
func (s side) takeInventory(ctx context.Context, rows []leftover) (inventory, error) {
	namespaces := map[string][]string{} // by resource
	for _, r := range rows {
		if !slices.Contains(namespaces[r.resource], r.namespace) {
			namespaces[r.resource] = append(namespaces[r.resource], r.namespace)
		}
	}
	inv := inventory{}
	for resource, nss := range namespaces {
		gvr, err := s.mapper.ResourceFor(schema.ParseGroupResource(resource).WithVersion(""))
		if err != nil {
			return nil, fmt.Errorf("the table's resource %s: %w", resource, err)
		}
		for _, ns := range nss {
			list, err := s.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("list %s in %q: %w", resource, ns, err)
			}
			for _, obj := range list.Items {
				key := obj.GetNamespace() + "/" + obj.GetName()
				if ours(gvr, obj.GetName(), obj.GetLabels()) || slices.ContainsFunc(rows, func(r leftover) bool { return r.resource == resource && r.matches(key) }) {
					inv[resource+" "+key] = true
				}
			}
		}
	}
	return inv, nil
}

// matches says whether an object's namespace/name is the row's.
func (l leftover) matches(key string) bool {
	ns, name, _ := strings.Cut(key, "/")
	nsOK, _ := path.Match(l.namespace, ns)
	nameOK, _ := path.Match(l.name, name)
	return nsOK && nameOK
}

// compare says how an inventory differs from what rows promise: a row that stays
// and is not there, a row removed that is still there, an object of ours that no row
// says stays. Before a step (before is true) every row is still there.
func (inv inventory) compare(rows []leftover, before bool) error {
	var problems []string
	listed := map[string]bool{}
	for _, r := range rows {
		var found []string
		for obj := range inv {
			resource, key, _ := strings.Cut(obj, " ")
			if resource == r.resource && r.matches(key) {
				found = append(found, key)
				if r.stays || before {
					listed[obj] = true
				}
			}
		}
		switch {
		case (r.stays || before) && len(found) == 0:
			problems = append(problems, fmt.Sprintf("%s: not there", r))
		case !r.stays && !before && len(found) > 0:
			problems = append(problems, fmt.Sprintf("%s: still there: %v", r, found))
		}
	}
	if !before {
		for _, obj := range slices.Sorted(maps.Keys(inv)) {
			if !listed[obj] {
				problems = append(problems, fmt.Sprintf("left and not in the table: %s", obj))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// side is the hub or a spoke, as the table's second column names it, and its API.
type side struct {
	on     string
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// newSide makes the clients of a side.
func newSide(t *testing.T, on string, cfg *rest.Config) side {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return side{on: on, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// checkStep checks the table's rows of a step on each side: before runs it, every
// row is there; after, it leaves exactly what the table says. It logs the inventory
// after the step.
func checkStep(t *testing.T, rows []leftover, step string, sides []side, run func(t *testing.T)) {
	t.Helper()
	for _, s := range sides {
		r := stepRows(rows, step, s.on)
		if len(r) == 0 {
			t.Fatalf("%s lists nothing %s leaves on the %s", leftoversDoc, step, s.on)
		}
		eventually(t, "before "+step+", on the "+s.on+", every object the table names", func(ctx context.Context) error {
			inv, err := s.takeInventory(ctx, r)
			if err != nil {
				return err
			}
			return inv.compare(r, true)
		})
	}
	run(t)
	for _, s := range sides {
		r := stepRows(rows, step, s.on)
		var inv inventory
		eventually(t, "after "+step+", on the "+s.on+", what "+leftoversDoc+" says", func(ctx context.Context) error {
			var err error
			if inv, err = s.takeInventory(ctx, r); err != nil {
				return err
			}
			return inv.compare(r, false)
		})
		t.Logf("after %s, on the %s, of ours: %v", step, s.on, slices.Sorted(maps.Keys(inv)))
	}
}

// disable turns the chart back to Manual, enables the add-on on cluster1 with
// clusteradm and waits for its agent to run and report, then disables it with
// clusteradm: the agent's objects go from the spoke and from the cluster's namespace
// on the hub, as the docs' table says.
func disable(t *testing.T) {
	ctx := t.Context()
	rows := readLeftovers(t)
	upgradeChart(t, nil)
	if _, err := bed.Clusteradm(ctx, "addon", "enable", "--names", addonName, "--clusters", cluster1, "--namespace", testbed.AgentAddonNamespace); err != nil {
		t.Fatal(err)
	}
	if err := bed.Spokes[cluster1].WaitDeploymentAvailable(ctx, testbed.AgentAddonNamespace, agentDeployment); err != nil {
		t.Fatal(err)
	}
	// The agent's report: the conditions of ours that disable must take away.
	waitAddonCondition(t, cluster1, trafficv1alpha1.ConditionClusterLabels)
	checkStep(t, rows, stepDisable, []side{newSide(t, "spoke", bed.Spokes[cluster1].Config), newSide(t, "hub", bed.Hub.Config)}, func(t *testing.T) {
		out, err := bed.Clusteradm(ctx, "addon", "disable", "--names", addonName, "--clusters", cluster1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("clusteradm addon disable: %s", strings.TrimSpace(out))
	})
}

// uninstall uninstalls the release with helm: the manager and the add-on go, the CRD
// stays (crds.keep), and with it the policy and its drain state, and the proxy
// Placement stays, still listing both clusters, as the docs' table says.
func uninstall(t *testing.T) {
	rows := readLeftovers(t)
	checkStep(t, rows, stepUninstall, []side{newSide(t, "hub", bed.Hub.Config)}, func(t *testing.T) {
		runHelm(t, nil, "uninstall", release, "--namespace", releaseNamespace, "--wait", "--timeout", "2m")
	})
	row := fixture.PolicyRow(getPolicy(t), cluster2)
	if row == nil || row.Phase != trafficv1alpha1.ClusterDraining || !row.DrainStartTime.Equal(drainState.row.DrainStartTime) || len(row.History) == 0 {
		t.Errorf("cluster2's row after helm uninstall: %+v, want it draining since %v, with its history", row, drainState.row.DrainStartTime)
	}
	clusters, err := fixture.DecisionClusters(t.Context(), hub.Cluster, policyNamespace, proxyName)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(clusters, []string{cluster1, cluster2}) {
		t.Errorf("the proxy's decisions after helm uninstall list %v, want both clusters as last written", clusters)
	}
}
