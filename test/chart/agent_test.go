// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"open-cluster-management.io/traffic-migration/pkg/hub/addon"
)

const adcKey = "AddOnDeploymentConfig/" + namespace + "/traffic-migration"

// agentDeployment renders the chart with values, then the agent's Deployment as the
// manager's add-on framework renders it for a cluster whose add-on uses the chart's
// AddOnDeploymentConfig, with the agent image the chart gives the add-on manager
// (--agent-image): what a cluster runs.
func agentDeployment(t *testing.T, values map[string]any) *appsv1.Deployment {
	t.Helper()
	objs := render(t, values)
	raw, err := json.Marshal(objs[adcKey])
	if err != nil {
		t.Fatal(err)
	}
	// The chart writes v1alpha1, which OCM serves as v1beta1 with the same spec; a
	// field of the chart's that v1beta1 lacks fails here.
	config := &addonv1beta1.AddOnDeploymentConfig{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(config); err != nil {
		t.Fatalf("the chart's AddOnDeploymentConfig: %v\n%s", err, raw)
	}
	image := ""
	for _, arg := range addonManagerArgs(t, objs) {
		if s, _ := arg.(string); strings.HasPrefix(s, "--agent-image=") {
			image = strings.TrimPrefix(s, "--agent-image=")
		}
	}
	hash, err := utils.GetAddOnDeploymentConfigSpecHash(config)
	if err != nil {
		t.Fatal(err)
	}
	mca := &addonv1beta1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "traffic-migration", Namespace: "cluster1"},
		Status: addonv1beta1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1beta1.ConfigReference{{
			ConfigGroupResource: addonv1beta1.ConfigGroupResource{Group: utils.AddOnDeploymentConfigGVR.Group, Resource: utils.AddOnDeploymentConfigGVR.Resource},
			DesiredConfig:       &addonv1beta1.ConfigSpecHash{ConfigReferent: addonv1beta1.ConfigReferent{Namespace: config.Namespace, Name: config.Name}, SpecHash: hash},
		}}},
	}
	a, err := addon.NewAgentAddon(kubefake.NewClientset(), addonfake.NewSimpleClientset(config), addon.Options{AgentImage: image})
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := a.Manifests(t.Context(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}}, mca)
	if err != nil {
		t.Fatalf("render the agent with the chart's AddOnDeploymentConfig: %v", err)
	}
	for _, o := range manifests {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d
		}
	}
	t.Fatalf("no Deployment among the agent's manifests: %v", manifests)
	return nil
}

// TestChartAgentValues: every agent value of the chart reaches the agent's
// Deployment through the AddOnDeploymentConfig and the add-on framework: its
// namespace, image (with the registries' mirror), node placement, pull secrets,
// resources, proxy settings, log level, logging format and metrics labels. With the
// chart's defaults the agent keeps its own resources, and has no proxy and no pull
// secret.
func TestChartAgentValues(t *testing.T) {
	d := agentDeployment(t, nil)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if d.Namespace != "open-cluster-management-agent-addon" || c.Image != defaultImage(t) {
		t.Errorf("defaults: namespace %s, image %s", d.Namespace, c.Image)
	}
	if got := c.Resources.Limits.Memory().String(); got != "128Mi" || len(c.Env) != 0 || len(pod.ImagePullSecrets) != 0 {
		t.Errorf("defaults: memory limit %s, env %v, imagePullSecrets %v; want 128Mi and none", got, c.Env, pod.ImagePullSecrets)
	}

	values := map[string]any{"agent": map[string]any{
		"installNamespace": "tm-agent",
		"logLevel":         5,
		"loggingFormat":    "json",
		"metricsLabels":    "region=us-east",
		"nodeSelector":     map[string]any{"node-role.kubernetes.io/infra": ""},
		"tolerations":      []any{map[string]any{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}},
		"registries":       []any{map[string]any{"source": "quay.io/open-cluster-management", "mirror": "registry.example/ocm"}},
		"resources":        map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "64Mi"}, "limits": map[string]any{"memory": "256Mi"}},
		"proxy": map[string]any{"httpProxy": "http://proxy.example:3128", "httpsProxy": "http://proxy.example:3129", "noProxy": "*.svc,10.96.0.1",
			"caBundle": proxyCA},
		"imagePullSecrets": []any{map[string]any{"name": "regcred"}, map[string]any{"name": "mirror-creds"}},
	}}
	d = agentDeployment(t, values)
	pod = d.Spec.Template.Spec
	c = pod.Containers[0]
	checks := map[string][2]any{
		"namespace":        {d.Namespace, "tm-agent"},
		"image":            {c.Image, strings.Replace(defaultImage(t), "quay.io/open-cluster-management/", "registry.example/ocm/", 1)},
		"nodeSelector":     {pod.NodeSelector, map[string]string{"node-role.kubernetes.io/infra": ""}},
		"tolerations":      {pod.Tolerations, []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
		"imagePullSecrets": {pod.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "mirror-creds"}}},
		"env": {c.Env, []corev1.EnvVar{
			{Name: "HTTP_PROXY", Value: "http://proxy.example:3128"},
			{Name: "HTTPS_PROXY", Value: "http://proxy.example:3129"},
			{Name: "NO_PROXY", Value: "*.svc,10.96.0.1"},
			{Name: "PROXY_CA_BUNDLE", Value: proxyCA},
		}},
		"cpu request":    {c.Resources.Requests.Cpu().String(), "20m"},
		"memory request": {c.Resources.Requests.Memory().String(), "64Mi"},
		"memory limit":   {c.Resources.Limits.Memory().String(), "256Mi"},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %#v, want %#v", name, c[0], c[1])
		}
	}
	for _, arg := range []string{"-v=5", "--logging-format=json", "--metrics-labels=region=us-east", "--addon-namespace=tm-agent"} {
		found := false
		for _, a := range c.Args {
			found = found || a == arg
		}
		if !found {
			t.Errorf("the agent's args %q lack %s", c.Args, arg)
		}
	}

	// A proxy for plain HTTP only still sets NO_PROXY.
	d = agentDeployment(t, map[string]any{"agent": map[string]any{"proxy": map[string]any{"httpProxy": "http://proxy.example:3128", "noProxy": "10.0.0.0/8"}}})
	if env := d.Spec.Template.Spec.Containers[0].Env; !reflect.DeepEqual(env, []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy.example:3128"}, {Name: "NO_PROXY", Value: "10.0.0.0/8"}}) {
		t.Errorf("HTTP proxy only: env %v", env)
	}
	// noProxy alone would be dropped by OCM without a word: the chart says so.
	err := renderError(t, map[string]any{"agent": map[string]any{"proxy": map[string]any{"noProxy": "10.0.0.0/8"}}})
	if err == nil || !strings.Contains(err.Error(), "agent.proxy.noProxy needs agent.proxy.httpProxy or agent.proxy.httpsProxy") {
		t.Errorf("helm template with agent.proxy.noProxy alone: %v, want it refused", err)
	}
	err = renderError(t, map[string]any{"agent": map[string]any{"proxy": map[string]any{"caBundle": proxyCA}}})
	if err == nil || !strings.Contains(err.Error(), "agent.proxy.caBundle needs agent.proxy.httpProxy or agent.proxy.httpsProxy") {
		t.Errorf("helm template with agent.proxy.caBundle alone: %v, want it refused", err)
	}
}

// proxyCA stands for a proxy's CA certificate, in PEM: the chart and the add-on carry
// it to the agent as it is.
const proxyCA = "-----BEGIN CERTIFICATE-----\nMIIBproxy\n-----END CERTIFICATE-----\n"

// TestChartNewValuesSchema: the schema refuses mistakes in the values of the agent's
// resources, proxy and pull secrets, the manager's environment, spread constraints and
// ServiceAccount, and rbac, naming the value.
func TestChartNewValuesSchema(t *testing.T) {
	for name, tc := range map[string]struct {
		values map[string]any
		want   string
	}{
		"an agent pull secret by a bad name": {map[string]any{"agent": map[string]any{"imagePullSecrets": []any{map[string]any{"name": "Reg_Cred"}}}}, "/agent/imagePullSecrets/0/name"},
		"an agent pull secret as a string":   {map[string]any{"agent": map[string]any{"imagePullSecrets": []any{"regcred"}}}, "/agent/imagePullSecrets/0"},
		"a misspelt agent proxy":             {map[string]any{"agent": map[string]any{"proxy": map[string]any{"httpsproxy": "http://p:3128"}}}, "'httpsproxy' not allowed"},
		"an agent proxy with a space":        {map[string]any{"agent": map[string]any{"proxy": map[string]any{"httpProxy": "http://p:3128 "}}}, "/agent/proxy/httpProxy"},
		"a proxy CA that is not PEM":         {map[string]any{"agent": map[string]any{"proxy": map[string]any{"httpsProxy": "http://p:3128", "caBundle": "MIIB"}}}, "/agent/proxy/caBundle"},
		"agent resources by another name":    {map[string]any{"agent": map[string]any{"resources": map[string]any{"limit": map[string]any{"memory": "1Gi"}}}}, "'limit' not allowed"},
		"an env var without a name":          {map[string]any{"extraEnv": []any{map[string]any{"value": "x"}}}, "/extraEnv/0"},
		"an env var as a string":             {map[string]any{"extraEnv": []any{"HTTPS_PROXY=http://p:3128"}}, "/extraEnv/0"},
		"a spread without a topology key":    {map[string]any{"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}}}, "/topologySpreadConstraints/0"},
		"a ServiceAccount name":              {map[string]any{"serviceAccount": map[string]any{"name": "other"}}, "'name' not allowed"},
		"an annotation that is a number":     {map[string]any{"serviceAccount": map[string]any{"annotations": map[string]any{"a": 1}}}, "/serviceAccount/annotations/a"},
		"roles as a word":                    {map[string]any{"rbac": map[string]any{"aggregateToDefaultRoles": "yes"}}, "/rbac/aggregateToDefaultRoles"},
	} {
		t.Run(name, func(t *testing.T) {
			err := renderError(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: %v, want it refused naming %q", err, tc.want)
			}
		})
	}
}
