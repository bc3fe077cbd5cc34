// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// What the add-on is, as a user installs and enables it: the names the chart, the
// agent's Deployment and OCM's registration give, spelled out here rather than taken
// from the product's code, so that the test notices when they change.
const (
	addonName                = "traffic-migration"
	addonConfigNamespace     = managerNamespace
	agentDeployment          = "traffic-migration-agent"
	agentServiceAccount      = "traffic-migration-agent"
	agentHubKubeconfigSecret = "traffic-migration-hub-kubeconfig"
	// agentContainer is the agent's container in its Deployment, and agentBinary the
	// binary of the image it runs (see the Dockerfile).
	agentContainer = "agent"
	agentBinary    = "/traffic-migration-agent"
)

// agentLabels select the agent's pods.
var agentLabels = map[string]string{"app.kubernetes.io/name": "traffic-migration-agent"}

// clusterLabelValues are the values of the cluster label that each spoke's metrics
// pipeline puts on its samples: not the OCM cluster names, as in many real pipelines.
var clusterLabelValues = map[string]string{
	cluster1: "cluster1-east",
	cluster2: "cluster2-west",
}

// metricsLabels are the labels each spoke's agent is configured with through a
// per-cluster AddOnDeploymentConfig, so that the story's query can pick the cluster
// label's value from what the agent reports.
var metricsLabels = map[string]string{
	cluster1: trafficClusterKey + "=" + clusterLabelValues[cluster1],
	cluster2: trafficClusterKey + "=" + clusterLabelValues[cluster2],
}

// The story's names: the real Placement, its proxy and the Gateway, in gatewaySystem on
// the hub (the Placement and policy) and on the spokes (the Gateway).
const (
	gatewaySystem  = "gateway-system"
	gatewayName    = "gw"
	placementName  = "gateway"
	proxyName      = "gateway-proxy"
	policyName     = "migrate"
	clusterSetName = "e2e-gateways"
	regionLabel    = "region"
)

// addonTest is the state the steps of TestAddOn hand on to each other.
type addonTest struct {
	// parent is TestAddOn's own T: what the steps start outlives the step that starts
	// it, so it is cleaned up (and logs) through parent.
	parent *testing.T
	// pods watches every pod of ours for the whole test.
	pods *podWatcher

	traffic     trafficclient.Interface
	gateways    map[string]gatewayclient.Interface
	traefik     map[string]*testbed.Traefik
	clusterIDs  map[string]string
	agentUser   string
	agentGroups []string
}

// TestAddOn installs traffic-migration as a fleet admin does and runs it as pods on
// the nodes of the hub and the spokes: the chart installed on the hub with the real
// helm, its manager running as two replicas from the image 'make image' built, the
// add-on enabled with clusteradm, the agent's Deployment and hub credentials delivered
// by OCM to each spoke and running as a pod, its reports on the hub, its metrics
// labels configured per cluster, its permissions on the hub and on its cluster, and
// the seed's migration from cluster1 to cluster2 gated by the real agents' Gateway
// readiness, during which the leading manager's pod is killed. Every pod of ours stays
// Running and Ready, with no restart, for the whole test.
func TestAddOn(t *testing.T) {
	a := &addonTest{
		parent:     t,
		traffic:    hub.Traffic,
		gateways:   map[string]gatewayclient.Interface{},
		traefik:    map[string]*testbed.Traefik{},
		clusterIDs: map[string]string{},
	}
	for _, c := range []string{cluster1, cluster2} {
		var err error
		if a.gateways[c], err = gatewayclient.NewForConfig(bed.Spokes[c].Config); err != nil {
			t.Fatal(err)
		}
		ns, err := spokes[c].CoreV1().Namespaces().Get(t.Context(), metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.clusterIDs[c] = string(ns.UID)
	}
	a.pods = watchPods(t,
		watchedNamespace{cluster: hubName, client: hub.Kube, namespace: managerNamespace},
		watchedNamespace{cluster: cluster1, client: spokes[cluster1], namespace: testbed.AgentAddonNamespace},
		watchedNamespace{cluster: cluster2, client: spokes[cluster2], namespace: testbed.AgentAddonNamespace},
	)
	// Registered after the watch, so it runs before the watch stops. The manager's
	// killed leader is replaced by a new pod: five at least, with the add-on manager's two.
	t.Cleanup(func() {
		a.pods.verify(t, map[string]int{
			hubName + "/" + managerNamespace:             2*managerReplicas + 1,
			cluster1 + "/" + testbed.AgentAddonNamespace: 1,
			cluster2 + "/" + testbed.AgentAddonNamespace: 1,
		})
	})

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"install with helm on the hub", a.install},
		{"spec.dns without external-dns's CRD", a.dnsWithoutCRD},
		{"enable with clusteradm", a.enable},
		{"agent delivered to the spokes", a.delivered},
		{"agents run as pods", a.agentPods},
		{"agents report on the hub", a.reports},
		{"metrics labels per cluster", a.metricsLabels},
		{"agent's hub permissions", a.hubPermissions},
		{"agent's permissions on its cluster", a.spokePermissions},
		{"seed story", a.seedStory},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.FailNow()
		}
	}
}

// install installs the chart on the hub with the real helm and waits for the
// manager's replicas to run as pods, Ready (their probes pass), one of them leading.
func (a *addonTest) install(t *testing.T) {
	ctx := t.Context()
	helmInstall(t, ctx)

	// The add-on as the add-on framework reads it (v1beta1, through the conversion
	// webhook): enabled per cluster, with the default AddOnDeploymentConfig.
	cma, err := hub.Addon.AddonV1beta1().ClusterManagementAddOns().Get(ctx, addonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cma.Spec.InstallStrategy.Type != "Manual" {
		t.Errorf("ClusterManagementAddOn install strategy %q, want Manual", cma.Spec.InstallStrategy.Type)
	}
	if d := cma.Spec.DefaultConfigs; len(d) != 1 || d[0].Resource != "addondeploymentconfigs" || d[0].Namespace != addonConfigNamespace || d[0].Name != addonName {
		t.Errorf("ClusterManagementAddOn default configs %+v, want the AddOnDeploymentConfig %s/%s", d, addonConfigNamespace, addonName)
	}
	if _, err := hub.Addon.AddonV1alpha1().AddOnDeploymentConfigs(addonConfigNamespace).Get(ctx, addonName, metav1.GetOptions{}); err != nil {
		t.Errorf("the default AddOnDeploymentConfig: %v", err)
	}

	pods := a.pods.waitPods(t, "the manager's replicas Running and Ready", hubName, managerNamespace, managerLabels, allReady(managerReplicas))
	checkManagerPods(t, pods, managerServiceAccount)
	t.Logf("manager pod %s leads", a.waitLeader(t))
	managerLeasePermissions(t)
	// The add-on framework runs apart, under its own ServiceAccount (issue 42).
	pods = a.pods.waitPods(t, "the add-on manager's replicas Running and Ready", hubName, managerNamespace, addonManagerLabels, allReady(managerReplicas))
	checkManagerPods(t, pods, addonManagerServiceAccount)
}

// enable enables the add-on on both spokes with the real clusteradm.
func (a *addonTest) enable(t *testing.T) {
	ctx := t.Context()
	out, err := bed.Clusteradm(ctx, "addon", "enable", "--names", addonName,
		"--clusters", cluster1+","+cluster2, "--namespace", testbed.AgentAddonNamespace)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clusteradm addon enable: %s", strings.TrimSpace(out))
	a.parent.Cleanup(func() {
		// As a user would, when done; the agents stop with the test anyway.
		if _, err := bed.Clusteradm(context.Background(), "addon", "disable", "--names", addonName, "--clusters", cluster1+","+cluster2); err != nil {
			a.parent.Logf("disable the add-on: %v", err)
		}
	})
	for _, c := range []string{cluster1, cluster2} {
		// OCM's addon manager makes the ClusterManagementAddOn its owner, which the add-on
		// framework waits for before it deploys or registers anything.
		eventually(t, "ManagedClusterAddOn of "+c+" owned by its ClusterManagementAddOn", func(ctx context.Context) error {
			mca, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(c).Get(ctx, addonName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if mca.Spec.InstallNamespace != testbed.AgentAddonNamespace {
				return fmt.Errorf("install namespace %q", mca.Spec.InstallNamespace)
			}
			for _, o := range mca.OwnerReferences {
				if o.Kind == "ClusterManagementAddOn" && o.Name == addonName {
					return nil
				}
			}
			return fmt.Errorf("owners %+v", mca.OwnerReferences)
		})
	}
}

// delivered checks what OCM put on each spoke for the add-on: the agent's Deployment,
// applied from the add-on's ManifestWork by the work agent, with the manager's agent
// image; and the agent's hub kubeconfig Secret, written by the registration agent
// once the agent's CSR was approved by the manager and signed.
func (a *addonTest) delivered(t *testing.T) {
	for _, c := range []string{cluster1, cluster2} {
		// Rendered with the default AddOnDeploymentConfig: its LOG_LEVEL, no labels.
		waitAgentDeployment(t, c, func(d *appsv1.Deployment) error {
			// The slim agent binary, with the agent command's flags at its top level.
			if cmd := containerCommand(d); !slices.Equal(cmd, []string{agentBinary}) {
				return fmt.Errorf("command %v, want [%s]", cmd, agentBinary)
			}
			args := containerArgs(d)
			if len(args) == 0 || !strings.HasPrefix(args[0], "--") {
				return fmt.Errorf("args %v do not start with a flag", args)
			}
			for _, want := range []string{"--cluster-name=" + c, "--addon-namespace=" + testbed.AgentAddonNamespace, "-v=2"} {
				if !slices.Contains(args, want) {
					return fmt.Errorf("args %v lack %s", args, want)
				}
			}
			if hasArgPrefix(args, "--metrics-labels") {
				return fmt.Errorf("args %v have metrics labels before any were configured", args)
			}
			return nil
		})

		var secret *corev1.Secret
		eventually(t, "the agent's hub kubeconfig Secret on "+c, func(ctx context.Context) error {
			var err error
			secret, err = spokes[c].CoreV1().Secrets(testbed.AgentAddonNamespace).Get(ctx, agentHubKubeconfigSecret, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, key := range []string{"kubeconfig", "tls.crt", "tls.key", "cluster-name"} {
				if len(secret.Data[key]) == 0 {
					return fmt.Errorf("no %s yet; keys %v", key, keys(secret.Data))
				}
			}
			return nil
		})
		if got := string(secret.Data["cluster-name"]); got != c {
			t.Errorf("the agent's hub kubeconfig Secret on %s names cluster %q", c, got)
		}
		dir := filepath.Join(bed.Dir(), "traffic-migration-agent-"+c, "hub-kubeconfig")
		if err := writeSecretFiles(secret, dir); err != nil {
			t.Fatal(err)
		}

		// The certificate is the add-on agent's identity on the hub, signed by the hub.
		cert := readCertificate(t, filepath.Join(dir, "tls.crt"))
		wantUser := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:agent", c, addonName)
		if cert.Subject.CommonName != wantUser {
			t.Errorf("the agent's certificate on %s is for %q, want %q", c, cert.Subject.CommonName, wantUser)
		}
		if err := cert.CheckSignatureFrom(readCertificate(t, bed.Hub.CA.CertPath)); err != nil {
			t.Errorf("the agent's certificate on %s is not signed by the hub's CA: %v", c, err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
		if err != nil {
			t.Fatalf("the agent's hub kubeconfig on %s: %v", c, err)
		}
		if cfg.Host != bed.Hub.URL {
			t.Errorf("the agent's hub kubeconfig on %s points at %s, want the hub %s", c, cfg.Host, bed.Hub.URL)
		}
		if c == cluster1 {
			a.agentUser, a.agentGroups = cert.Subject.CommonName, cert.Subject.Organization
		}
	}
}

// agentPods checks that each spoke's agent runs as a pod of its Deployment, Ready, on
// the spoke's node, from the image, as the agent's ServiceAccount, with the hub
// kubeconfig Secret mounted where its --hub-kubeconfig points, and that it started
// with what it was given: the agent logs that it is ready only once it has read the
// hub kubeconfig and both its informers (hub and in-cluster) have synced.
func (a *addonTest) agentPods(t *testing.T) {
	ctx := t.Context()
	for _, c := range []string{cluster1, cluster2} {
		pods := a.pods.waitPods(t, "the agent's pod on "+c+" Running and Ready", c, testbed.AgentAddonNamespace, agentLabels, allReady(1))
		pod := pods[0]
		if pod.Spec.NodeName != bed.Nodes[c].Name {
			t.Errorf("the agent of %s runs on %q, want the spoke's node %q", c, pod.Spec.NodeName, bed.Nodes[c].Name)
		}
		if pod.Spec.ServiceAccountName != agentServiceAccount {
			t.Errorf("the agent of %s runs as ServiceAccount %q, want %q", c, pod.Spec.ServiceAccountName, agentServiceAccount)
		}
		if err := checkHubKubeconfigMount(pod); err != nil {
			t.Errorf("the agent's pod on %s: %v", c, err)
		}
		for _, s := range pod.Status.ContainerStatuses {
			if s.Image != image && !strings.HasSuffix(s.Image, "/"+image) {
				t.Errorf("the agent of %s runs image %q, want %q", c, s.Image, image)
			}
		}
		logs, err := spokes[c].CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: agentContainer}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("read the agent's log on %s: %v", c, err)
		}
		if !strings.Contains(string(logs), `"Agent ready"`) {
			t.Errorf("the agent of %s does not log that it is ready; its log:\n%s", c, logs)
		}
	}
}

// checkHubKubeconfigMount checks that the agent's container reads --hub-kubeconfig from
// the volume of the hub kubeconfig Secret that OCM writes.
func checkHubKubeconfigMount(pod *corev1.Pod) error {
	var container *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == agentContainer {
			container = &pod.Spec.Containers[i]
		}
	}
	if container == nil {
		return fmt.Errorf("no container %q", agentContainer)
	}
	volumes := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == agentHubKubeconfigSecret {
			volumes[v.Name] = true
		}
	}
	var mountPath string
	for _, m := range container.VolumeMounts {
		if volumes[m.Name] {
			mountPath = filepath.Clean(m.MountPath)
		}
	}
	if mountPath == "" {
		return fmt.Errorf("container %q does not mount the Secret %s", agentContainer, agentHubKubeconfigSecret)
	}
	for _, arg := range slices.Concat(container.Command, container.Args) {
		if value, ok := strings.CutPrefix(arg, "--hub-kubeconfig="); ok && filepath.Dir(value) == mountPath {
			return nil
		}
	}
	return fmt.Errorf("container %q does not read --hub-kubeconfig from %s: %v %v", agentContainer, mountPath, container.Command, container.Args)
}

// writeSecretFiles writes each key of a Secret to a file of that name in dir, as the
// kubelet mounts a Secret volume.
func writeSecretFiles(secret *corev1.Secret, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for key, value := range secret.Data {
		if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// reports checks that OCM marks the add-on Available from the agent's Deployment
// (with the framework's DeploymentAvailability health prober, the add-on manager reads
// the Deployment's ready replicas from the work agent's status feedback on the
// add-on's ManifestWork), and what the agents report on their
// ManagedClusterAddOns: the Gateway API missing, then installed (with Traefik) without
// a restart; a Gateway on cluster2 that Traefik cannot program, then programmed by
// Traefik, and gone.
func (a *addonTest) reports(t *testing.T) {
	ctx := t.Context()
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, addonv1alpha1.ManagedClusterAddOnConditionAvailable, isTrue(addonv1alpha1.AddonAvailableReasonProbeAvailable))
		waitAddonCondition(t, c, trafficv1alpha1.ConditionGatewayAPI, hasStatus(metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled))
		waitAddonCondition(t, c, trafficv1alpha1.ConditionClusterLabels, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonReported,
			fmt.Sprintf("cluster_id=%s,cluster_name=%s", a.clusterIDs[c], c)))
	}

	// The platform teams install the Gateway API and Traefik on the spokes, with the
	// namespace and backend of the Gateway to come and the metrics pipeline.
	for _, c := range []string{cluster1, cluster2} {
		traefik, err := bed.PrepareGatewaySpoke(ctx, c, testbed.GatewaySpokeOptions{Namespace: gatewaySystem, Backend: backendName,
			ClusterLabels: map[string]string{trafficClusterKey: clusterLabelValues[c]}})
		if err != nil {
			t.Fatal(err)
		}
		a.traefik[c] = traefik
	}
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, trafficv1alpha1.ConditionGatewayAPI, isTrue(trafficv1alpha1.AgentReasonInstalled))
	}

	// A Gateway on cluster2 whose listener Traefik cannot program (its port is no entry
	// point's), then moved to the web entry point's port and programmed, then gone: the
	// agent reports what Traefik writes.
	const probeNS, probe = metav1.NamespaceDefault, "e2e-probe"
	address := a.traefik[cluster2].Address
	probeCondition := trafficv1alpha1.GatewayConditionType(probeNS, probe)
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: probe, Namespace: probeNS},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: testbed.TraefikGatewayClass,
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: testbed.TraefikWebPort + 1, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if _, err := a.gateways[cluster2].GatewayV1().Gateways(probeNS).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAddonCondition(t, cluster2, probeCondition, hasMessage(metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed, notAccepted(address)))
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw, err := a.gateways[cluster2].GatewayV1().Gateways(probeNS).Get(ctx, probe, metav1.GetOptions{})
		if err != nil {
			return err
		}
		gw.Spec.Listeners[0].Port = testbed.TraefikWebPort
		_, err = a.gateways[cluster2].GatewayV1().Gateways(probeNS).Update(ctx, gw, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitAddonCondition(t, cluster2, probeCondition, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "Addresses: "+address))
	if err := a.gateways[cluster2].GatewayV1().Gateways(probeNS).Delete(ctx, probe, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAddonCondition(t, cluster2, probeCondition, nil)
	if c, _ := addonCondition(ctx, cluster1, probeCondition); c != nil {
		t.Errorf("the agent of %s reports a Gateway of %s: %+v", cluster1, cluster2, c)
	}
	// The framework's condition stays as the agents write theirs.
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, addonv1alpha1.ManagedClusterAddOnConditionAvailable, isTrue(addonv1alpha1.AddonAvailableReasonProbeAvailable))
	}
}

// metricsLabels gives each spoke's agent its METRICS_LABELS through an
// AddOnDeploymentConfig of its own, referenced from its ManagedClusterAddOn with
// 'clusteradm addon enable --config-file'; the rendered Deployment on the spoke gets
// the labels as an argument, and the agent's new pod, rolled out, reports them.
// cluster1's config also sets LOGGING_FORMAT=json: its agent logs as JSON and is
// Ready all the same.
func (a *addonTest) metricsLabels(t *testing.T) {
	ctx := t.Context()
	for _, c := range []string{cluster1, cluster2} {
		variables := []map[string]string{
			{"name": "LOG_LEVEL", "value": "2"},
			{"name": "METRICS_LABELS", "value": metricsLabels[c]},
		}
		if c == cluster1 {
			variables = append(variables, map[string]string{"name": "LOGGING_FORMAT", "value": "json"})
		}
		config := map[string]any{
			"apiVersion": "addon.open-cluster-management.io/v1alpha1",
			"kind":       "AddOnDeploymentConfig",
			"metadata":   map[string]any{"name": addonName + "-" + c, "namespace": c},
			"spec": map[string]any{
				"agentInstallNamespace": testbed.AgentAddonNamespace,
				"customizedVariables":   variables,
			},
		}
		raw, err := yaml.Marshal(config)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), c+"-config.yaml")
		if err := os.WriteFile(file, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := bed.Clusteradm(ctx, "addon", "enable", "--names", addonName, "--clusters", c,
			"--namespace", testbed.AgentAddonNamespace, "--config-file", file); err != nil {
			t.Fatal(err)
		}
		mca, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(c).Get(ctx, addonName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cs := mca.Spec.Configs; len(cs) != 1 || cs[0].Namespace != c || cs[0].Name != addonName+"-"+c {
			t.Errorf("ManagedClusterAddOn of %s configs %+v, want its own AddOnDeploymentConfig", c, cs)
		}
	}
	// The Deployment's rollout replaces the agent's pod with one that has the labels.
	for _, c := range []string{cluster1, cluster2} {
		want := "--metrics-labels=" + metricsLabels[c]
		waitAgentDeployment(t, c, func(d *appsv1.Deployment) error {
			args := containerArgs(d)
			if !slices.Contains(args, want) {
				return fmt.Errorf("args %v lack %s", args, want)
			}
			if json := slices.Contains(args, "--logging-format=json"); json != (c == cluster1) {
				return fmt.Errorf("args %v: --logging-format=json is there: %v, want %v", args, json, c == cluster1)
			}
			return nil
		})
		a.pods.waitPods(t, "the agent's pod on "+c+" with its labels, Running and Ready", c, testbed.AgentAddonNamespace, agentLabels, func(pods []*corev1.Pod) error {
			if err := allReady(1)(pods); err != nil {
				return err
			}
			if args := pods[0].Spec.Containers[0].Args; !slices.Contains(args, want) {
				return fmt.Errorf("the pod's args %v lack %s", args, want)
			}
			return nil
		})
	}
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, trafficv1alpha1.ConditionClusterLabels, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonReported,
			fmt.Sprintf("%s,cluster_id=%s,cluster_name=%s", metricsLabels[c], a.clusterIDs[c], c)))
	}
	// cluster1's agent, which has reported, logged every line as a JSON object.
	pods, err := spokes[cluster1].CoreV1().Pods(testbed.AgentAddonNamespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(agentLabels).String()})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(pods.Items, func(p corev1.Pod) bool { return slices.Contains(p.Spec.Containers[0].Args, "--logging-format=json") })
	if i < 0 {
		t.Fatalf("no agent pod on %s runs with --logging-format=json", cluster1)
	}
	logs, err := spokes[cluster1].CoreV1().Pods(testbed.AgentAddonNamespace).GetLogs(pods.Items[i].Name, &corev1.PodLogOptions{Container: agentContainer}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(logs)), "\n")
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["msg"] == nil {
			t.Errorf("a log line of %s's agent is not a JSON entry (%v): %s", cluster1, err, line)
			break
		}
	}
	t.Logf("%s's agent logged %d JSON lines", cluster1, len(lines))
}
