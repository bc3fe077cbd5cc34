// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// What the add-on is, as a user installs and enables it: the names the manifests, the
// agent's Deployment and OCM's registration give, spelled out here rather than taken
// from the product's code, so that the test notices when they change.
const (
	addonName                = "traffic-migration"
	addonConfigNamespace     = "open-cluster-management-addon"
	agentImage               = "quay.io/open-cluster-management/traffic-migration:e2e"
	agentDeployment          = "traffic-migration-agent"
	agentHubKubeconfigSecret = "traffic-migration-hub-kubeconfig"
	agentLease               = "traffic-migration"
)

// metricsLabels are the labels each spoke's agent is configured with through a
// per-cluster AddOnDeploymentConfig; the story's query picks the "cluster" label.
var metricsLabels = map[string]string{
	cluster1: "cluster=cluster1-east",
	cluster2: "cluster=cluster2-west",
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

	traffic     trafficclient.Interface
	gateways    map[string]gatewayclient.Interface
	agents      map[string]*testbed.Process
	secretDirs  map[string]string
	clusterIDs  map[string]string
	agentUser   string
	agentGroups []string
}

// TestAddOn installs traffic-migration on the OCM hub as a user would and runs it on
// the spokes: the manifests applied to the hub, the manager run as its binary,
// the add-on enabled with clusteradm, the agent's Deployment and hub credentials
// delivered by OCM to each spoke, the agent run as its binary with what OCM delivered,
// its reports on the hub, its metrics labels configured per cluster, its hub
// permissions, and the seed's migration from cluster1 to cluster2 gated by the real
// agents' Gateway readiness.
func TestAddOn(t *testing.T) {
	a := &addonTest{
		parent:     t,
		gateways:   map[string]gatewayclient.Interface{},
		agents:     map[string]*testbed.Process{},
		secretDirs: map[string]string{},
		clusterIDs: map[string]string{},
	}
	var err error
	if a.traffic, err = trafficclient.NewForConfig(bed.Hub.Config); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{cluster1, cluster2} {
		if a.gateways[c], err = gatewayclient.NewForConfig(bed.Spokes[c].Config); err != nil {
			t.Fatal(err)
		}
		ns, err := spokes[c].CoreV1().Namespaces().Get(context.Background(), metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.clusterIDs[c] = string(ns.UID)
	}

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"install on the hub", a.install},
		{"enable with clusteradm", a.enable},
		{"agent delivered to the spokes", a.delivered},
		{"agents run with what OCM delivered", a.runAgents},
		{"agents report on the hub", a.reports},
		{"metrics labels per cluster", a.metricsLabels},
		{"agent's hub permissions", a.hubPermissions},
		{"seed story", a.seedStory},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.FailNow()
		}
	}
}

// install applies manifests/ to the hub as 'kubectl apply -k manifests/' would, then
// runs the manager binary as the manager's ServiceAccount.
func (a *addonTest) install(t *testing.T) {
	ctx := context.Background()
	manifests, err := testbed.ManifestsDir()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testbed.ApplyKustomization(ctx, bed.Hub.Config, manifests)
	if err != nil {
		t.Fatalf("apply manifests/: %v", err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	for _, want := range []string{"Namespace", "CustomResourceDefinition", "ClusterRole", "AddOnDeploymentConfig", "ClusterManagementAddOn", "Deployment"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("manifests/ applied no %s (applied %v)", want, kinds)
		}
	}

	// The add-on as the add-on framework reads it (v1beta1, through the conversion
	// webhook): enabled per cluster, with the default AddOnDeploymentConfig.
	cma, err := hub.addon.AddonV1beta1().ClusterManagementAddOns().Get(ctx, addonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cma.Spec.InstallStrategy.Type != "Manual" {
		t.Errorf("ClusterManagementAddOn install strategy %q, want Manual", cma.Spec.InstallStrategy.Type)
	}
	if d := cma.Spec.DefaultConfigs; len(d) != 1 || d[0].Resource != "addondeploymentconfigs" || d[0].Namespace != addonConfigNamespace || d[0].Name != addonName {
		t.Errorf("ClusterManagementAddOn default configs %+v, want the AddOnDeploymentConfig %s/%s", d, addonConfigNamespace, addonName)
	}
	if _, err := hub.addon.AddonV1alpha1().AddOnDeploymentConfigs(addonConfigNamespace).Get(ctx, addonName, metav1.GetOptions{}); err != nil {
		t.Errorf("the default AddOnDeploymentConfig: %v", err)
	}

	a.parent.Cleanup(startManager(t, ctx, agentImage).Stop)
}

// enable enables the add-on on both spokes with the real clusteradm.
func (a *addonTest) enable(t *testing.T) {
	ctx := context.Background()
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
			mca, err := hub.addon.AddonV1alpha1().ManagedClusterAddOns(c).Get(ctx, addonName, metav1.GetOptions{})
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
		a.secretDirs[c] = dir

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

// runAgents runs each spoke's agent as its Deployment would run it, with the files of
// the Secret OCM wrote.
func (a *addonTest) runAgents(t *testing.T) {
	for _, c := range []string{cluster1, cluster2} {
		a.restartAgent(t, c, nil)
	}
}

// restartAgent stops the spoke's agent, if it runs, and starts it again from the agent
// Deployment once that passes check, as the Deployment's rollout would.
func (a *addonTest) restartAgent(t *testing.T, cluster string, check func(*appsv1.Deployment) error) {
	t.Helper()
	if check == nil {
		check = func(*appsv1.Deployment) error { return nil }
	}
	deploy := waitAgentDeployment(t, cluster, check)
	if p := a.agents[cluster]; p != nil {
		p.Stop()
	}
	p := startAgent(t, context.Background(), cluster, deploy, agentHubKubeconfigSecret, a.secretDirs[cluster])
	a.agents[cluster] = p
	a.parent.Cleanup(p.Stop)
}

// reports checks that OCM marks the add-on Available from the Lease the agent renews
// (with the framework's lease health prober, the spoke's registration agent checks
// the Lease and writes Available), and what the agents report on their
// ManagedClusterAddOns: the Gateway API missing, then installed without a restart; a
// Gateway on cluster2 pending, programmed, and gone.
func (a *addonTest) reports(t *testing.T) {
	ctx := context.Background()
	for _, c := range []string{cluster1, cluster2} {
		// The agent renews its Lease on the spoke; the spoke's registration agent
		// turns it into Available on the hub.
		eventually(t, "the agent's Lease on "+c, func(ctx context.Context) error {
			_, err := spokes[c].CoordinationV1().Leases(testbed.AgentAddonNamespace).Get(ctx, agentLease, metav1.GetOptions{})
			return err
		})
		waitAddonCondition(t, c, addonv1alpha1.ManagedClusterAddOnConditionAvailable, isTrue("ManagedClusterAddOnLeaseUpdated"))
		waitAddonCondition(t, c, trafficv1alpha1.ConditionGatewayAPI, hasStatus(metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled))
		waitAddonCondition(t, c, trafficv1alpha1.ConditionClusterLabels, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonReported,
			fmt.Sprintf("cluster_id=%s,cluster_name=%s", a.clusterIDs[c], c)))
	}

	crds, err := testbed.GatewayAPICRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{cluster1, cluster2} {
		if err := testbed.InstallCRDs(ctx, bed.Spokes[c].Config, crds...); err != nil {
			t.Fatalf("install the Gateway API on %s: %v", c, err)
		}
	}
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, trafficv1alpha1.ConditionGatewayAPI, isTrue(trafficv1alpha1.AgentReasonInstalled))
	}

	// A Gateway on cluster2, as a Gateway controller sees it through.
	const probeNS, probe, address = metav1.NamespaceDefault, "e2e-probe", "192.0.2.99"
	probeCondition := trafficv1alpha1.GatewayConditionType(probeNS, probe)
	createGateway(t, a.gateways[cluster2], probeNS, probe)
	waitAddonCondition(t, cluster2, probeCondition, hasStatus(metav1.ConditionFalse, trafficv1alpha1.AgentReasonPending))
	programGateway(t, a.gateways[cluster2], probeNS, probe, address)
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
		waitAddonCondition(t, c, addonv1alpha1.ManagedClusterAddOnConditionAvailable, isTrue("ManagedClusterAddOnLeaseUpdated"))
	}
}

// metricsLabels gives each spoke's agent its METRICS_LABELS through an
// AddOnDeploymentConfig of its own, referenced from its ManagedClusterAddOn with
// 'clusteradm addon enable --config-file'; the rendered Deployment on the spoke gets
// the labels as an argument, and the agent, restarted as a rollout would, reports them.
func (a *addonTest) metricsLabels(t *testing.T) {
	ctx := context.Background()
	for _, c := range []string{cluster1, cluster2} {
		config := map[string]any{
			"apiVersion": "addon.open-cluster-management.io/v1alpha1",
			"kind":       "AddOnDeploymentConfig",
			"metadata":   map[string]any{"name": addonName + "-" + c, "namespace": c},
			"spec": map[string]any{
				"agentInstallNamespace": testbed.AgentAddonNamespace,
				"customizedVariables": []map[string]string{
					{"name": "LOG_LEVEL", "value": "2"},
					{"name": "METRICS_LABELS", "value": metricsLabels[c]},
				},
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
		mca, err := hub.addon.AddonV1alpha1().ManagedClusterAddOns(c).Get(ctx, addonName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cs := mca.Spec.Configs; len(cs) != 1 || cs[0].Namespace != c || cs[0].Name != addonName+"-"+c {
			t.Errorf("ManagedClusterAddOn of %s configs %+v, want its own AddOnDeploymentConfig", c, cs)
		}
	}
	for _, c := range []string{cluster1, cluster2} {
		want := "--metrics-labels=" + metricsLabels[c]
		a.restartAgent(t, c, func(d *appsv1.Deployment) error {
			if args := containerArgs(d); !slices.Contains(args, want) {
				return fmt.Errorf("args %v lack %s", args, want)
			}
			return nil
		})
	}
	for _, c := range []string{cluster1, cluster2} {
		waitAddonCondition(t, c, trafficv1alpha1.ConditionClusterLabels, hasMessage(metav1.ConditionTrue, trafficv1alpha1.AgentReasonReported,
			fmt.Sprintf("%s,cluster_id=%s,cluster_name=%s", metricsLabels[c], a.clusterIDs[c], c)))
	}
}

// hubPermissions asks the hub what cluster1's agent, as its certificate names it, may
// do: read its own ManagedClusterAddOn and write its status, and nothing of another
// cluster, no Secret and no policy.
func (a *addonTest) hubPermissions(t *testing.T) {
	ctx := context.Background()
	if a.agentUser == "" {
		t.Fatal("no agent identity read from the agent's certificate")
	}
	// The API server adds system:authenticated to every authenticated user.
	groups := append(slices.Clone(a.agentGroups), "system:authenticated")
	t.Logf("agent identity: user %s, groups %v", a.agentUser, groups)
	addons := func(verb, sub, ns, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: addonv1alpha1.GroupName, Resource: "managedclusteraddons", Subresource: sub, Namespace: ns, Name: name}
	}
	own := func(verb, sub, ns string) authorizationv1.ResourceAttributes { return addons(verb, sub, ns, addonName) }
	secrets := func(verb, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets", Namespace: ns}
	}
	policies := func(verb, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: trafficv1alpha1.GroupName, Resource: "trafficmigrationpolicies", Namespace: ns}
	}
	// What the agent does: read its add-on (list and watch with a metadata.name field
	// selector, which RBAC sees as the name) and write its status.
	allowed := []authorizationv1.ResourceAttributes{
		own("patch", "status", cluster1), own("update", "status", cluster1),
		own("get", "", cluster1), own("watch", "", cluster1), own("list", "", cluster1),
	}
	denied := []authorizationv1.ResourceAttributes{
		// Another cluster's add-on.
		own("patch", "status", cluster2), own("get", "", cluster2), own("watch", "", cluster2),
		// Its add-on's spec, and the other add-ons of its cluster.
		own("patch", "", cluster1), own("delete", "", cluster1),
		addons("get", "", cluster1, "another-addon"), addons("list", "", cluster1, ""),
		// Secrets, anywhere.
		secrets("get", ""), secrets("list", ""), secrets("get", cluster1), secrets("list", cluster1),
		secrets("get", testbed.AgentAddonNamespace),
	}
	// Policies, in all namespaces and in those where they could be.
	for _, ns := range []string{"", cluster1, gatewaySystem} {
		for _, verb := range []string{"get", "list", "update"} {
			denied = append(denied, policies(verb, ns))
		}
	}
	// The add-on framework grants the permissions shortly after registering the agent.
	for _, attrs := range allowed {
		eventually(t, fmt.Sprintf("the agent may %s", describe(attrs)), func(ctx context.Context) error {
			ok, reason, err := canI(ctx, a.agentUser, groups, attrs)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("denied: %s", reason)
			}
			return nil
		})
	}
	for _, attrs := range denied {
		ok, reason, err := canI(ctx, a.agentUser, groups, attrs)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("the agent may %s: %s", describe(attrs), reason)
		}
	}
}

// seedStory is the migration the product exists for, on the real stack: a real
// Placement moves the Gateway from cluster1 to cluster2. Readiness and labels come from
// the real agents. cluster1 carries little traffic already, but cluster2's Gateway is
// not programmed yet: cluster1 stays in the proxy after its checks pass, as no other
// cluster would have the Gateway ready. Once cluster2's Gateway is programmed, cluster1
// leaves.
func (a *addonTest) seedStory(t *testing.T) {
	ctx := context.Background()
	const (
		interval             = time.Second
		consecutiveSuccesses = 3
		minDrainDuration     = 8 * time.Second
	)

	// The hub: the Placement's namespace, bound to a cluster set of both clusters,
	// which carry their regions.
	if _, err := hub.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewaySystem}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	regions := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: regionLabel, Operator: metav1.LabelSelectorOpExists},
	}}
	if err := testbed.CreateClusterSet(ctx, hub.cluster, clusterSetName, regions); err != nil {
		t.Fatal(err)
	}
	if err := testbed.BindClusterSet(ctx, hub.cluster, gatewaySystem, clusterSetName); err != nil {
		t.Fatal(err)
	}
	for c, region := range map[string]string{cluster1: "east", cluster2: "west"} {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := hub.cluster.ClusterV1().ManagedClusters().Patch(ctx, c, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The spokes: the Gateway on both, programmed on cluster1 only.
	for _, c := range []string{cluster1, cluster2} {
		if _, err := spokes[c].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewaySystem}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createGateway(t, a.gateways[c], gatewaySystem, gatewayName)
	}
	programGateway(t, a.gateways[cluster1], gatewaySystem, gatewayName, "192.0.2.1")
	gatewayCondition := trafficv1alpha1.GatewayConditionType(gatewaySystem, gatewayName)
	waitAddonCondition(t, cluster1, gatewayCondition, isTrue(trafficv1alpha1.AgentReasonProgrammed))
	waitAddonCondition(t, cluster2, gatewayCondition, hasStatus(metav1.ConditionFalse, trafficv1alpha1.AgentReasonPending))

	// The traffic, by the clusters' metrics labels: little of it still reaches cluster1.
	traffic := newTrafficSource(t, "cluster")
	traffic.set(map[string]float64{"cluster1-east": 1, "cluster2-west": 99})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: gatewaySystem}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := hub.kube.CoreV1().Secrets(gatewaySystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementName, Namespace: gatewaySystem},
		Spec:       clusterv1beta1.PlacementSpec{Predicates: regionPredicates("east")},
	}
	if _, err := hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster1)

	policy := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: gatewaySystem},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:       trafficv1alpha1.PlacementReference{Name: placementName},
			ProxyPlacementName: proxyName,
			TargetRef:          trafficv1alpha1.GatewayReference{Name: gatewayName, Namespace: gatewaySystem},
			PrometheusSecret:   trafficv1alpha1.SecretReference{Name: secret.Name},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric:            trafficMetric,
				Selector:          fmt.Sprintf("job=%q", traffic.job),
				ClusterLabel:      "cluster",
				ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`,
				Window:            "4s",
				MaxPercent:        5,
			},
			Interval:             &metav1.Duration{Duration: interval},
			ConsecutiveSuccesses: consecutiveSuccesses,
			MinDrainDuration:     &metav1.Duration{Duration: minDrainDuration},
		},
	}
	policies := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(gatewaySystem)
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, proxyName, cluster1)
	a.waitPolicy(t, "Ready with cluster1 active", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if !meta.IsStatusConditionTrue(p.Status.Conditions, trafficv1alpha1.ConditionReady) {
			return errors.New("not Ready")
		}
		if p.Status.ActiveClusters != 1 || p.Status.DrainingClusters != 0 {
			return errors.New("not one active cluster")
		}
		return nil
	})

	// The admin moves the Gateway to cluster2, whose Gateway is not programmed yet.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Get(ctx, placementName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Predicates = regionPredicates("west")
		_, err = hub.cluster.ClusterV1beta1().Placements(gatewaySystem).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, placementName, cluster2)
	waitDecisions(t, proxyName, cluster1, cluster2)

	// cluster1's checks pass and its minimum drain duration passes; it stays, as
	// cluster2 has no Gateway ready.
	wantQuery := fmt.Sprintf(`%s{cluster="cluster1-east"`, trafficMetric)
	held := a.waitPolicy(t, "cluster1's gate passed but for the Gateway readiness", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		r := clusterRow(p, cluster1)
		switch {
		case r == nil:
			return errors.New("no row of cluster1")
		case r.Phase != trafficv1alpha1.ClusterDraining:
			return fmt.Errorf("cluster1 is %s", r.Phase)
		case !strings.Contains(r.ResolvedQuery, wantQuery):
			return fmt.Errorf("cluster1's query %q does not select %s", r.ResolvedQuery, wantQuery)
		case r.ConsecutiveSuccesses < consecutiveSuccesses || r.LastResult != trafficv1alpha1.EvaluationPass:
			return fmt.Errorf("cluster1 has %d passing checks, last %s", r.ConsecutiveSuccesses, r.LastResult)
		case r.DrainStartTime == nil || r.LastEvaluationTime == nil || r.LastEvaluationTime.Sub(r.DrainStartTime.Time) < minDrainDuration:
			return errors.New("cluster1 has not drained for minDrainDuration at its last check")
		case !strings.HasPrefix(r.Message, "no other cluster has the Gateway ready"):
			return fmt.Errorf("cluster1 waits for: %s", r.Message)
		}
		return nil
	})
	heldRow := clusterRow(held, cluster1)
	heldAt := heldRow.LastEvaluationTime.Time
	t.Logf("cluster1 held after %d passing checks (share %s%%), draining for %s: %s; query %s", heldRow.ConsecutiveSuccesses,
		heldRow.LastValue, heldAt.Sub(heldRow.DrainStartTime.Time), heldRow.Message, heldRow.ResolvedQuery)
	// Two more checks later, it is still in the proxy: the manager writes the
	// decisions before the status, so every status seen here was decided with
	// cluster1 kept.
	var removedEarly []string
	a.waitPolicy(t, "cluster1 kept for two more checks", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		got, err := decisionClusters(ctx, proxyName)
		if err != nil {
			return err
		}
		if !slices.Contains(got, cluster1) {
			removedEarly = got
			return nil // fails below
		}
		r := clusterRow(p, cluster1)
		if r == nil || r.LastEvaluationTime == nil || r.LastEvaluationTime.Sub(heldAt) < 2*interval {
			return errors.New("no two more checks yet")
		}
		if r.Phase != trafficv1alpha1.ClusterDraining || !strings.HasPrefix(r.Message, "no other cluster has the Gateway ready") {
			return fmt.Errorf("cluster1 is %s: %s", r.Phase, r.Message)
		}
		return nil
	})
	if removedEarly != nil {
		t.Fatalf("cluster1 left the proxy while no other cluster had the Gateway ready: the proxy lists %v", removedEarly)
	}

	// The Gateway controller programs cluster2's Gateway: cluster1 leaves.
	programmed := time.Now()
	programGateway(t, a.gateways[cluster2], gatewaySystem, gatewayName, "192.0.2.2")
	waitDecisions(t, proxyName, cluster2)
	removed := a.waitPolicy(t, "cluster1 removed", func(p *trafficv1alpha1.TrafficMigrationPolicy) error {
		if r := clusterRow(p, cluster1); r == nil || r.Phase != trafficv1alpha1.ClusterRemoved || r.RemovalTime == nil {
			return errors.New("cluster1 not Removed")
		}
		return nil
	})
	r := clusterRow(removed, cluster1)
	if d := r.RemovalTime.Sub(r.DrainStartTime.Time); d < minDrainDuration {
		t.Errorf("cluster1 removed %s after its drain started, before minDrainDuration %s", d, minDrainDuration)
	}
	if r.RemovalTime.Time.Before(programmed.Truncate(time.Second)) {
		t.Errorf("cluster1 removed at %s, before cluster2's Gateway was programmed at %s", r.RemovalTime, programmed)
	}
	t.Logf("cluster1 drained %s, removed %s after cluster2's Gateway was programmed", r.RemovalTime.Sub(r.DrainStartTime.Time), r.RemovalTime.Sub(programmed).Round(time.Second))
}

// waitAgentDeployment waits until the agent's Deployment on a spoke exists with the
// manager's agent image and passes check, and returns it.
func waitAgentDeployment(t *testing.T, cluster string, check func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	var deploy *appsv1.Deployment
	eventually(t, "the agent Deployment on "+cluster, func(ctx context.Context) error {
		d, err := spokes[cluster].AppsV1().Deployments(testbed.AgentAddonNamespace).Get(ctx, agentDeployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var images []string
		for _, c := range d.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		if !slices.Equal(images, []string{agentImage}) {
			return fmt.Errorf("images %v, want %s", images, agentImage)
		}
		if err := check(d); err != nil {
			return err
		}
		deploy = d
		return nil
	})
	return deploy
}

func containerArgs(d *appsv1.Deployment) []string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == agentContainer {
			return c.Args
		}
	}
	return nil
}

func containerCommand(d *appsv1.Deployment) []string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == agentContainer {
			return c.Command
		}
	}
	return nil
}

func hasArgPrefix(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// addonCondition reads a condition of a cluster's ManagedClusterAddOn; nil if it has none.
func addonCondition(ctx context.Context, cluster, condType string) (*metav1.Condition, error) {
	mca, err := hub.addon.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addonName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(mca.Status.Conditions, condType), nil
}

// waitAddonCondition waits until a condition of a cluster's ManagedClusterAddOn passes
// check, or, with a nil check, until there is none.
func waitAddonCondition(t *testing.T, cluster, condType string, check func(*metav1.Condition) error) {
	t.Helper()
	what := fmt.Sprintf("condition %s of %s", condType, cluster)
	eventually(t, what, func(ctx context.Context) error {
		c, err := addonCondition(ctx, cluster, condType)
		switch {
		case err != nil:
			return err
		case check == nil && c != nil:
			return fmt.Errorf("still there: %+v", *c)
		case check == nil:
			return nil
		case c == nil:
			return errors.New("not there")
		}
		if err := check(c); err != nil {
			return fmt.Errorf("%w: %s %s %q", err, c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

func hasStatus(status metav1.ConditionStatus, reason string) func(*metav1.Condition) error {
	return func(c *metav1.Condition) error {
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("want %s %s", status, reason)
		}
		return nil
	}
}

func isTrue(reason string) func(*metav1.Condition) error {
	return hasStatus(metav1.ConditionTrue, reason)
}

func hasMessage(status metav1.ConditionStatus, reason, message string) func(*metav1.Condition) error {
	return func(c *metav1.Condition) error {
		if c.Status != status || c.Reason != reason || c.Message != message {
			return fmt.Errorf("want %s %s %q", status, reason, message)
		}
		return nil
	}
}

// createGateway creates a Gateway as a consumer of the Placement puts it on a spoke;
// no Gateway controller has seen it yet.
func createGateway(t *testing.T, client gatewayclient.Interface, ns, name string) {
	t.Helper()
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "e2e",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if _, err := client.GatewayV1().Gateways(ns).Create(context.Background(), gw, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Gateway %s/%s: %v", ns, name, err)
	}
}

// programGateway does what a Gateway controller does once it has programmed a
// Gateway: Accepted and Programmed True for the Gateway's generation, and its address.
func programGateway(t *testing.T, client gatewayclient.Interface, ns, name, address string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw, err := client.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		gw.Status.Conditions = []metav1.Condition{
			{Type: string(gatewayv1.GatewayConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonAccepted),
				Message: "accepted by the e2e test", ObservedGeneration: gw.Generation, LastTransitionTime: now},
			{Type: string(gatewayv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonProgrammed),
				Message: "programmed by the e2e test", ObservedGeneration: gw.Generation, LastTransitionTime: now},
		}
		ipAddress := gatewayv1.IPAddressType
		gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ipAddress, Value: address}}
		_, err = client.GatewayV1().Gateways(ns).UpdateStatus(context.Background(), gw, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("program Gateway %s/%s: %v", ns, name, err)
	}
}

func regionPredicates(region string) []clusterv1beta1.ClusterPredicate {
	return testbed.SelectorPredicates(map[string]string{regionLabel: region})
}

// decisionClusters lists, sorted, the clusters of a Placement's decisions in
// gatewaySystem, as a consumer reads them.
func decisionClusters(ctx context.Context, placement string) ([]string, error) {
	list, err := hub.cluster.ClusterV1beta1().PlacementDecisions(gatewaySystem).List(ctx, metav1.ListOptions{
		LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement,
	})
	if err != nil {
		return nil, err
	}
	var clusters []string
	for _, d := range list.Items {
		for _, cd := range d.Status.Decisions {
			clusters = append(clusters, cd.ClusterName)
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}

// waitDecisions waits until a Placement's decisions list exactly the clusters given.
func waitDecisions(t *testing.T, placement string, want ...string) {
	t.Helper()
	slices.Sort(want)
	eventually(t, fmt.Sprintf("Placement %s deciding %v", placement, want), func(ctx context.Context) error {
		got, err := decisionClusters(ctx, placement)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("decisions list %v", got)
		}
		return nil
	})
}

// waitPolicy waits until the story's policy passes check, and returns it.
func (a *addonTest) waitPolicy(t *testing.T, what string, check func(*trafficv1alpha1.TrafficMigrationPolicy) error) *trafficv1alpha1.TrafficMigrationPolicy {
	t.Helper()
	var last *trafficv1alpha1.TrafficMigrationPolicy
	eventually(t, "policy: "+what, func(ctx context.Context) error {
		p, err := a.traffic.TrafficV1alpha1().TrafficMigrationPolicies(gatewaySystem).Get(ctx, policyName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := check(p); err != nil {
			return fmt.Errorf("%w; status:\n%s", err, statusString(p))
		}
		last = p
		return nil
	})
	return last
}

func clusterRow(p *trafficv1alpha1.TrafficMigrationPolicy, cluster string) *trafficv1alpha1.ClusterStatus {
	return testbed.PolicyRow(p, cluster)
}

func statusString(p *trafficv1alpha1.TrafficMigrationPolicy) string { return testbed.PolicyStatus(p) }

// canI asks the hub, with a SubjectAccessReview, whether a user may do something.
func canI(ctx context.Context, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &attrs,
	}}
	got, err := hub.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return got.Status.Allowed, got.Status.Reason, nil
}

func describe(a authorizationv1.ResourceAttributes) string {
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	where := "in all namespaces"
	if a.Namespace != "" {
		where = "in namespace " + a.Namespace
	}
	name := ""
	if a.Name != "" {
		name = " " + a.Name
	}
	return fmt.Sprintf("%s %s%s %s", a.Verb, res, name, where)
}
