// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/fixture"
)

// crdResource is the CustomResourceDefinitions' API, read through the dynamic client.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// drainState is what the previous release wrote about the draining cluster, which the
// upgrade must keep.
var drainState struct {
	row        trafficv1alpha1.ClusterStatus
	conditions []string
}

// installPrevious installs the previous release's chart, as it was, with its image:
// its CRD comes from the chart's crds/ folder and knows no check history. The test
// bed put this release's CRD on the hub; it goes first, so that helm installs the
// previous one.
func installPrevious(t *testing.T) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(bed.Hub.Config)
	if err := dyn.Resource(crdResource).Delete(ctx, crdName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "this release's CRD gone from the hub", func(ctx context.Context) error {
		_, err := dyn.Resource(crdResource).Get(ctx, crdName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	runHelm(t, chartValues(t, previous.Image), "install", release, previous.Chart, "--version", previous.Version,
		"--namespace", releaseNamespace, "--create-namespace", "--wait", "--timeout", "2m")
	if hasHistory(t, ctx) {
		t.Fatal("the previous release's CRD already has the check history: the upgrade would test nothing")
	}
	managerPods(t, previous.Image)
}

// hasHistory says whether the hub's CRD has the check history, status.clusters[].history,
// which this release added.
func hasHistory(t *testing.T, ctx context.Context) bool {
	t.Helper()
	crd, err := dynamic.NewForConfigOrDie(bed.Hub.Config).Resource(crdResource).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		_, found, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "status",
			"properties", "clusters", "items", "properties", "history")
		if found {
			return true
		}
	}
	return false
}

// drain makes a policy whose check fails on purpose (the query's value, 1, is never
// at most 0.05) and narrows the real Placement from both clusters to cluster1: cluster2
// drains, and stays draining, under the previous release's manager.
func drain(t *testing.T) {
	ctx := t.Context()
	if _, err := hub.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: policyNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	regions := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: regionLabel, Operator: metav1.LabelSelectorOpExists}}}
	if err := fixture.CreateClusterSet(ctx, hub.Cluster, clusterSet, regions); err != nil {
		t.Fatal(err)
	}
	if err := fixture.BindClusterSet(ctx, hub.Cluster, policyNamespace, clusterSet); err != nil {
		t.Fatal(err)
	}
	for c, region := range map[string]string{cluster1: "east", cluster2: "west"} {
		setClusterLabel(t, c, regionLabel, region)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: policyNamespace}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := hub.Kube.CoreV1().Secrets(policyNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName, Namespace: policyNamespace},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: *regions,
		}}}},
	}
	if _, err := hub.Cluster.ClusterV1beta1().Placements(policyNamespace).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster1, cluster2)

	policy := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: policyNamespace},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:          trafficv1alpha1.PlacementReference{Name: placementName},
			ProxyPlacementName:    proxyName,
			TargetRef:             trafficv1alpha1.GatewayReference{Name: "gw"},
			PrometheusSecret:      trafficv1alpha1.SecretReference{Name: secret.Name},
			MetricsQuery:          `label_replace(vector(1), "cluster", "{{ .Cluster.Name }}", "", "")`,
			ExpectedMetricsResult: "<= 0.05",
			Interval:              &metav1.Duration{Duration: time.Second},
			ConsecutiveSuccesses:  3,
			MinDrainDuration:      &metav1.Duration{Duration: time.Second},
		},
	}
	if _, err := hub.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(policyNamespace).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, proxyName, cluster1, cluster2)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := hub.Cluster.ClusterV1beta1().Placements(policyNamespace).Get(ctx, placementName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Predicates = fixture.SelectorPredicates(map[string]string{regionLabel: "east"})
		_, err = hub.Cluster.ClusterV1beta1().Placements(policyNamespace).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster1)
	// Two failed checks at least, so that the state carried over is a drain's, not its
	// first moment.
	row := waitRow(t, "cluster2 draining, its checks failing", func(r *trafficv1alpha1.ClusterStatus) error {
		switch {
		case r.Phase != trafficv1alpha1.ClusterDraining || r.DrainStartTime == nil:
			return fmt.Errorf("phase %s, drain start %v", r.Phase, r.DrainStartTime)
		case r.LastResult != trafficv1alpha1.EvaluationFail || r.LastValue != "1" || r.ResolvedQuery == "":
			return fmt.Errorf("last check %s, value %q, query %q", r.LastResult, r.LastValue, r.ResolvedQuery)
		case r.LastEvaluationTime == nil || !r.LastEvaluationTime.After(r.DrainStartTime.Time):
			return fmt.Errorf("last evaluation %v, drain start %v", r.LastEvaluationTime, r.DrainStartTime)
		}
		return nil
	})
	drainState.row = *row
	p := getPolicy(t)
	for _, c := range p.Status.Conditions {
		drainState.conditions = append(drainState.conditions, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	t.Logf("under the previous release: %s; conditions %v", fixture.PolicyStatus(p), drainState.conditions)
}

// upgrade upgrades to this release with helm, during cluster2's drain, and checks that
// the upgrade carried the CRD's change (the check history appears), that the drain
// goes on where it was (same drain start, the same failing check, nothing of the old
// status lost), that the manager's pod rolled to this release's image, and that the
// proxy listed both clusters every moment of it. The first upgrade from a release
// whose CRD came from crds/ needs --take-ownership: helm did not create that CRD as
// part of the release; and --reset-then-reuse-values, as the previous values lack
// the new chart's (docs/upgrading-and-uninstalling.md says both).
func upgrade(t *testing.T) {
	ctx := t.Context()
	watch := watchProxy(t, cluster1, cluster2)
	before := time.Now()
	// Without --take-ownership, helm refuses before it changes anything.
	values, args := upgradeArgs(t, nil)
	if _, err := tryHelm(t, values, args...); err == nil || !strings.Contains(err.Error(), "invalid ownership metadata") {
		t.Fatalf("helm upgrade without --take-ownership: %v, want it refused for the CRD's ownership", err)
	}
	// Nor with --reuse-values: the previous values lack what the new templates read.
	if _, err := tryHelm(t, values, append(args, "--take-ownership", "--reuse-values")...); err == nil || !strings.Contains(err.Error(), "nil pointer") {
		t.Fatalf("helm upgrade --reuse-values: %v, want it refused for the values the previous chart did not have", err)
	}
	if hasHistory(t, ctx) {
		t.Fatal("a refused upgrade changed the CRD")
	}
	// As the docs say: the previous values, over the new chart's defaults.
	upgradeChart(t, nil, "--take-ownership", "--reset-then-reuse-values")

	if !hasHistory(t, ctx) {
		t.Fatal("after helm upgrade, the hub's CRD has no check history: the CRD was not upgraded")
	}
	crd, err := dynamic.NewForConfigOrDie(bed.Hub.Config).Resource(crdResource).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" || crd.GetAnnotations()["meta.helm.sh/release-name"] != release {
		t.Errorf("the CRD's annotations after the upgrade: %v, want it kept on uninstall and owned by the release", crd.GetAnnotations())
	}
	pod := managerPods(t, image)
	t.Logf("manager pod %s runs %s", pod.Name, image)
	// The new pod leads: the Lease's holder is <pod name>_<uuid>.
	eventually(t, "the new manager pod holding the leader Lease", func(ctx context.Context) error {
		lease, err := hub.Kube.CoordinationV1().Leases(releaseNamespace).Get(ctx, managerName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); !strings.HasPrefix(holder, pod.Name+"_") {
			return fmt.Errorf("held by %q", holder)
		}
		return nil
	})

	// The add-on framework now runs in the add-on manager's pod, which started it only
	// once the single manager of the previous release had let the Lease go.
	addonPod := onePod(t, "the add-on manager", addonManagerLabels, image)
	eventually(t, "the add-on manager starting the framework after the handover", func(ctx context.Context) error {
		log, err := hub.Kube.CoreV1().Pods(releaseNamespace).GetLogs(addonPod.Name, &corev1.PodLogOptions{Container: "manager"}).DoRaw(ctx)
		if err != nil {
			return err
		}
		if !strings.Contains(string(log), `"Starting the add-on framework"`) || !strings.Contains(string(log), `"Add-on manager started"`) {
			return fmt.Errorf("its log has not started the framework yet:\n%s", log)
		}
		return nil
	})

	old := drainState.row
	row := waitRow(t, "cluster2's check history written by this release", func(r *trafficv1alpha1.ClusterStatus) error {
		if len(r.History) == 0 || r.LastEvaluationTime == nil || !r.LastEvaluationTime.After(before) {
			return fmt.Errorf("history %v, last evaluation %v", r.History, r.LastEvaluationTime)
		}
		return nil
	})
	checks := map[string][2]any{
		"phase":                {row.Phase, old.Phase},
		"drain start":          {row.DrainStartTime.UTC(), old.DrainStartTime.UTC()},
		"last result":          {row.LastResult, old.LastResult},
		"last value":           {row.LastValue, old.LastValue},
		"resolved query":       {row.ResolvedQuery, old.ResolvedQuery},
		"consecutiveSuccesses": {row.ConsecutiveSuccesses, old.ConsecutiveSuccesses},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("cluster2's %s after the upgrade: %v, before: %v", what, c[0], c[1])
		}
	}
	for _, h := range row.History {
		if h.Result != trafficv1alpha1.EvaluationFail || h.Value != "1" {
			t.Errorf("check history %+v: want failed checks of value 1", row.History)
			break
		}
	}
	p := getPolicy(t)
	for _, c := range drainState.conditions {
		typ, _, _ := strings.Cut(c, "=")
		cond := meta.FindStatusCondition(p.Status.Conditions, typ)
		if cond == nil || cond.Type+"="+string(cond.Status)+"/"+cond.Reason != c {
			t.Errorf("condition %s after the upgrade: %+v", c, cond)
		}
	}
	t.Logf("under this release: %s, %d checks in the history", fixture.PolicyStatus(p), len(row.History))
	watch.verify(t)
}

// setClusterLabel sets (or, with an empty value, removes) a label of a ManagedCluster.
func setClusterLabel(t *testing.T, cluster, key, value string) {
	t.Helper()
	ctx := t.Context()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		if value == "" {
			delete(mc.Labels, key)
		} else {
			mc.Labels[key] = value
		}
		_, err = hub.Cluster.ClusterV1().ManagedClusters().Update(ctx, mc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitDecisions waits until a Placement's decisions list exactly the clusters.
func waitDecisions(t *testing.T, placement string, clusters ...string) {
	t.Helper()
	fixture.WaitDecisions(t, pollTimeout, hub.Cluster, policyNamespace, placement, clusters...)
}

func getPolicy(t *testing.T) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	p, err := hub.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(policyNamespace).Get(t.Context(), policyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRow waits until cluster2's row of the policy's status passes check, and returns it.
func waitRow(t *testing.T, what string, check func(*trafficv1alpha1.ClusterStatus) error) *trafficv1alpha1.ClusterStatus {
	t.Helper()
	var row *trafficv1alpha1.ClusterStatus
	eventually(t, what, func(ctx context.Context) error {
		p, err := hub.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(policyNamespace).Get(ctx, policyName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		r := fixture.PolicyRow(p, cluster2)
		if r == nil {
			return errors.New("no row for cluster2")
		}
		if err := check(r); err != nil {
			return fmt.Errorf("%w (status: %s)", err, fixture.PolicyStatus(p))
		}
		row = r.DeepCopy()
		return nil
	})
	return row
}

// proxyWatch sees every version of the proxy's decisions from its start and notes
// each moment one of the clusters was not listed.
type proxyWatch struct {
	mu       sync.Mutex
	versions int
	missing  []string
	stop     func()
}

// watchProxy starts watching the proxy's decisions until the test ends; the clusters
// must be listed in each version the watch sees.
func watchProxy(t *testing.T, clusters ...string) *proxyWatch {
	t.Helper()
	w := &proxyWatch{}
	factory := clusterinformers.NewSharedInformerFactoryWithOptions(hub.Cluster, 0,
		clusterinformers.WithNamespace(policyNamespace),
		clusterinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = clusterv1beta1.PlacementLabel + "=" + proxyName }))
	inf := factory.Cluster().V1beta1().PlacementDecisions().Informer()
	seen := func(obj any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.versions++
		listed := map[string]bool{}
		for _, o := range inf.GetStore().List() {
			for _, d := range o.(*clusterv1beta1.PlacementDecision).Status.Decisions {
				listed[d.ClusterName] = true
			}
		}
		for _, c := range clusters {
			if !listed[c] {
				w.missing = append(w.missing, fmt.Sprintf("%s: %s not in the proxy", time.Now().Format(time.StampMilli), c))
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: seen,
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	w.stop = cancel
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the watch of the proxy's decisions did not sync")
	}
	return w
}

// verify stops the watch and fails the test for each moment a cluster was missing.
func (w *proxyWatch) verify(t *testing.T) {
	t.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.versions == 0 {
		t.Error("the watch of the proxy's decisions saw nothing")
	}
	if len(w.missing) > 0 {
		t.Errorf("the proxy lost a cluster during the upgrade:\n%v", w.missing)
	}
}
