// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package addon

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

const testImage = "quay.io/open-cluster-management/traffic-migration:1.2.3"

// renderAgent renders the agent's manifests for cluster1 as the add-on framework does,
// with config as the cluster's AddOnDeploymentConfig (nil: none), and returns the
// agent's Deployment.
func renderAgent(t *testing.T, config *addonv1beta1.AddOnDeploymentConfig) (*appsv1.Deployment, error) {
	t.Helper()
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: "cluster1"}}
	addonClient := addonfake.NewSimpleClientset()
	if config != nil {
		addonClient = addonfake.NewSimpleClientset(config)
		hash, err := utils.GetAddOnDeploymentConfigSpecHash(config)
		if err != nil {
			t.Fatal(err)
		}
		mca.Status.ConfigReferences = []addonv1beta1.ConfigReference{{
			ConfigGroupResource: addonv1beta1.ConfigGroupResource{Group: utils.AddOnDeploymentConfigGVR.Group, Resource: utils.AddOnDeploymentConfigGVR.Resource},
			DesiredConfig:       &addonv1beta1.ConfigSpecHash{ConfigReferent: addonv1beta1.ConfigReferent{Namespace: config.Namespace, Name: config.Name}, SpecHash: hash},
		}}
	}
	a, err := NewAgentAddon(kubefake.NewClientset(), addonClient, Options{AgentImage: testImage})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := a.Manifests(t.Context(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}}, mca)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d, nil
		}
	}
	t.Fatalf("no Deployment among the agent's manifests: %v", objs)
	return nil, nil
}

func testConfig(spec addonv1beta1.AddOnDeploymentConfigSpec) *addonv1beta1.AddOnDeploymentConfig {
	return &addonv1beta1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: "traffic-migration", Namespace: "open-cluster-management-addon"}, Spec: spec}
}

// TestAgentDeploymentDefaults: without an AddOnDeploymentConfig the agent runs the
// manager's image in the default namespace, with its own resources, no proxy and no
// pull secret.
func TestAgentDeploymentDefaults(t *testing.T) {
	d, err := renderAgent(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if d.Namespace != DefaultInstallNamespace || c.Image != testImage {
		t.Errorf("namespace %s, image %s; want %s, %s", d.Namespace, c.Image, DefaultInstallNamespace, testImage)
	}
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
	}
	if !equalResources(c.Resources, want) {
		t.Errorf("resources %v, want %v", c.Resources, want)
	}
	if len(c.Env) != 0 || len(d.Spec.Template.Spec.ImagePullSecrets) != 0 {
		t.Errorf("env %v, imagePullSecrets %v; want none", c.Env, d.Spec.Template.Spec.ImagePullSecrets)
	}
}

// TestAgentDeploymentConfig: each part of the AddOnDeploymentConfig that the chart's
// agent values set reaches the agent's Deployment: the install namespace, the
// variables (log level, logging format, metrics labels, pull secrets), node
// placement, registries, the container's resources, and the proxy settings, quoted
// (a NO_PROXY that starts with * is no YAML alias).
func TestAgentDeploymentConfig(t *testing.T) {
	config := testConfig(addonv1beta1.AddOnDeploymentConfigSpec{
		AgentInstallNamespace: "tm-agent",
		CustomizedVariables: []addonv1beta1.CustomizedVariable{
			{Name: "LOG_LEVEL", Value: "4"},
			{Name: "LOGGING_FORMAT", Value: "json"},
			{Name: MetricsLabelsVariable, Value: "region=us-east"},
			{Name: ImagePullSecretsVariable, Value: "regcred, mirror-creds"},
		},
		NodePlacement: &addonv1beta1.NodePlacement{
			NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
			Tolerations:  []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
		Registries: []addonv1beta1.ImageMirror{{Source: "quay.io/open-cluster-management", Mirror: "registry.example/ocm"}},
		ResourceRequirements: []addonv1beta1.ContainerResourceRequirements{{
			ContainerID: "deployments:traffic-migration-agent:agent",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
		}},
		ProxyConfig: addonv1beta1.ProxyConfig{HTTPProxy: "http://proxy.example:3128", HTTPSProxy: "http://user:p%40ss@proxy.example:3128", NoProxy: "*.svc,10.96.0.1,kubernetes.default.svc",
			CABundle: []byte(proxyCABundle)},
	})
	d, err := renderAgent(t, config)
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	checks := map[string][2]any{
		"namespace":        {d.Namespace, "tm-agent"},
		"image":            {c.Image, "registry.example/ocm/traffic-migration:1.2.3"},
		"nodeSelector":     {pod.NodeSelector, config.Spec.NodePlacement.NodeSelector},
		"tolerations":      {pod.Tolerations, config.Spec.NodePlacement.Tolerations},
		"imagePullSecrets": {pod.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "mirror-creds"}}},
		"env": {c.Env, []corev1.EnvVar{
			{Name: "HTTP_PROXY", Value: "http://proxy.example:3128"},
			{Name: "HTTPS_PROXY", Value: "http://user:p%40ss@proxy.example:3128"},
			{Name: "NO_PROXY", Value: "*.svc,10.96.0.1,kubernetes.default.svc"},
			{Name: "PROXY_CA_BUNDLE", Value: proxyCABundle},
		}},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %#v, want %#v", name, c[0], c[1])
		}
	}
	if !equalResources(c.Resources, config.Spec.ResourceRequirements[0].Resources) {
		t.Errorf("resources %v, want %v", c.Resources, config.Spec.ResourceRequirements[0].Resources)
	}
	for _, arg := range []string{"-v=4", "--logging-format=json", "--metrics-labels=region=us-east", "--addon-namespace=tm-agent"} {
		if !contains(c.Args, arg) {
			t.Errorf("args %q lack %s", c.Args, arg)
		}
	}
}

// proxyCABundle stands for a proxy's CA certificate: the template carries it as it is,
// lines and quotes included.
const proxyCABundle = "-----BEGIN CERTIFICATE-----\nMIIB\"x\\y\n-----END CERTIFICATE-----\n"

// TestAgentDeploymentResourcesOfOtherContainers: resource requirements for another
// container leave the agent's defaults; those for every container (*:*:*) apply.
func TestAgentDeploymentResourcesOfOtherContainers(t *testing.T) {
	big := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	for id, wantLimit := range map[string]string{"deployments:other:agent": "128Mi", "*:*:*": "1Gi", "deployments:*:agent": "1Gi"} {
		d, err := renderAgent(t, testConfig(addonv1beta1.AddOnDeploymentConfigSpec{
			ResourceRequirements: []addonv1beta1.ContainerResourceRequirements{{ContainerID: id, Resources: big}},
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.String() != wantLimit {
			t.Errorf("containerID %s: memory limit %s, want %s", id, got.String(), wantLimit)
		}
	}
}

// TestAgentDeploymentNoProxyAlone: NO_PROXY without a proxy is left out, as the add-on
// framework's own values do.
func TestAgentDeploymentNoProxyAlone(t *testing.T) {
	d, err := renderAgent(t, testConfig(addonv1beta1.AddOnDeploymentConfigSpec{ProxyConfig: addonv1beta1.ProxyConfig{NoProxy: "10.0.0.0/8"}}))
	if err != nil {
		t.Fatal(err)
	}
	if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 0 {
		t.Errorf("env %v, want none", env)
	}
}

// TestAgentDeploymentBadPullSecret: a pull secret that is no Secret's name fails the
// rendering, naming it, rather than deploying an agent without it.
func TestAgentDeploymentBadPullSecret(t *testing.T) {
	_, err := renderAgent(t, testConfig(addonv1beta1.AddOnDeploymentConfigSpec{
		CustomizedVariables: []addonv1beta1.CustomizedVariable{{Name: ImagePullSecretsVariable, Value: "regcred,Not_A_Name"}},
	}))
	if err == nil || !strings.Contains(err.Error(), `IMAGE_PULL_SECRETS "Not_A_Name"`) {
		t.Errorf("render with a bad pull secret: %v, want it refused, naming it", err)
	}
}

func equalResources(a, b corev1.ResourceRequirements) bool {
	eq := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || v.Cmp(w) != 0 {
				return false
			}
		}
		return true
	}
	return eq(a.Requests, b.Requests) && eq(a.Limits, b.Limits)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
