// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/check"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestCheckCommand runs "traffic-migration check", the real binary, against the test
// bed's Prometheus: for a policy on the hub with one cluster draining, for a policy
// manifest that is not applied, for a user who may not read the policy's Secret (with
// and without --prometheus-url), and for a query Prometheus rejects. Every printed
// value is compared with Prometheus's own answer to the printed query at the printed
// time.
func TestCheckCommand(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "check")
	f := m.f
	m.traffic.SetByValue(map[string]float64{m.c1: 60, m.c2: 40})
	p := m.policy()
	p.Spec.MinDrainDuration = &metav1.Duration{Duration: 10 * time.Minute} // c1 drains throughout
	f.createPolicy(t, p)
	f.waitForClusters(t, m.ns, m.proxy, []string{m.c1}, 30*time.Second)
	m.moveToC2(t)
	f.waitForPolicy(t, m.ns, p.Name, 30*time.Second, func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		r := fixture.PolicyRow(p, m.c1)
		return r != nil && r.Phase == trafficv1alpha1.ClusterDraining && r.LastEvaluationTime != nil
	})
	share := fmt.Sprintf(`100 * sum(rate(test_gateway_requests_total{cluster=%q,job=%q}[4s])) / sum(rate(test_gateway_requests_total{job=%q}[4s]))`, m.c1, m.traffic.job, m.traffic.job)
	// The check evaluates at the start of the current second: wait until Prometheus has
	// had the share for longer than that.
	waitForPromValueAt(t, share, func() time.Time { return time.Now().Add(-2 * time.Second) }, func(v float64) bool { return v > 55 && v < 65 })
	admin := bed.Hub.KubeconfigPath

	t.Run("policy on the hub", func(t *testing.T) {
		r := runCheckJSON(t, admin, "check", p.Name, "-n", m.ns)
		if r.Expectation != "<= 5" || r.Source != "the hub" || !strings.HasPrefix(r.Prometheus, bed.Prometheus.URL) {
			t.Errorf("report header: expectation %q, source %q, prometheus %q", r.Expectation, r.Source, r.Prometheus)
		}
		c1, c2 := reportRow(t, r, m.c1), reportRow(t, r, m.c2)
		assertMatchesPrometheus(t, r, c1, c2)
		if c1.Phase != trafficv1alpha1.ClusterDraining || c1.Result != trafficv1alpha1.EvaluationFail || c1.Gate == nil || c1.Gate.WouldRemove {
			t.Fatalf("cluster1 should drain, fail its check and stay: %+v", c1)
		}
		for _, want := range []string{"minimum drain duration not reached", "more passing checks", "last check: the query's value does not meet <= 5 yet"} {
			if !strings.Contains(c1.Gate.WaitingFor, want) {
				t.Errorf("cluster1's gate: want %q in %q", want, c1.Gate.WaitingFor)
			}
		}
		if c2.Phase != trafficv1alpha1.ClusterActive || c2.Gate != nil || c2.Result != trafficv1alpha1.EvaluationFail {
			t.Errorf("cluster2 is in the real Placement: %+v", c2)
		}

		// The text form prints the same values and queries.
		out, errOut, err := runCLI(t, admin, "check", p.Name, "-n", m.ns)
		if err != nil {
			t.Fatalf("check: %v\n%s", err, errOut)
		}
		for _, want := range []string{"Passes when the value is <= 5", c1.Query, "waits: minimum drain duration not reached"} {
			if !strings.Contains(out, want) {
				t.Errorf("text output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("policy from a file, not applied", func(t *testing.T) {
		dry := m.policy()
		dry.Name = "not-applied"
		dry.Spec.TrafficShare = nil
		dry.Spec.MetricsQuery = fmt.Sprintf(`sum(rate(test_gateway_requests_total{job=%q,cluster="{{ .Cluster.Name }}"}[4s]))`, m.traffic.job)
		dry.Spec.ExpectedMetricsResult = "<= 1000"
		r := runCheckJSON(t, admin, "check", "-f", writeManifest(t, dry))
		c1, c2 := reportRow(t, r, m.c1), reportRow(t, r, m.c2)
		assertMatchesPrometheus(t, r, c1, c2)
		if c1.Result != trafficv1alpha1.EvaluationPass || c2.Result != trafficv1alpha1.EvaluationPass || r.Expectation != "<= 1000" {
			t.Errorf("both rates are under 1000: %+v, %+v", c1, c2)
		}
		// The proxy lists cluster1, the manifest's real Placement does not: it would
		// drain, starting now, so its minimum drain duration holds it.
		if c1.Gate == nil || c1.Gate.WouldRemove || !strings.Contains(c1.Gate.WaitingFor, "minimum drain duration not reached") {
			t.Errorf("cluster1 would drain and wait: %+v", c1.Gate)
		}
		_, err := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Get(t.Context(), dry.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("check created the policy from the file: %v", err)
		}
	})

	t.Run("user who may not read the Secret", func(t *testing.T) {
		kubeconfig := policyReader(t, m.ns, "check-viewer-"+m.ns)
		_, errOut, err := runCLI(t, kubeconfig, "check", p.Name, "-n", m.ns)
		want := fmt.Sprintf("you may not read Secret %s in namespace %s", m.secret, m.ns)
		if err == nil || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--prometheus-url") {
			t.Fatalf("want an error saying %q, got %v:\n%s", want, err, errOut)
		}
		// With the URL on the command line, the same user runs the check.
		r := runCheckJSON(t, kubeconfig, "check", p.Name, "-n", m.ns, "--prometheus-url", bed.Prometheus.URL)
		assertMatchesPrometheus(t, r, reportRow(t, r, m.c1), reportRow(t, r, m.c2))
		if !strings.HasSuffix(r.Prometheus, "(--prometheus-url)") {
			t.Errorf("report does not say the URL came from the flag: %q", r.Prometheus)
		}
	})

	t.Run("kubectl's flags and outputs", func(t *testing.T) {
		viewer := "cli-viewer-" + m.ns
		policyReader(t, m.ns, viewer)
		// The admin impersonates the viewer with --as: RBAC decides for the viewer, who
		// may read the policy but not patch it.
		asViewer := []string{"-n", m.ns, "--as", viewer}
		_, errOut, err := runCLI(t, admin, append([]string{"suspend", p.Name}, asViewer...)...)
		if err == nil || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, viewer) {
			t.Errorf("suspend as the viewer: want forbidden, got %v:\n%s", err, errOut)
		}
		if got, _ := f.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(m.ns).Get(t.Context(), p.Name, metav1.GetOptions{}); got == nil || got.Spec.Suspend {
			t.Errorf("the policy was suspended, or cannot be read: %+v", got)
		}
		// Every read command prints its view as JSON and YAML, with its kind.
		type view struct {
			APIVersion, Kind string
			Name             string
			Policy           string
			Items            []struct{ Name string }
			Clusters         []struct{ Name string }
		}
		read := func(args []string, format string) view {
			t.Helper()
			out, errOut, err := runCLI(t, admin, append(args, "-o", format)...)
			if err != nil {
				t.Fatalf("%v -o %s: %v\n%s", args, format, err, errOut)
			}
			var v view
			if err := yaml.Unmarshal([]byte(out), &v); err != nil { // YAML reads JSON too
				t.Fatalf("%v -o %s printed no %s: %v\n%s", args, format, format, err, out)
			}
			if format == "json" && !json.Valid([]byte(out)) {
				t.Fatalf("%v -o json is not JSON:\n%s", args, out)
			}
			if v.APIVersion != "cli.traffic.open-cluster-management.io/v1alpha1" {
				t.Errorf("%v -o %s: apiVersion %q", args, format, v.APIVersion)
			}
			return v
		}
		for _, format := range []string{"json", "yaml"} {
			if v := read(append([]string{"status", p.Name}, asViewer...), format); v.Kind != "PolicyView" || v.Name != p.Name || len(v.Clusters) != 2 {
				t.Errorf("status NAME -o %s as the viewer: %+v", format, v)
			}
			if v := read([]string{"status", "-n", m.ns}, format); v.Kind != "PolicyViewList" || len(v.Items) != 1 || v.Items[0].Name != p.Name {
				t.Errorf("status -o %s: %+v", format, v)
			}
			if v := read([]string{"status", "--clusters"}, format); v.Kind != "FleetView" || len(v.Clusters) < 2 {
				t.Errorf("status --clusters -o %s: %+v", format, v)
			}
			if v := read([]string{"check", p.Name, "-n", m.ns}, format); v.Kind != "CheckReport" || v.Policy != p.Name || len(v.Clusters) != 2 {
				t.Errorf("check -o %s: %+v", format, v)
			}
		}
		// -o name prints what kubectl takes back; a template reads the view.
		out, errOut, err := runCLI(t, admin, "status", "-n", m.ns, "-o", "name")
		if want := "trafficmigrationpolicy.traffic.open-cluster-management.io/" + p.Name + "\n"; err != nil || out != want {
			t.Errorf("status -o name: %v, printed %q, want %q\n%s", err, out, want, errOut)
		}
		out, errOut, err = runCLI(t, admin, "status", p.Name, "-n", m.ns, "-o", "jsonpath={.clusters[?(@.name==\""+m.c1+"\")].phase}")
		if err != nil || out != string(trafficv1alpha1.ClusterDraining) {
			t.Errorf("status -o jsonpath: %v, printed %q, want Draining\n%s", err, out, errOut)
		}
		out, errOut, err = runCLI(t, admin, "status", "-n", m.ns, "-o", "wide")
		if err != nil || !strings.Contains(out, "SUSPENDED") || !strings.Contains(out, m.placement) {
			t.Errorf("status -o wide: %v, printed\n%s%s", err, out, errOut)
		}
	})

	t.Run("query that cannot be run", func(t *testing.T) {
		bad := m.policy()
		bad.Spec.TrafficShare = nil
		bad.Spec.MetricsQuery, bad.Spec.ExpectedMetricsResult = "sum(", "<= 1"
		out, errOut, err := runCLI(t, admin, "check", "-f", writeManifest(t, bad), "-o", "json")
		if err == nil || !strings.Contains(errOut, "the query could not be run for") {
			t.Fatalf("want a non-zero exit naming the clusters, got %v:\n%s", err, errOut)
		}
		var r check.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("the report is still printed as JSON: %v\n%s", err, out)
		}
		if c := reportRow(t, r, m.c2); c.Result != trafficv1alpha1.EvaluationError || c.Reason != trafficv1alpha1.ReasonQueryFailed {
			t.Errorf("want an Error with reason %s: %+v", trafficv1alpha1.ReasonQueryFailed, c)
		}
	})
}

// writeManifest writes a policy as a manifest file, as a user would before applying it.
func writeManifest(t *testing.T, p *trafficv1alpha1.TrafficMigrationPolicy) string {
	t.Helper()
	p.TypeMeta = metav1.TypeMeta{APIVersion: trafficv1alpha1.SchemeGroupVersion.String(), Kind: "TrafficMigrationPolicy"}
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), p.Name+".yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// runCLI runs the traffic-migration binary with args and the kubeconfig.
func runCLI(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin, err := testbed.ProgramTrafficMigration.Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// runCheckJSON runs check with -o json and decodes its report; the check must succeed.
func runCheckJSON(t *testing.T, kubeconfig string, args ...string) check.Report {
	t.Helper()
	out, errOut, err := runCLI(t, kubeconfig, append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("%v: %v\n%s\n%s", args, err, out, errOut)
	}
	var r check.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode the report: %v\n%s", err, out)
	}
	return r
}

func reportRow(t *testing.T, r check.Report, cluster string) check.ClusterReport {
	t.Helper()
	for _, c := range r.Clusters {
		if c.Name == cluster {
			return c
		}
	}
	t.Fatalf("the report has no row for %s: %+v", cluster, r.Clusters)
	return check.ClusterReport{}
}

// assertMatchesPrometheus asks Prometheus each row's query at the report's time and
// compares its answer with the printed value.
func assertMatchesPrometheus(t *testing.T, r check.Report, rows ...check.ClusterReport) {
	t.Helper()
	client, err := api.NewClient(api.Config{Address: bed.Prometheus.URL})
	if err != nil {
		t.Fatal(err)
	}
	prom := promv1.NewAPI(client)
	for _, c := range rows {
		if c.Query == "" || c.Value == "" {
			t.Errorf("%s: no query or value printed: %+v", c.Name, c)
			continue
		}
		v, _, err := prom.Query(t.Context(), c.Query, r.Time.Time)
		if err != nil {
			t.Errorf("%s: Prometheus: %v", c.Name, err)
			continue
		}
		vec, ok := v.(model.Vector)
		if !ok || len(vec) != 1 {
			t.Errorf("%s: Prometheus answered %v", c.Name, v)
			continue
		}
		if got := vec[0].Value.String(); got != c.Value {
			t.Errorf("%s: check printed %s, Prometheus answers %s for %s at %s", c.Name, c.Value, got, c.Query, r.Time.UTC())
		}
	}
}

// policyReader makes a user who may read and watch policies, PlacementDecisions,
// ManagedClusters and their add-ons, but no Secret, and returns a kubeconfig for them.
func policyReader(t *testing.T, ns, user string) string {
	t.Helper()
	ctx := context.Background()
	kube := newFleet(t).Kube
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{trafficv1alpha1.GroupName}, Resources: []string{"trafficmigrationpolicies"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"placementdecisions", "managedclusters"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons"}, Verbs: []string{"get", "list"}},
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{})
	})
	path, err := bed.Hub.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubectlPluginCompletion: kubectl completes the plugin's words by running
// kubectl_complete-traffic_migration (hack/) from PATH, which asks the plugin, installed
// as kubectl-traffic_migration: the commands it offers are those of the plugin's help.
func TestKubectlPluginCompletion(t *testing.T) {
	bin, err := testbed.ProgramTrafficMigration.Path()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "kubectl-traffic_migration")); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "kubectl_complete-traffic_migration"))
	if err != nil {
		t.Fatal(err)
	}
	for words, want := range map[string][]string{
		"":         {"status", "check", "wait", "force-remove"},
		"su":       {"suspend"},
		"status -": {"--namespace"},
	} {
		// The words typed so far, the last one being completed ("" after a space).
		args := strings.Fields(words)
		if words == "" || strings.HasSuffix(words, " ") {
			args = append(args, "")
		}
		cmd := exec.CommandContext(t.Context(), script, args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("complete %q: %v\n%s", words, err, out)
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("complete %q: %q is not offered:\n%s", words, w, out)
			}
		}
		if strings.Contains(string(out), "manager\t") && words == "" {
			t.Errorf("complete %q offers the manager, which the plugin's help hides:\n%s", words, out)
		}
	}
}
