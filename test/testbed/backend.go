// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// InclusterImageEnv names the reference of the bed's test image, which make
// testbed-node-images saves as $TESTBED_IMAGES_DIR/incluster.tar. Run as
// "incluster backend" it is the Gateways' backend.
const InclusterImageEnv = "TESTBED_INCLUSTER_IMAGE"

// BackendPort is the port of a backend's Service, which an HTTPRoute names, and
// BackendGRPCPort its gRPC port (h2c), which a GRPCRoute names.
const (
	BackendPort     = 80
	BackendGRPCPort = 9090
)

// InstallBackend runs the backend of a cluster's Gateway on its node: a Deployment of
// the test image in backend mode, which answers every request with the cluster's
// name (and its X-Served-By header), and every gRPC call of the health service with
// the name in its header metadata, and a Service of the same name on BackendPort and
// BackendGRPCPort (appProtocol kubernetes.io/h2c).
// It returns once the backend's pod is ready.
func (b *Bed) InstallBackend(ctx context.Context, cluster, namespace, name string) error {
	b.mu.Lock()
	c := b.clusterLocked(cluster)
	b.mu.Unlock()
	if c == nil || c.node == nil {
		return fmt.Errorf("install the backend on %s: the cluster has no node", cluster)
	}
	image := Getenv(InclusterImageEnv)
	if image == "" {
		return fmt.Errorf("install the backend on %s: %s is not set ('make testbed-node-images' builds the image)", cluster, InclusterImageEnv)
	}
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	deployment := podDeployment(namespace, name, corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{
			Name:           "backend",
			Image:          image,
			Args:           []string{"backend"},
			Env:            []corev1.EnvVar{{Name: "CLUSTER_NAME", Value: cluster}},
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "grpc", ContainerPort: 9090}},
			ReadinessProbe: HTTPReadiness("/readyz", intstr.FromString("http")),
		}},
	})
	if _, err := kube.AppsV1().Deployments(namespace).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the backend's Deployment %s/%s on %s: %w", namespace, name, cluster, err)
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: deployment.Labels},
		Spec: corev1.ServiceSpec{
			Selector: deployment.Labels,
			Ports: []corev1.ServicePort{
				{Name: "http", Port: BackendPort, TargetPort: intstr.FromString("http")},
				{Name: "grpc", Port: BackendGRPCPort, TargetPort: intstr.FromString("grpc"), AppProtocol: ptr.To("kubernetes.io/h2c")},
			},
		},
	}
	if _, err := kube.CoreV1().Services(namespace).Create(ctx, service, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the backend's Service %s/%s on %s: %w", namespace, name, cluster, err)
	}
	return c.WaitDeploymentAvailable(ctx, namespace, name)
}
