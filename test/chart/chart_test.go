// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package chart checks the Helm chart with the real helm CLI (the test bed's build of
// helm.sh/helm/v3/cmd/helm): `helm lint` and `helm template` with its defaults and with
// every value set, and compares what it renders with the plain manifests, so that the
// two ways to install traffic-migration cannot drift apart.
package chart

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	tmcmd "open-cluster-management.io/traffic-migration/pkg/cmd"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

const (
	chartDir     = "../../charts/traffic-migration"
	manifestsDir = "../../manifests"
	namespace    = "open-cluster-management-addon"
)

// objects reads every YAML document of the given texts as a map, keyed by kind,
// namespace and name.
func objects(t *testing.T, texts ...string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, text := range texts {
		dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
		for {
			doc, err := dec.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%v in:\n%s", err, doc)
			}
			if obj == nil {
				continue
			}
			meta, _ := obj["metadata"].(map[string]any)
			key := obj["kind"].(string) + "/" + str(meta["namespace"]) + "/" + str(meta["name"])
			if _, dup := out[key]; dup {
				t.Errorf("%s appears twice", key)
			}
			out[key] = obj
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// chart is the chart's absolute path, for helm, which runs in a directory of its own.
func chart(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// helm runs the real helm CLI, with no cluster.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := testbed.Helm(t.Context(), t.TempDir(), "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// render renders the chart as `helm install` would install it in namespace, with
// values over its defaults.
func render(t *testing.T, values map[string]any) map[string]map[string]any {
	t.Helper()
	// As on a hub of Kubernetes 1.30 or later, which serves ValidatingAdmissionPolicies
	// (helm template alone assumes an older one).
	args := append([]string{"template", "traffic-migration", chart(t), "--namespace", namespace,
		"--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"}, testbed.HelmValues(t, values)...)
	return objects(t, helm(t, args...))
}

// everyValue sets every value the chart documents to something other than its default.
var everyValue = map[string]any{
	"image":          map[string]any{"repository": "registry.example/tm", "tag": "v9", "pullPolicy": "Always"},
	"agentImage":     "registry.example/tm-agent:v9",
	"replicas":       3,
	"leaderElection": true,
	"logLevel":       5,
	"loggingFormat":  "json",
	"resources":      map[string]any{"limits": map[string]any{"memory": "1Gi"}},
	"addonManager":   map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "48Mi"}, "limits": map[string]any{"memory": "192Mi"}}},
	"agent": map[string]any{"metricsLabels": "region=us-east", "logLevel": 4, "loggingFormat": "json",
		"nodeSelector":     map[string]any{"node-role.kubernetes.io/infra": ""},
		"tolerations":      []any{map[string]any{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}},
		"registries":       []any{map[string]any{"source": "quay.io/open-cluster-management", "mirror": "registry.example/ocm"}},
		"resources":        map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "64Mi"}, "limits": map[string]any{"memory": "256Mi"}},
		"proxy":            map[string]any{"httpProxy": "http://proxy.example:3128", "httpsProxy": "http://proxy.example:3129", "noProxy": "*.svc,10.96.0.1"},
		"imagePullSecrets": []any{map[string]any{"name": "regcred"}, map[string]any{"name": "mirror-creds"}}},
	"watchNamespaces":   []any{"team-a", "team-b"},
	"extraArgs":         []any{"--kube-api-qps=100", "--kube-api-burst=200"},
	"imagePullSecrets":  []any{map[string]any{"name": "regcred"}},
	"podAnnotations":    map[string]any{"example.com/team": "platform"},
	"podLabels":         map[string]any{"example.com/cost-center": "ocm"},
	"priorityClassName": "system-cluster-critical",
	"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
	"tolerations":       []any{map[string]any{"key": "control-plane", "operator": "Exists", "effect": "NoSchedule"}},
	"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
		"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "traffic-migration-manager"}}}},
	"extraEnv": []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"},
		map[string]any{"name": "NO_PROXY", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "proxy", "key": "no-proxy"}}}},
	"serviceAccount":      map[string]any{"annotations": map[string]any{"iam.gke.io/gcp-service-account": "tm@project.iam.gserviceaccount.com"}},
	"rbac":                map[string]any{"aggregateToDefaultRoles": false},
	"affinity":            map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname", "labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "traffic-migration-manager"}}}}}}},
	"podDisruptionBudget": map[string]any{"minAvailable": 2},
	"crds":                map[string]any{"enabled": true, "keep": false},
	"addon":               map[string]any{"installStrategy": placementsStrategy},
	"manager":             managerValues,
}

// placementsStrategy installs the agent on the clusters of two Placements, one with a
// config of its own.
var placementsStrategy = map[string]any{
	"type": "Placements",
	"placements": []any{
		map[string]any{"name": "gateway-proxy", "namespace": "gateway-system"},
		map[string]any{"name": "edge", "namespace": "edge-system",
			"configs":         []any{map[string]any{"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs", "name": "edge", "namespace": "edge-system"}},
			"rolloutStrategy": map[string]any{"type": "Progressive"}},
	},
}

// crdFiles are the generated CRDs in manifests/crd.
func crdFiles(t *testing.T) []string {
	t.Helper()
	crds, err := filepath.Glob(filepath.Join(manifestsDir, "crd", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRD in manifests/crd: %v", err)
	}
	return crds
}

// helmLabels are Helm's standard labels, which the chart puts on every object but the
// CRD and the plain manifests do not have.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}

// keepAnnotation is what makes `helm uninstall` leave a resource, and crds.keep puts
// on the CRD.
const keepAnnotation = "helm.sh/resource-policy"

// TestChartMatchesManifests renders the chart with its defaults and compares every
// object with manifests/ (the chart leaves the namespace to `helm install
// --create-namespace`), the CRD included: the chart's is the generated one, with the
// annotation that keeps it on uninstall.
func TestChartMatchesManifests(t *testing.T) {
	files := crdFiles(t)
	for _, f := range []string{"rbac.yaml", "aggregate-roles.yaml", "deployment.yaml", "addon-manager.yaml", "admissionpolicy.yaml", "clustermanagementaddon.yaml", "addondeploymentconfig.yaml"} {
		files = append(files, filepath.Join(manifestsDir, f))
	}
	var texts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	want := objects(t, texts...)
	crds := 0
	for key, obj := range want {
		if strings.HasPrefix(key, "CustomResourceDefinition/") {
			obj["metadata"].(map[string]any)["annotations"].(map[string]any)[keepAnnotation] = "keep"
			crds++
		}
	}
	if crds == 0 {
		t.Fatal("manifests/crd has no CustomResourceDefinition")
	}
	got := render(t, nil)
	for key, obj := range got {
		// Helm's standard labels are the chart's alone, on every object it renders.
		labels, _ := dig(obj, "metadata", "labels").(map[string]any)
		for _, l := range helmLabels {
			if _, ok := labels[l]; !ok && !strings.HasPrefix(key, "CustomResourceDefinition/") {
				t.Errorf("%s lacks Helm's label %s: %v", key, l, labels)
			}
			delete(labels, l)
		}
		if labels != nil && len(labels) == 0 {
			delete(obj["metadata"].(map[string]any), "labels")
		}
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("the chart does not render %s", key)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := yaml.Marshal(g)
			wb, _ := yaml.Marshal(w)
			t.Errorf("%s differs.\nchart:\n%s\nmanifests:\n%s", key, gb, wb)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("the chart renders %s, which manifests/ lacks", key)
		}
	}
}

// TestChartCRDsMatchManifests checks that the chart's files/crds, which its template
// renders, are the generated CRDs, and that nothing is left in crds/, which helm would
// install once and never upgrade.
func TestChartCRDsMatchManifests(t *testing.T) {
	for _, f := range crdFiles(t) {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(chartDir, "files", "crds", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("charts/traffic-migration/files/crds/%s differs from manifests/crd (run make manifests): %v", filepath.Base(f), err)
		}
	}
	if _, err := os.Stat(filepath.Join(chartDir, "crds")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the chart has a crds/ folder (%v): helm never upgrades what it holds", err)
	}
}

// TestChartCRDValues checks crds.enabled and crds.keep: the CRD renders by default,
// annotated to stay on uninstall; without keep it has no such annotation; disabled, it
// does not render at all.
func TestChartCRDValues(t *testing.T) {
	const crdKey = "CustomResourceDefinition//trafficmigrationpolicies.traffic.open-cluster-management.io"
	for name, tc := range map[string]struct {
		values   map[string]any
		rendered bool
		keep     bool
	}{
		"defaults":             {values: nil, rendered: true, keep: true},
		"keep false":           {values: map[string]any{"crds": map[string]any{"keep": false}}, rendered: true, keep: false},
		"enabled false":        {values: map[string]any{"crds": map[string]any{"enabled": false}}, rendered: false},
		"both set":             {values: map[string]any{"crds": map[string]any{"enabled": true, "keep": true}}, rendered: true, keep: true},
		"enabled without keep": {values: map[string]any{"crds": map[string]any{"enabled": true, "keep": false}}, rendered: true, keep: false},
	} {
		t.Run(name, func(t *testing.T) {
			crd, ok := render(t, tc.values)[crdKey]
			if ok != tc.rendered {
				t.Fatalf("CRD rendered: %t, want %t", ok, tc.rendered)
			}
			if !ok {
				return
			}
			annotations, _ := crd["metadata"].(map[string]any)["annotations"].(map[string]any)
			if got, want := annotations[keepAnnotation], map[bool]any{true: "keep", false: nil}[tc.keep]; got != want {
				t.Errorf("annotation %s: %v, want %v", keepAnnotation, got, want)
			}
			if annotations["controller-gen.kubebuilder.io/version"] == nil {
				t.Errorf("the generated CRD's own annotations are lost: %v", annotations)
			}
		})
	}
	args := append([]string{"template", "traffic-migration", chart(t), "--namespace", namespace},
		testbed.HelmValues(t, map[string]any{"crds": map[string]any{"keep": "yes"}})...)
	if _, err := testbed.Helm(t.Context(), t.TempDir(), "", args...); err == nil || !strings.Contains(err.Error(), "/crds/keep") {
		t.Errorf("helm template with crds.keep a string: %v, want the schema to refuse it", err)
	}
}

// TestChartValues checks that the values the chart documents reach the objects.
func TestChartValues(t *testing.T) {
	got := render(t, everyValue)
	deploy := got["Deployment/"+namespace+"/traffic-migration-manager"]
	spec := deploy["spec"].(map[string]any)
	container := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	checks := map[string][2]any{
		"replicas":   {spec["replicas"], float64(3)},
		"image":      {container["image"], "registry.example/tm:v9"},
		"pullPolicy": {container["imagePullPolicy"], "Always"},
		"args": {container["args"], []any{"manager", "--controllers=policy", "--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "-v=5", "--logging-format=json",
			"--prometheus-allowlist=https://prom.example.com/,thanos.monitoring.svc,*.monitoring.svc,10.0.0.0/8",
			"--prometheus-max-answer-bytes=16777216", "--prometheus-max-series=500",
			"--max-drain-duration=24h", "--on-max-drain-duration=Remove",
			"--dns-domains=team-a=*.a.example.com,team-b=shop.example.com", "--dns-allow-private=false", "--dns-owner-id=hub-eu",
			"--dns-nameserver-allowlist=public,10.0.53.0/24,*.ns.corp.example",
			"--watch-namespaces=team-a,team-b",
			"--kube-api-qps=100", "--kube-api-burst=200"}},
		// Helm merges maps: the limit changes, the default requests stay.
		"resources": {container["resources"], map[string]any{"limits": map[string]any{"memory": "1Gi"}, "requests": map[string]any{"cpu": "50m", "memory": "128Mi"}}},
	}
	pod := spec["template"].(map[string]any)
	podSpec := pod["spec"].(map[string]any)
	checks["pod annotations"] = [2]any{dig(pod, "metadata", "annotations"), everyValue["podAnnotations"]}
	checks["pod label"] = [2]any{dig(pod, "metadata", "labels", "example.com/cost-center"), "ocm"}
	for _, k := range []string{"imagePullSecrets", "priorityClassName", "nodeSelector", "tolerations", "affinity", "topologySpreadConstraints"} {
		checks[k] = [2]any{jsonOf(t, podSpec[k]), jsonOf(t, everyValue[k])}
	}
	checks["extraEnv"] = [2]any{jsonOf(t, container["env"]), jsonOf(t, everyValue["extraEnv"])}
	checks["ServiceAccount annotations"] = [2]any{dig(got["ServiceAccount/"+namespace+"/traffic-migration-manager"], "metadata", "annotations"),
		everyValue["serviceAccount"].(map[string]any)["annotations"]}
	for _, role := range []string{"view", "edit"} {
		if key := "ClusterRole//open-cluster-management:traffic-migration:" + role; got[key] != nil {
			t.Errorf("rbac.aggregateToDefaultRoles false renders %s", key)
		}
	}
	pdb := got["PodDisruptionBudget/"+namespace+"/traffic-migration-manager"]
	checks["PodDisruptionBudget"] = [2]any{dig(pdb, "spec"), map[string]any{"minAvailable": float64(2),
		"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "traffic-migration-manager"}}}}
	adc := got["AddOnDeploymentConfig/"+namespace+"/traffic-migration"]
	agent := everyValue["agent"].(map[string]any)
	checks["agent nodePlacement"] = [2]any{jsonOf(t, dig(adc, "spec", "nodePlacement")),
		jsonOf(t, map[string]any{"nodeSelector": agent["nodeSelector"], "tolerations": agent["tolerations"]})}
	checks["agent registries"] = [2]any{jsonOf(t, dig(adc, "spec", "registries")), jsonOf(t, agent["registries"])}
	checks["agent resources"] = [2]any{jsonOf(t, dig(adc, "spec", "resourceRequirements")),
		jsonOf(t, []any{map[string]any{"containerID": "deployments:traffic-migration-agent:agent", "resources": agent["resources"]}})}
	checks["agent proxy"] = [2]any{jsonOf(t, dig(adc, "spec", "proxyConfig")), jsonOf(t, agent["proxy"])}
	checks["metrics labels"] = [2]any{adc["spec"].(map[string]any)["customizedVariables"], []any{
		map[string]any{"name": "LOG_LEVEL", "value": "4"},
		map[string]any{"name": "LOGGING_FORMAT", "value": "json"},
		map[string]any{"name": "METRICS_LABELS", "value": "region=us-east"},
		map[string]any{"name": "IMAGE_PULL_SECRETS", "value": "regcred,mirror-creds"},
	}}
	// The add-on manager: the same image, replicas, pod settings and environment, its
	// own ServiceAccount, resources and PodDisruptionBudget, and the agent's image.
	addonDeploy := got[addonManagerDeploymentKey]
	addonSpec, _ := addonDeploy["spec"].(map[string]any)
	addonPod, _ := dig(addonDeploy, "spec", "template").(map[string]any)
	addonPodSpec, _ := dig(addonDeploy, "spec", "template", "spec").(map[string]any)
	addonContainer, _ := dig(addonDeploy, "spec", "template", "spec", "containers").([]any)
	if addonSpec == nil || addonPodSpec == nil || len(addonContainer) == 0 {
		t.Fatalf("no add-on manager Deployment: %v", keys(got))
	}
	ac := addonContainer[0].(map[string]any)
	checks["add-on manager replicas"] = [2]any{addonSpec["replicas"], float64(3)}
	checks["add-on manager image"] = [2]any{ac["image"], "registry.example/tm:v9"}
	checks["add-on manager args"] = [2]any{ac["args"], []any{"manager", "--controllers=addon-manager", "--leader-elect=true", "--leader-election-id=traffic-migration-addon-manager",
		"--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--agent-image=registry.example/tm-agent:v9", "-v=5", "--logging-format=json"}}
	checks["add-on manager ServiceAccount"] = [2]any{addonPodSpec["serviceAccountName"], "traffic-migration-addon-manager"}
	checks["add-on manager resources"] = [2]any{jsonOf(t, ac["resources"]), jsonOf(t, everyValue["addonManager"].(map[string]any)["resources"])}
	checks["add-on manager extraEnv"] = [2]any{jsonOf(t, ac["env"]), jsonOf(t, everyValue["extraEnv"])}
	checks["add-on manager pod annotations"] = [2]any{dig(addonPod, "metadata", "annotations"), everyValue["podAnnotations"]}
	for _, k := range []string{"imagePullSecrets", "priorityClassName", "nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "securityContext"} {
		checks["add-on manager "+k] = [2]any{jsonOf(t, addonPodSpec[k]), jsonOf(t, podSpec[k])}
	}
	checks["add-on manager PodDisruptionBudget"] = [2]any{dig(got["PodDisruptionBudget/"+namespace+"/traffic-migration-addon-manager"], "spec"), map[string]any{"minAvailable": float64(2),
		"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "traffic-migration-addon-manager"}}}}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %#v, want %#v", name, c[0], c[1])
		}
	}
}

// TestChartLeaderElectionOff renders the chart with leader election off: with one
// replica it says so to the manager, with more helm refuses, as every replica would
// then run the controllers.
func TestChartLeaderElectionOff(t *testing.T) {
	got := render(t, map[string]any{"leaderElection": false})
	for _, args := range [][]any{managerArgs(t, got), addonManagerArgs(t, got)} {
		if !slices.Contains(args, any("--leader-elect=false")) {
			t.Errorf("args %v, want --leader-elect=false", args)
		}
	}

	args := append([]string{"template", "traffic-migration", chart(t), "--namespace", namespace},
		testbed.HelmValues(t, map[string]any{"leaderElection": false, "replicas": 2})...)
	_, err := testbed.Helm(t.Context(), t.TempDir(), "", args...)
	if err == nil || !strings.Contains(err.Error(), "replicas > 1 needs leaderElection: true") {
		t.Errorf("helm template with 2 replicas and no leader election: %v, want it refused", err)
	}
}

// TestChartLint runs `helm lint --strict` (warnings fail too) with the chart's
// defaults, with every value set (the manager's NetworkPolicy on, every rule given),
// and with the NetworkPolicy on and only what it needs, the API server's addresses.
func TestChartLint(t *testing.T) {
	networkPolicyOn := map[string]any{"manager": map[string]any{"networkPolicy": map[string]any{
		"enabled": true, "apiServer": map[string]any{"cidrs": []any{"192.0.2.10/32"}},
	}}}
	for name, values := range map[string]map[string]any{"defaults": nil, "every value set": everyValue, "NetworkPolicy on": networkPolicyOn} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"lint", chart(t), "--strict", "--namespace", namespace}, testbed.HelmValues(t, values)...)
			out := helm(t, args...)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}

// TestChartInstallStrategy checks addon.installStrategy: Manual by default, with no
// placements; Placements renders the placements as given; Placements without any, or
// a type OCM does not know, is refused with a message that names the value.
func TestChartInstallStrategy(t *testing.T) {
	strategy := func(values map[string]any) any {
		cma := render(t, values)["ClusterManagementAddOn//traffic-migration"]
		return cma["spec"].(map[string]any)["installStrategy"]
	}
	if got, want := strategy(nil), map[string]any{"type": "Manual"}; !reflect.DeepEqual(got, want) {
		t.Errorf("default install strategy %v, want %v", got, want)
	}
	if got, want := strategy(map[string]any{"addon": map[string]any{"installStrategy": placementsStrategy}}), placementsStrategy; !reflect.DeepEqual(got, want) {
		t.Errorf("install strategy %v, want %v", got, want)
	}
	for name, tc := range map[string]struct {
		strategy map[string]any
		want     string
	}{
		"Placements without placements": {map[string]any{"type": "Placements"}, "needs addon.installStrategy.placements"},
		"unknown type":                  {map[string]any{"type": "Auto"}, "/addon/installStrategy/type"},
		"placement without namespace":   {map[string]any{"type": "Placements", "placements": []any{map[string]any{"name": "p"}}}, "namespace"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"template", "traffic-migration", chart(t), "--namespace", namespace},
				testbed.HelmValues(t, map[string]any{"addon": map[string]any{"installStrategy": tc.strategy}})...)
			if _, err := testbed.Helm(t.Context(), t.TempDir(), "", args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: %v, want it refused saying %q", err, tc.want)
			}
		})
	}
}

// defaultImage is the image the chart runs by default, at its appVersion.
func defaultImage(t *testing.T) string {
	t.Helper()
	image, err := testbed.ChartImage()
	if err != nil {
		t.Fatal(err)
	}
	return image
}

// jsonOf is v as JSON, to compare what helm rendered with the values given.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNoLatestImage: nothing the project ships names an image by the tag latest, which
// would change under a running release: the chart's default tag is its appVersion, the
// plain manifests pin the same, and the schema refuses latest.
func TestNoLatestImage(t *testing.T) {
	latest := regexp.MustCompile(`:latest\b|tag: *"?latest"?`)
	for _, dir := range []string{chartDir, manifestsDir} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if latest.MatchString(line) {
					t.Errorf("%s:%d names an image by latest: %s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := render(t, nil)
	container := dig(got["Deployment/"+namespace+"/traffic-migration-manager"], "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if container["image"] != defaultImage(t) {
		t.Errorf("the default image is %v, want the chart's appVersion, %s", container["image"], defaultImage(t))
	}
	if err := renderError(t, map[string]any{"image": map[string]any{"tag": "latest"}}); err == nil {
		t.Error("the chart accepts image.tag latest")
	}
}

// TestChartArgsTheManagerTakes checks that the manager takes the flags the chart
// renders, by default and from every value: each Deployment's arguments go through the
// real command's flag parsing and the checks it makes before it starts (a chart value
// the manager refuses would leave its pods crash-looping).
func TestChartArgsTheManagerTakes(t *testing.T) {
	for name, values := range map[string]map[string]any{"defaults": nil, "every value": everyValue} {
		for key, obj := range render(t, values) {
			if !strings.HasPrefix(key, "Deployment/") {
				continue
			}
			containers, _ := dig(obj, "spec", "template", "spec", "containers").([]any)
			for _, c := range containers {
				var args []string
				for _, a := range c.(map[string]any)["args"].([]any) {
					args = append(args, a.(string))
				}
				if len(args) == 0 || args[0] != "manager" {
					t.Fatalf("%s, %s: args %q do not run the manager", name, key, args)
				}
				root := tmcmd.NewRootCommand(io.Discard, io.Discard)
				manager, _, err := root.Find(args[:1])
				if err != nil {
					t.Fatal(err)
				}
				if err := manager.ParseFlags(args[1:]); err != nil {
					t.Errorf("%s, %s: the manager refuses %q: %v", name, key, args[1:], err)
					continue
				}
				if err := manager.PreRunE(manager, manager.Flags().Args()); err != nil {
					t.Errorf("%s, %s: the manager refuses %q: %v", name, key, args[1:], err)
				}
			}
		}
	}
}
