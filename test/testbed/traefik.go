// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// Traefik: the Gateway API implementation of the spokes of the e2e tests and the demo.
//
// InstallTraefik runs Traefik (make traefik-image builds its image from the tools
// module hack/tools/traefik) as a pod on a cluster's node, in the node's network
// namespace (hostNetwork), so that its entry points listen on the node's address:
// "web" for the Gateways' HTTP listeners and "metrics" for Prometheus (and its ping,
// the pod's readiness). Its kubernetesGateway provider serves the GatewayClass
// TraefikGatewayClass: it sets Accepted and Programmed on the Gateways of that class,
// with the node's address as theirs, and routes their HTTPRoutes to the backends'
// endpoints. A Gateway listener whose port is no entry point's is not programmed:
// Traefik marks the listener Accepted False (PortUnavailable) and the Gateway
// Accepted False (ListenersNotValid), with no Programmed condition.

// TraefikImageEnv names the reference of Traefik's image; make traefik-image saves it
// as $TESTBED_IMAGES_DIR/traefik.tar, which NodeOptions.Images can import.
const TraefikImageEnv = "TESTBED_TRAEFIK_IMAGE"

// What InstallTraefik puts on a cluster.
const (
	// TraefikNamespace holds Traefik's Deployment and ServiceAccount.
	TraefikNamespace = "traefik"
	// TraefikName names its Deployment, ServiceAccount, ClusterRole and
	// ClusterRoleBinding.
	TraefikName = "traefik"
	// TraefikGatewayClass is the GatewayClass that Traefik implements.
	TraefikGatewayClass = "traefik"
	// TraefikControllerName is the GatewayClass's controllerName, Traefik's own.
	TraefikControllerName = "traefik.io/gateway-controller"
	// TraefikWebPort is the default port of the web entry point, and so the port of a
	// Gateway listener that Traefik programs.
	TraefikWebPort = 8000
	// TraefikMetricsPort is the default port of the metrics entry point, where Traefik
	// serves /metrics and /ping.
	TraefikMetricsPort = 9100
)

// TraefikImageArchive returns the reference of Traefik's image and its OCI archive,
// as make traefik-image left them.
func TraefikImageArchive() (ref, archive string, err error) {
	ref, dir := Getenv(TraefikImageEnv), Getenv(ImagesDirEnv)
	if ref == "" || dir == "" {
		return "", "", fmt.Errorf("%s and %s are not set: run through make, which builds Traefik's image ('make traefik-image')", TraefikImageEnv, ImagesDirEnv)
	}
	archive = filepath.Join(dir, "traefik.tar")
	if _, err := os.Stat(archive); err != nil {
		return "", "", fmt.Errorf("Traefik's image archive: %w ('make traefik-image' builds it)", err)
	}
	return ref, archive, nil
}

// TraefikOptions says how InstallTraefik runs Traefik.
type TraefikOptions struct {
	// Image is Traefik's image, imported on the node. Default: $TESTBED_TRAEFIK_IMAGE.
	Image string
	// WebPort is the port of the web entry point. Default: TraefikWebPort.
	WebPort int
	// MetricsPort is the port of the metrics entry point. Default: TraefikMetricsPort.
	MetricsPort int
	// EntryPoints are more HTTP entry points beside web, by name (at most 15
	// lowercase letters, digits and dashes, as a container port's name) and port. A
	// Gateway listener on one of their ports is served there, and Traefik counts its
	// requests under entrypoint=<name>: several Gateways on one node, each with a
	// counter of its own.
	EntryPoints map[string]int
	// KeepAliveMaxTime bounds, by entry point name (web or one of EntryPoints), how
	// long Traefik keeps a client's connection open: past it, Traefik closes the
	// connection with its next answer (the entry point's transport.keepAliveMaxTime),
	// and a pooled client dials, and resolves, again. An entry point not named keeps
	// Traefik's default: no bound, so a busy pooled client never leaves.
	KeepAliveMaxTime map[string]time.Duration
}

// Traefik is Traefik running on a cluster's node.
type Traefik struct {
	// Cluster is the cluster whose Gateways it programs.
	Cluster *Cluster
	// Address is the node's address, where the entry points listen and which Traefik
	// writes in the status of the Gateways it programs.
	Address string
	// MetricsPort is the metrics entry point's port.
	MetricsPort int

	image       string
	kube        kubernetes.Interface
	entryPoints map[string]int // the entry points beside web and metrics
	keepAlive   map[string]time.Duration

	mu      sync.Mutex
	webPort int // the web entry point's port, which SetWebPort changes
}

// WebPort is the web entry point's port, where Traefik serves the Gateways'
// listeners of that port.
func (t *Traefik) WebPort() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.webPort
}

// WebAddress is where the web entry point listens: host:port.
func (t *Traefik) WebAddress() string {
	return net.JoinHostPort(t.Address, strconv.Itoa(t.WebPort()))
}

// MetricsTarget is where Prometheus scrapes Traefik's metrics: host:port.
func (t *Traefik) MetricsTarget() string {
	return net.JoinHostPort(t.Address, strconv.Itoa(t.MetricsPort))
}

// InstallTraefik installs the Gateway API CRDs on a cluster with a node and runs
// Traefik on its node as the implementation of the GatewayClass TraefikGatewayClass,
// with the RBAC its kubernetesGateway provider needs; it returns once Traefik's pod is
// ready.
func (b *Bed) InstallTraefik(ctx context.Context, cluster string, opts TraefikOptions) (*Traefik, error) {
	b.mu.Lock()
	c := b.clusterLocked(cluster)
	b.mu.Unlock()
	if c == nil || c.node == nil {
		return nil, fmt.Errorf("install Traefik on %s: the cluster has no node", cluster)
	}
	if opts.Image == "" {
		opts.Image = Getenv(TraefikImageEnv)
	}
	if opts.Image == "" {
		return nil, fmt.Errorf("install Traefik on %s: no image: set %s ('make traefik-image' builds it)", cluster, TraefikImageEnv)
	}
	t := &Traefik{
		Cluster: c, Address: c.node.IP, image: opts.Image,
		webPort: cmp.Or(opts.WebPort, TraefikWebPort), MetricsPort: cmp.Or(opts.MetricsPort, TraefikMetricsPort),
		entryPoints: opts.EntryPoints, keepAlive: opts.KeepAliveMaxTime,
	}
	var err error
	if t.kube, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	gateways, err := gatewayclient.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	crds, err := GatewayAPICRDFiles()
	if err != nil {
		return nil, err
	}
	routes, err := GatewayAPIRouteCRDFiles()
	if err != nil {
		return nil, err
	}
	crds = append(crds, routes...)
	if err := InstallCRDs(ctx, c.Config, crds...); err != nil {
		return nil, fmt.Errorf("install the Gateway API on %s: %w", cluster, err)
	}
	if err := t.createRBAC(ctx); err != nil {
		return nil, fmt.Errorf("install Traefik's RBAC on %s: %w", cluster, err)
	}
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: TraefikGatewayClass},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: TraefikControllerName},
	}
	if _, err := gateways.GatewayV1().GatewayClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create GatewayClass %s on %s: %w", TraefikGatewayClass, cluster, err)
	}
	if _, err := t.kube.AppsV1().Deployments(TraefikNamespace).Create(ctx, t.deployment(t.webPort), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create Traefik's Deployment on %s: %w", cluster, err)
	}
	if err := c.WaitDeploymentAvailable(ctx, TraefikNamespace, TraefikName); err != nil {
		return nil, err
	}
	return t, nil
}

// SetWebPort restarts Traefik with its web entry point on another port, as a platform
// team that reconfigures it does, and returns once the new pod is ready. Gateway
// listeners on the old port are no longer programmable; those on the new one are.
func (t *Traefik) SetWebPort(ctx context.Context, port int) error {
	want := t.deployment(port)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := t.kube.AppsV1().Deployments(TraefikNamespace).Get(ctx, TraefikName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template = want.Spec.Template
		_, err = t.kube.AppsV1().Deployments(TraefikNamespace).Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("move Traefik's web entry point on %s to port %d: %w", t.Cluster.Name, port, err)
	}
	t.mu.Lock()
	t.webPort = port
	t.mu.Unlock()
	return t.Cluster.WaitDeploymentAvailable(ctx, TraefikNamespace, TraefikName)
}

// createRBAC creates Traefik's namespace, ServiceAccount, and the ClusterRole of its
// kubernetesGateway provider (what it watches and the statuses it writes), bound to
// the ServiceAccount.
func (t *Traefik) createRBAC(ctx context.Context) error {
	objects := []struct {
		what   string
		create func() error
	}{
		{"namespace", func() error {
			_, err := t.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: TraefikNamespace}}, metav1.CreateOptions{})
			return err
		}},
		{"ServiceAccount", func() error {
			_, err := t.kube.CoreV1().ServiceAccounts(TraefikNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: TraefikName}}, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRole", func() error {
			_, err := t.kube.RbacV1().ClusterRoles().Create(ctx, traefikClusterRole(), metav1.CreateOptions{})
			return err
		}},
		{"ClusterRoleBinding", func() error {
			binding := &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: TraefikName},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: TraefikName},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: TraefikName, Namespace: TraefikNamespace}},
			}
			_, err := t.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		}},
	}
	for _, o := range objects {
		if err := o.create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", o.what, err)
		}
	}
	return nil
}

// traefikClusterRole is what Traefik's kubernetesGateway provider reads and writes,
// as Traefik's own RBAC manifest for it grants.
func traefikClusterRole() *rbacv1.ClusterRole {
	read := []string{"get", "list", "watch"}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: TraefikName},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces", "services", "secrets", "configmaps"}, Verbs: read},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: read},
			{APIGroups: []string{gatewayv1.GroupName}, Verbs: read, Resources: []string{
				"gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants", "backendtlspolicies",
			}},
			{APIGroups: []string{gatewayv1.GroupName}, Verbs: []string{"update"}, Resources: []string{
				"gatewayclasses/status", "gateways/status", "httproutes/status", "grpcroutes/status", "backendtlspolicies/status",
			}},
		},
	}
}

// deployment is Traefik's Deployment: one replica in the node's network namespace,
// replaced by stopping the old pod first (both would bind the same ports). Traefik
// reaches its API server through the kubernetes Service with in-cluster
// configuration, and reaches nothing else: no version check, no usage report.
func (t *Traefik) deployment(webPort int) *appsv1.Deployment {
	d := podDeployment(TraefikNamespace, TraefikName, corev1.PodSpec{
		ServiceAccountName: TraefikName,
		HostNetwork:        true,
		Containers: []corev1.Container{{
			Name:  TraefikName,
			Image: t.image,
			Args: []string{
				"--global.checkNewVersion=false",
				"--global.sendAnonymousUsage=false",
				"--log.level=INFO",
				"--entryPoints.web.address=:" + strconv.Itoa(webPort),
				"--entryPoints.metrics.address=:" + strconv.Itoa(t.MetricsPort),
				"--ping=true",
				"--ping.entryPoint=metrics",
				"--metrics.prometheus=true",
				"--metrics.prometheus.entryPoint=metrics",
				"--metrics.prometheus.addEntryPointsLabels=true",
				"--metrics.prometheus.addServicesLabels=true",
				"--providers.kubernetesGateway=true",
				"--providers.kubernetesGateway.statusAddress.ip=" + t.Address,
			},
			Ports: []corev1.ContainerPort{
				{Name: "web", ContainerPort: int32(webPort)},
				{Name: "metrics", ContainerPort: int32(t.MetricsPort)},
			},
			ReadinessProbe:  HTTPReadiness("/ping", intstr.FromString("metrics")),
			SecurityContext: RestrictedSecurityContext(),
		}},
	})
	c := &d.Spec.Template.Spec.Containers[0]
	for _, name := range slices.Sorted(maps.Keys(t.entryPoints)) {
		port := t.entryPoints[name]
		c.Args = append(c.Args, fmt.Sprintf("--entryPoints.%s.address=:%d", name, port))
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: name, ContainerPort: int32(port)})
	}
	for _, name := range slices.Sorted(maps.Keys(t.keepAlive)) {
		c.Args = append(c.Args, fmt.Sprintf("--entryPoints.%s.transport.keepAliveMaxTime=%s", name, t.keepAlive[name]))
	}
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	return d
}
