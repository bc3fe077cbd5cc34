// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
)

// The programs of a real OCM hub and klusterlet. The Makefile builds them from the
// pinned tools modules (hack/tools/kube, ocm, clusteradm).
var (
	// ProgramKubeControllerManager signs the klusterlets' client certificates (nothing
	// in OCM signs kubernetes.io/kube-apiserver-client CSRs), collects garbage and
	// deletes namespaces on the hub.
	ProgramKubeControllerManager = Program{Name: "kube-controller-manager", EnvVar: "TESTBED_KUBE_CONTROLLER_MANAGER"}
	// ProgramOCMRegistration is OCM's registration binary: "controller" on the hub,
	// "agent" on a spoke.
	ProgramOCMRegistration = Program{Name: "registration", EnvVar: "TESTBED_OCM_REGISTRATION"}
	// ProgramOCMWork is OCM's work binary: "agent" on a spoke, "manager" on the hub.
	ProgramOCMWork = Program{Name: "work", EnvVar: "TESTBED_OCM_WORK"}
	// ProgramOCMAddon is OCM's addon binary: "manager" and the conversion
	// "webhook-server" of the add-on APIs, both on the hub.
	ProgramOCMAddon = Program{Name: "addon", EnvVar: "TESTBED_OCM_ADDON"}
	// ProgramClusteradm is OCM's command line, run as a user runs it.
	ProgramClusteradm = Program{Name: "clusteradm", EnvVar: "TESTBED_CLUSTERADM"}
)

// What 'clusteradm init' (through the cluster-manager chart) makes on a hub for agents
// to bootstrap with, and what 'clusteradm get token' and 'clusteradm accept' expect:
// a service account whose token the bootstrap kubeconfig carries, bound to the
// bootstrap ClusterRole.
const (
	ocmNamespace           = "open-cluster-management"
	bootstrapSAName        = "agent-registration-bootstrap"
	bootstrapClusterRole   = "open-cluster-management:bootstrap"
	bootstrapSARoleBinding = "open-cluster-management:bootstrap:agent-registration"
)

// The CRDs whose v1alpha1 (stored) and v1beta1 (served) versions OCM's addon
// conversion webhook converts between.
var addonConversionCRDs = []string{
	"managedclusteraddons.addon.open-cluster-management.io",
	"clustermanagementaddons.addon.open-cluster-management.io",
}

// addonWebhookFixedPorts are the ports OCM's addon webhook-server (v1.2.1) always
// binds on every address, whatever its flags: controller-runtime's health probe
// (:8000, hard-coded in OCM) and metrics server (:8080, its default). Only one
// webhook-server can run on a host at a time.
var addonWebhookFixedPorts = []int{8000, 8080}

// OCMHub is a real OCM hub control plane on the test bed's hub kube-apiserver: the
// programs the cluster-manager operator would run in pods, run as local processes.
type OCMHub struct {
	// ControllerManager is a kube-controller-manager with only the CSR signing,
	// garbage collector and namespace controllers; it signs with the hub's CA.
	ControllerManager *Process
	// Registration is OCM's registration controller: it accepts clusters, gives them a
	// namespace and RBAC on the hub, and watches their leases.
	Registration *Process
	// AddonWebhook is OCM's conversion webhook for the add-on APIs; the
	// ManagedClusterAddOn and ClusterManagementAddOn CRDs point at it.
	AddonWebhook *Process
	// AddonWebhookURL is the conversion endpoint the CRDs call.
	AddonWebhookURL string
	// AddonManager is OCM's addon manager; among others it makes a
	// ClusterManagementAddOn the owner of its ManagedClusterAddOns, which the add-on
	// framework waits for.
	AddonManager *Process
}

// StartOCMControlPlane runs what the product needs of a user's OCM hub: the OCM hub
// (StartOCMHub), OCM's placement controller (StartPlacementController) and, with
// workManager, the work manager that ManifestWorkReplicaSets need (StartWorkManager).
func (b *Bed) StartOCMControlPlane(ctx context.Context, workManager bool) error {
	if _, err := b.StartOCMHub(ctx); err != nil {
		return fmt.Errorf("start the OCM hub: %w", err)
	}
	if _, err := b.StartPlacementController(ctx); err != nil {
		return fmt.Errorf("start OCM's placement controller: %w", err)
	}
	if workManager {
		if _, err := b.StartWorkManager(ctx); err != nil {
			return fmt.Errorf("start OCM's work manager: %w", err)
		}
	}
	return nil
}

// StartOCMHub runs a real OCM hub on the test bed's hub: kube-controller-manager to sign
// CSRs, the registration controller, the add-on conversion webhook (with the add-on
// CRDs converted through it) and the addon manager, plus the bootstrap service account
// and RBAC that agents join with. Spokes join with JoinSpoke and AcceptSpokes.
//
// 'clusteradm init' cannot be used: it installs the cluster-manager operator as a
// Deployment of OCM's images and waits for it, and no registry here serves those images
// (nor does a cluster without a node run pods). The test bed
// does what the operator would do: the hub CRDs (New installs them), the bootstrap
// identity, and the controllers, run as processes. Clusters are accepted by hand with
// 'clusteradm accept', not by the registration controller's auto-approval.
//
// OCM's placement controller is not part of it: StartPlacementController runs it. Nor
// is the work manager, which only ManifestWorkReplicaSets need.
func (b *Bed) StartOCMHub(ctx context.Context) (*OCMHub, error) {
	b.mu.Lock()
	started := b.OCM != nil
	b.mu.Unlock()
	if started {
		return nil, errors.New("the OCM hub is already running")
	}
	// Find every program of the hub and the klusterlets before starting any.
	for _, prog := range []Program{ProgramKubeControllerManager, ProgramOCMRegistration, ProgramOCMWork, ProgramOCMAddon, ProgramClusteradm} {
		if _, err := prog.Path(); err != nil {
			return nil, err
		}
	}
	if err := createBootstrapIdentity(ctx, b.Hub.Config); err != nil {
		return nil, fmt.Errorf("create the bootstrap service account and RBAC: %w", err)
	}
	hub := &OCMHub{}
	var err error
	if hub.ControllerManager, err = b.startKubeControllerManager(ctx, b.Hub, true); err != nil {
		return nil, err
	}
	// The webhook first: the controllers read and write the add-on APIs in both versions.
	if hub.AddonWebhook, hub.AddonWebhookURL, err = b.startAddonWebhook(ctx); err != nil {
		return nil, err
	}
	if hub.Registration, err = b.startHubController(ctx, "registration controller", ProgramOCMRegistration, "registration-controller", "controller"); err != nil {
		return nil, err
	}
	if hub.AddonManager, err = b.startHubController(ctx, "addon manager", ProgramOCMAddon, "addon-manager", "manager"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.OCM = hub
	b.mu.Unlock()
	return hub, nil
}

// createBootstrapIdentity makes what the cluster-manager chart makes for agents to
// bootstrap with: the open-cluster-management namespace, the agent-registration-bootstrap
// service account and the open-cluster-management:bootstrap ClusterRole bound to it
// (create CSRs; create and read ManagedClusters; join cluster sets).
func createBootstrapIdentity(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ocmNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: bootstrapSAName, Namespace: ocmNamespace}}
	if _, err := client.CoreV1().ServiceAccounts(ocmNamespace).Create(ctx, sa, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapClusterRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapSARoleBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bootstrapClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: bootstrapSAName, Namespace: ocmNamespace}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	return nil
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// startKubeControllerManager runs kube-controller-manager against a cluster, once: a
// later call returns the one already running. Without a node it runs only the
// controllers a cluster without pods needs: the garbage collector and namespace
// deletion and, with signCSRs (the hub), CSR signing with the cluster's CA (which is
// also its client CA, so the klusterlets' signed certificates authenticate). It then
// uses its own admin credentials for every controller, so it needs no service account
// tokens.
//
// On a cluster with a node it also runs what pods need: Deployments, ReplicaSets,
// ServiceAccounts and their tokens (signed with the API server's key), the
// kube-root-ca.crt ConfigMap in every namespace (the API server's CA, which in-cluster
// clients check the API server with), Endpoints and EndpointSlices of Services, and
// the collection of orphaned pods.
func (b *Bed) startKubeControllerManager(ctx context.Context, c *Cluster, signCSRs bool) (*Process, error) {
	b.mu.Lock()
	withNode := c.node != nil
	b.mu.Unlock()
	controllers := "garbagecollector,namespace"
	if signCSRs {
		controllers = "csrsigning," + controllers
	}
	if withNode {
		controllers += ",deployment-controller,replicaset-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,endpoints-controller,endpointslice-controller,pod-garbage-collector-controller,node-lifecycle-controller"
	}
	var args []string
	if signCSRs {
		args = append(args,
			"--cluster-signing-cert-file="+c.CA.CertPath,
			"--cluster-signing-key-file="+c.CA.KeyPath,
		)
	}
	if withNode {
		args = append(args,
			"--service-account-private-key-file="+c.ServiceAccountKeyPath,
			"--root-ca-file="+c.CA.CertPath,
		)
	}
	return b.startControllerManagerOnce(ctx, c, &c.controllerManager, "kube-controller-manager", "kube-controller-manager", controllers, args...)
}

// startControllerManagerOnce runs kube-controller-manager against a cluster with the
// given controllers and more args, once: *running, guarded by the bed's lock, keeps
// it, and a later call returns the one already running. Its name in the bed's messages
// is what, and its data and log are under the cluster's folder as name. It uses its
// own admin credentials for every controller, so it needs no service account tokens.
func (b *Bed) startControllerManagerOnce(ctx context.Context, c *Cluster, running **Process, what, name, controllers string, more ...string) (*Process, error) {
	b.mu.Lock()
	p := *running
	b.mu.Unlock()
	if p != nil {
		return p, nil
	}
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--controllers=" + controllers,
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		"--profiling=false",
	}, more...)
	// /healthz is always allowed, without credentials.
	p, err = b.startTracked(ctx, what+" ("+c.Name+")", ProgramKubeControllerManager, c.dir, name,
		nil, controllerReadyTimeout, healthzReady("https://"+hostPort(port)+"/healthz"), args...)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	*running = p
	b.mu.Unlock()
	return p, nil
}

// startAddonWebhook runs OCM's conversion webhook for the add-on APIs, serving TLS with
// a certificate of the hub's CA, and points the ManagedClusterAddOn and
// ClusterManagementAddOn CRDs at it by URL, as the cluster-manager operator points them
// at its Service. clusteradm writes v1alpha1 (the stored version) and the add-on
// framework reads v1beta1; without the webhook the API server would only relabel the
// version and drop the fields that differ.
//
// It is ready when the hub converts both kinds through it.
func (b *Bed) startAddonWebhook(ctx context.Context) (*Process, string, error) {
	for _, port := range addonWebhookFixedPorts {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			return nil, "", fmt.Errorf("OCM's addon webhook-server always binds port %d, which is taken (is another test bed with an OCM hub running?): %w", port, err)
		}
		l.Close()
	}
	dir := filepath.Join(b.Hub.dir, "addon-webhook")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	// controller-runtime's webhook server reads tls.crt and tls.key from --certdir.
	if _, err := b.Hub.CA.issue(dir, "tls", "addon-webhook", nil, "127.0.0.1", "localhost"); err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	url := "https://" + hostPort(port) + "/convert"
	p, err := startProcess("addon webhook-server", ProgramOCMAddon, b.dir, "addon-webhook", nil,
		"webhook-server",
		"--port="+strconv.Itoa(port),
		"--certdir="+dir,
		// Read by controller-runtime, through the Go flags the command adds.
		"--kubeconfig="+b.Hub.KubeconfigPath,
	)
	if err != nil {
		return nil, "", err
	}
	b.Track(p)
	if err := useConversionWebhook(ctx, b.Hub.Config, url, b.Hub.CA.CertPEM); err != nil {
		p.Stop()
		return nil, "", err
	}
	probe, err := newConversionProbe(b.Hub.Config)
	if err != nil {
		p.Stop()
		return nil, "", err
	}
	err = p.waitReady(ctx, controllerReadyTimeout, probe.converted)
	probe.cleanup(context.WithoutCancel(ctx))
	if err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, url, nil
}

// useConversionWebhook sets the add-on CRDs' conversion to the webhook at url.
func useConversionWebhook(ctx context.Context, cfg *rest.Config, url string, caBundle []byte) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range addonConversionCRDs {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get CRD %s: %w", name, err)
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			},
		}
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("point CRD %s at the conversion webhook: %w", name, err)
		}
	}
	return nil
}

// conversionProbe checks that the hub converts both add-on kinds through the webhook:
// it writes one object of each in v1alpha1 with a field that only the webhook carries
// over, and reads it back in v1beta1.
type conversionProbe struct {
	client addonclient.Interface
}

const (
	conversionProbeName      = "testbed-conversion-probe"
	conversionProbeNamespace = ocmNamespace
)

func newConversionProbe(cfg *rest.Config) (*conversionProbe, error) {
	client, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &conversionProbe{client: client}, nil
}

func (p *conversionProbe) converted(ctx context.Context) error {
	cma := &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: conversionProbeName},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupName, Resource: "addondeploymentconfigs"},
				DefaultConfig:       &addonv1alpha1.ConfigReferent{Namespace: conversionProbeNamespace, Name: conversionProbeName},
			}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
		},
	}
	if _, err := p.client.AddonV1alpha1().ClusterManagementAddOns().Create(ctx, cma, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	gotCMA, err := p.client.AddonV1beta1().ClusterManagementAddOns().Get(ctx, conversionProbeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cfgs := gotCMA.Spec.DefaultConfigs; len(cfgs) != 1 || cfgs[0].Name != conversionProbeName {
		return fmt.Errorf("ClusterManagementAddOn read as v1beta1 has defaultConfigs %+v: not converted by the webhook", cfgs)
	}

	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: conversionProbeName, Namespace: conversionProbeNamespace},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: conversionProbeName},
	}
	if _, err := p.client.AddonV1alpha1().ManagedClusterAddOns(conversionProbeNamespace).Create(ctx, mca, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	gotMCA, err := p.client.AddonV1beta1().ManagedClusterAddOns(conversionProbeNamespace).Get(ctx, conversionProbeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ns := gotMCA.Annotations[addonv1beta1.InstallNamespaceAnnotation]; ns != conversionProbeName {
		return fmt.Errorf("ManagedClusterAddOn read as v1beta1 has install namespace annotation %q: not converted by the webhook", ns)
	}
	return nil
}

func (p *conversionProbe) cleanup(ctx context.Context) {
	_ = p.client.AddonV1alpha1().ClusterManagementAddOns().Delete(ctx, conversionProbeName, metav1.DeleteOptions{})
	_ = p.client.AddonV1alpha1().ManagedClusterAddOns(conversionProbeNamespace).Delete(ctx, conversionProbeName, metav1.DeleteOptions{})
}
