// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// docsDir holds the guides whose YAML examples the tests check.
const docsDir = "../../docs"

// applicationSetCRDEnv names Argo CD's ApplicationSet CRD, from the argo-cd module
// that the Makefile downloads (make applicationset-crd).
const applicationSetCRDEnv = "TESTBED_APPLICATIONSET_CRD"

// docExample is one YAML document of a ```yaml block of a guide.
type docExample struct {
	file string
	line int // of the block's first line
	obj  *unstructured.Unstructured
}

func (e docExample) String() string {
	return fmt.Sprintf("%s:%d: %s %s/%s", filepath.Base(e.file), e.line, e.obj.GetKind(), e.obj.GetNamespace(), e.obj.GetName())
}

// docExamples reads every YAML document of every ```yaml block of the guides.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides in %s: %v", docsDir, err)
	}
	var out []docExample
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var block []string
		start, inBlock := 0, false
		for i, line := range strings.Split(string(raw), "\n") {
			switch trimmed := strings.TrimSpace(line); {
			case !inBlock && trimmed == "```yaml":
				inBlock, start, block = true, i+2, nil
			case inBlock && trimmed == "```":
				inBlock = false
				out = append(out, parseExample(t, file, start, strings.Join(block, "\n"))...)
			case inBlock:
				block = append(block, line)
			}
		}
		if inBlock {
			t.Fatalf("%s: the yaml block at line %d does not end", file, start)
		}
	}
	return out
}

func parseExample(t *testing.T, file string, line int, text string) []docExample {
	t.Helper()
	var out []docExample
	dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s:%d: not YAML: %v", file, line, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			t.Fatalf("%s:%d: an example without apiVersion, kind or name:\n%s", file, line, doc)
		}
		out = append(out, docExample{file: file, line: line, obj: obj})
	}
}

// TestDocsExamples sends every YAML example of docs/ to the test bed's API server as a
// server-side dry run with strict field validation, so that an example with a
// misspelt field, a wrong type or a value the CRD's validation refuses fails here
// rather than for a reader. The hub serves OCM's CRDs and ours; Argo CD's
// ApplicationSet CRD (from the argo-cd module) and external-dns's DNSEndpoint CRD
// (from the external-dns module) are installed for the test, and stay. Kuadrant's
// DNSPolicy has no CRD here: docs/dns.md has it only inside a ManifestWorkReplicaSet,
// which TestDNSDocsWiring reads. Each example's namespace is made first, for real,
// and deleted at the end if the test made it.
func TestDocsExamples(t *testing.T) {
	ctx := t.Context()
	crd := testbed.Getenv(applicationSetCRDEnv)
	if crd == "" {
		t.Fatalf("%s is not set: run the tests through 'make test-integration', which downloads Argo CD's ApplicationSet CRD", applicationSetCRDEnv)
	}
	if err := testbed.InstallCRDs(ctx, bed.Hub.Config, crd); err != nil {
		t.Fatalf("install Argo CD's ApplicationSet CRD: %v", err)
	}
	// TESTBED_DNSENDPOINT_CRD, which make test-integration sets (make dnsendpoint-crd);
	// the error says so when it is not set.
	if err := testbed.InstallDNSEndpointCRD(ctx, bed.Hub.Config); err != nil {
		t.Fatalf("install external-dns's DNSEndpoint CRD: %v", err)
	}
	kube := kubernetes.NewForConfigOrDie(bed.Hub.Config)
	dyn := dynamic.NewForConfigOrDie(bed.Hub.Config)
	dc := discovery.NewDiscoveryClientForConfigOrDie(bed.Hub.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	examples := docExamples(t)
	for _, e := range examples {
		if ns := e.obj.GetNamespace(); ns != "" {
			ensureNamespace(t, kube, ns)
		}
	}
	kinds := map[string]bool{}
	for _, e := range examples {
		t.Run(e.String(), func(t *testing.T) {
			gvk := e.obj.GroupVersionKind()
			kinds[gvk.Kind] = true
			var mapping *meta.RESTMapping
			// The new CRD reaches discovery within moments.
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				var err error
				if mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
					mapper.Reset()
					return false, nil
				}
				return true, nil
			})
			if err != nil {
				t.Fatalf("the API server does not serve %s: %v", gvk, err)
			}
			var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				ns := e.obj.GetNamespace()
				if ns == "" {
					t.Fatal("a namespaced example without a namespace: say where it goes")
				}
				client = dyn.Resource(mapping.Resource).Namespace(ns)
			}
			_, err = client.Create(ctx, e.obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			if apierrors.IsAlreadyExists(err) && gvk.Kind == "Namespace" {
				return
			}
			if err != nil {
				t.Errorf("the API server refuses the example: %v", err)
			}
		})
	}
	// The guides promise these; a test that found none would check nothing.
	for _, kind := range []string{"TrafficMigrationPolicy", "ManifestWorkReplicaSet", "ApplicationSet", "ConfigMap", "Secret", "AddOnDeploymentConfig", "DNSEndpoint", "ClusterRole", "Deployment"} {
		if !kinds[kind] {
			t.Errorf("no %s among the examples of docs/", kind)
		}
	}
}

// ensureNamespace makes a namespace unless it exists, and deletes what it made when
// the test ends.
func ensureNamespace(t *testing.T, kube kubernetes.Interface, name string) {
	t.Helper()
	_, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(func() {
			if err := kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Logf("delete namespace %s: %v", name, err)
			}
		})
	}
}

// TestDNSDocsWiring checks what docs/dns.md says about the two Placements, which no API
// server can: in recipe B the ManifestWorkReplicaSet that places Kuadrant's DNSPolicy
// names the real Placement of the guide's policy, the one that places the Gateway names
// its proxy, and both target the policy's Gateway; and the DNSEndpoint shown as the
// manager's is named, labelled and filled as the manager writes it for that policy.
func TestDNSDocsWiring(t *testing.T) {
	t.Parallel()
	var policy *unstructured.Unstructured
	var sets, endpoints []*unstructured.Unstructured
	for _, e := range docExamples(t) {
		if filepath.Base(e.file) != "dns.md" {
			continue
		}
		switch e.obj.GetKind() {
		case "TrafficMigrationPolicy":
			if policy != nil {
				t.Fatalf("docs/dns.md has more than one TrafficMigrationPolicy; this test reads one")
			}
			policy = e.obj
		case "ManifestWorkReplicaSet":
			sets = append(sets, e.obj)
		case "DNSEndpoint":
			endpoints = append(endpoints, e.obj)
		}
	}
	if policy == nil {
		t.Fatal("docs/dns.md has no TrafficMigrationPolicy")
	}
	str := func(obj *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, path...)
		return v
	}
	realName, proxy, gateway := str(policy, "spec", "placementRef", "name"), str(policy, "spec", "proxyPlacementName"), str(policy, "spec", "targetRef", "name")
	if realName == "" || proxy == "" || gateway == "" {
		t.Fatalf("the policy of docs/dns.md lacks placementRef.name, proxyPlacementName or targetRef.name: %v", policy.Object["spec"])
	}

	// Recipe B: one set places the DNSPolicy on the real Placement, another the
	// Gateway on the proxy.
	placed := map[string][]string{} // kind -> the placementRefs of the set that has it
	for _, set := range sets {
		refs, _, _ := unstructured.NestedSlice(set.Object, "spec", "placementRefs")
		var names []string
		for _, r := range refs {
			if name, ok := r.(map[string]any)["name"].(string); ok {
				names = append(names, name)
			}
		}
		manifests, _, _ := unstructured.NestedSlice(set.Object, "spec", "manifestWorkTemplate", "workload", "manifests")
		for _, m := range manifests {
			obj := &unstructured.Unstructured{Object: m.(map[string]any)}
			kind := obj.GetKind()
			if _, dup := placed[kind]; dup && (kind == "DNSPolicy" || kind == "Gateway") {
				t.Errorf("docs/dns.md places a %s with more than one ManifestWorkReplicaSet", kind)
			}
			placed[kind] = names
			switch kind {
			case "DNSPolicy":
				if obj.GetAPIVersion() != "kuadrant.io/v1" || str(obj, "spec", "targetRef", "kind") != "Gateway" || str(obj, "spec", "targetRef", "name") != gateway {
					t.Errorf("the DNSPolicy of %s is not a kuadrant.io/v1 DNSPolicy targeting the Gateway %s: %v", set.GetName(), gateway, obj.Object)
				}
			case "Gateway":
				if obj.GetName() != gateway {
					t.Errorf("the Gateway of %s is %s, not the policy's %s", set.GetName(), obj.GetName(), gateway)
				}
			}
		}
	}
	if got := placed["DNSPolicy"]; !slices.Equal(got, []string{realName}) {
		t.Errorf("the DNSPolicy's ManifestWorkReplicaSet names the Placements %v, want only the real one, %q", got, realName)
	}
	if got := placed["Gateway"]; !slices.Equal(got, []string{proxy}) {
		t.Errorf("the Gateway's ManifestWorkReplicaSet names the Placements %v, want only the proxy, %q", got, proxy)
	}

	// Recipe A: the DNSEndpoint as the manager writes it for the policy.
	if len(endpoints) != 1 {
		t.Fatalf("docs/dns.md has %d DNSEndpoint examples, want 1", len(endpoints))
	}
	ep := endpoints[0]
	if ep.GetName() != policy.GetName() || ep.GetNamespace() != policy.GetNamespace() {
		t.Errorf("the DNSEndpoint is %s/%s, want the policy's name and namespace %s/%s", ep.GetNamespace(), ep.GetName(), policy.GetNamespace(), policy.GetName())
	}
	if got := ep.GetLabels()[trafficv1alpha1.PolicyLabel]; got != policy.GetName() {
		t.Errorf("the DNSEndpoint's label %s is %q, want %q", trafficv1alpha1.PolicyLabel, got, policy.GetName())
	}
	if ep.GetAnnotations()[trafficv1alpha1.PublishedClustersAnnotation] == "" {
		t.Errorf("the DNSEndpoint lacks the annotation %s", trafficv1alpha1.PublishedClustersAnnotation)
	}
	hostnames, _, _ := unstructured.NestedStringSlice(policy.Object, "spec", "dns", "hostnames")
	ttl, err := time.ParseDuration(str(policy, "spec", "dns", "ttl"))
	if len(hostnames) == 0 || err != nil {
		t.Fatalf("the policy of docs/dns.md has no spec.dns with hostnames and a ttl: %v", policy.Object["spec"])
	}
	records, _, _ := unstructured.NestedSlice(ep.Object, "spec", "endpoints")
	if len(records) == 0 {
		t.Error("the DNSEndpoint has no endpoints")
	}
	for _, r := range records {
		rec := &unstructured.Unstructured{Object: r.(map[string]any)}
		if name := str(rec, "dnsName"); !slices.Contains(hostnames, name) {
			t.Errorf("the DNSEndpoint publishes %s, which is not among the policy's hostnames %v", name, hostnames)
		}
		if typ := str(rec, "recordType"); typ != "A" && typ != "AAAA" {
			t.Errorf("the DNSEndpoint has a %s record; the manager writes A and AAAA only", typ)
		}
		// A number read from YAML is a float64 here, and prints as the integer it holds.
		if got, want := fmt.Sprint(rec.Object["recordTTL"]), fmt.Sprint(int64(ttl/time.Second)); got != want {
			t.Errorf("the DNSEndpoint's recordTTL is %s, want the policy's ttl in seconds, %s", got, want)
		}
	}
}

// docObject finds the example of a kind in docs/consumers.md.
func docObject(t *testing.T, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, e := range docExamples(t) {
		if filepath.Base(e.file) == "consumers.md" && e.obj.GetKind() == kind {
			return e.obj.DeepCopy()
		}
	}
	t.Fatalf("docs/consumers.md has no %s example", kind)
	return nil
}

// clusterDecisionResource reads the clusters of a clusterDecisionResource generator as
// Argo CD's ApplicationSet controller does (applicationset/generators/duck_type.go):
// the ConfigMap's apiVersion, and its kind as the resource; the resources listed in
// the controller's namespace by the generator's label selector; and from each, the
// matchKey of every entry of status.<statusListKey>.
func clusterDecisionResource(ctx context.Context, dyn dynamic.Interface, cm map[string]string, namespace string, selector *metav1.LabelSelector) ([]string, error) {
	group, version, ok := strings.Cut(cm["apiVersion"], "/")
	if !ok || cm["kind"] == "" || cm["matchKey"] == "" {
		return nil, fmt.Errorf("the ConfigMap lacks apiVersion group/version, kind or matchKey: %v", cm)
	}
	statusListKey := cm["statusListKey"]
	if statusListKey == "" {
		statusListKey = "clusters"
	}
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: cm["kind"]}
	list, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(selector)})
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvr, namespace, err)
	}
	var clusters []string
	for _, item := range list.Items {
		status, _ := item.Object["status"].(map[string]any)
		entries, _ := status[statusListKey].([]any)
		for _, e := range entries {
			if name, ok := e.(map[string]any)[cm["matchKey"]].(string); ok {
				clusters = append(clusters, name)
			}
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}

// TestApplicationSetReadsProxy reads a proxy's decisions exactly as Argo CD's
// clusterDecisionResource generator does, with the ConfigMap and the label selector
// of docs/consumers.md (the selector pointed at this test's proxy): before the move it
// lists cluster1; while cluster1 drains after the move it lists both, where the real
// Placement read the same way lists only cluster2.
func TestApplicationSetReadsProxy(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "appset")
	f := m.f
	dyn := dynamic.NewForConfigOrDie(bed.Hub.Config)

	cm := docObject(t, "ConfigMap")
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	appSet := docObject(t, "ApplicationSet")
	generators, _, _ := unstructured.NestedSlice(appSet.Object, "spec", "generators")
	if len(generators) != 1 {
		t.Fatalf("the ApplicationSet example has %d generators, want 1", len(generators))
	}
	raw, _, _ := unstructured.NestedMap(generators[0].(map[string]any), "clusterDecisionResource", "labelSelector")
	var selector metav1.LabelSelector
	if err := runtimeFromMap(raw, &selector); err != nil {
		t.Fatal(err)
	}
	const placementLabel = "cluster.open-cluster-management.io/placement"
	if selector.MatchLabels[placementLabel] == "" {
		t.Fatalf("the ApplicationSet example does not select decisions by %s: %+v", placementLabel, selector)
	}
	selector.MatchLabels[placementLabel] = m.proxy
	real := selector.DeepCopy()
	real.MatchLabels[placementLabel] = m.placement

	f.createPolicy(t, m.policy()) // cluster1 carries all the traffic: its checks fail
	waitGenerator(t, "the proxy", dyn, data, m.ns, &selector, m.c1)
	m.moveToC2(t)
	waitGenerator(t, "the real Placement", dyn, data, m.ns, real, m.c2)
	waitGenerator(t, "the proxy, cluster1 draining", dyn, data, m.ns, &selector, m.c1, m.c2)
}

// waitGenerator waits until the generator's read of the decisions lists exactly the
// clusters.
func waitGenerator(t *testing.T, what string, dyn dynamic.Interface, cm map[string]string, ns string, selector *metav1.LabelSelector, clusters ...string) {
	t.Helper()
	var last []string
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last, lastErr = clusterDecisionResource(ctx, dyn, cm, ns, selector)
		return lastErr == nil && slices.Equal(last, clusters), nil
	})
	if err != nil {
		t.Fatalf("the ApplicationSet generator's read of %s: %v (error %v), want %v", what, last, lastErr, clusters)
	}
}

// runtimeFromMap converts a map read from YAML into a typed value.
func runtimeFromMap(in map[string]any, out any) error {
	raw, err := yaml.Marshal(in)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(raw, out)
}
