// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// GatewaySpokeOptions say how a spoke's platform team prepares it for Gateways.
type GatewaySpokeOptions struct {
	// Traefik are the options of its Gateway API implementation.
	Traefik TraefikOptions
	// Namespace holds the backend, and the Gateways that come later; it is created
	// when missing.
	Namespace string
	// Backend names the backend's Deployment and Service (InstallBackend).
	Backend string
	// ClusterLabels are the labels the metrics pipeline adds to every sample, as a
	// per-cluster pipeline adds the cluster's name: {cluster: <name>}.
	ClusterLabels map[string]string
	// MetricsJobs are the pipeline's further jobs at cadences of their own
	// (MetricsAgentOptions.Jobs).
	MetricsJobs []MetricsJob
}

// PrepareGatewaySpoke does on a cluster with a node what its platform team does before
// any Gateway arrives: Traefik as its Gateway API implementation, the namespace and
// backend of the Gateways to come, and its metrics pipeline (a Prometheus agent that
// scrapes Traefik and remote-writes to the bed's Prometheus with the cluster's labels).
// It returns Traefik once each piece is ready.
func (b *Bed) PrepareGatewaySpoke(ctx context.Context, cluster string, opts GatewaySpokeOptions) (*Traefik, error) {
	traefik, err := b.InstallTraefik(ctx, cluster, opts.Traefik)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	c := b.clusterLocked(cluster)
	b.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("prepare %s for Gateways: no such cluster", cluster)
	}
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s on %s: %w", opts.Namespace, cluster, err)
	}
	if err := b.InstallBackend(ctx, cluster, opts.Namespace, opts.Backend); err != nil {
		return nil, err
	}
	err = b.InstallMetricsAgent(ctx, cluster, MetricsAgentOptions{
		Targets:        []string{traefik.MetricsTarget()},
		ExternalLabels: opts.ClusterLabels,
		Jobs:           opts.MetricsJobs,
	})
	if err != nil {
		return nil, err
	}
	return traefik, nil
}
