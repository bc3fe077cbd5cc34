// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TraefikGatewayObject is a Gateway of Traefik's GatewayClass with one HTTP listener
// on the port of Traefik's default web entry point, for the hostname given (any, when
// empty), as a consumer puts it on the spokes.
func TraefikGatewayObject(namespace, name, hostname string) *gatewayv1.Gateway {
	listener := gatewayv1.Listener{Name: "http", Port: TraefikWebPort, Protocol: gatewayv1.HTTPProtocolType}
	if hostname != "" {
		listener.Hostname = ptr.To(gatewayv1.Hostname(hostname))
	}
	return &gatewayv1.Gateway{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: TraefikGatewayClass,
			Listeners:        []gatewayv1.Listener{listener},
		},
	}
}

// BackendRouteObject is an HTTPRoute that sends a Gateway's requests for the
// hostname (any, when empty) to a backend that InstallBackend runs, in the Gateway's
// namespace.
func BackendRouteObject(namespace, name, gateway, hostname, backend string) *gatewayv1.HTTPRoute {
	route := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gateway)}}},
			Rules: []gatewayv1.HTTPRouteRule{{
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(backend), Port: ptr.To(gatewayv1.PortNumber(BackendPort)),
				}}}},
			}},
		},
	}
	if hostname != "" {
		route.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(hostname)}
	}
	return route
}

// ManifestWorkReplicaSetOf is a ManifestWorkReplicaSet that follows a Placement of its
// namespace: OCM's work manager (StartWorkManager) writes a ManifestWork of the
// objects to every cluster the Placement's decisions list, all at once, and deletes it
// from a cluster they drop, and each spoke's work agent applies or deletes the objects.
func ManifestWorkReplicaSetOf(namespace, name, placement string, objects ...runtime.Object) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	manifests := make([]workv1.Manifest, 0, len(objects))
	for _, obj := range objects {
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("write a manifest of ManifestWorkReplicaSet %s: %w", name, err)
		}
		manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{
				Name:            placement,
				RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
			}},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
		},
	}, nil
}

// podDeployment is a Deployment of one pod of the spec, labelled and selected by
// app.kubernetes.io/name=<name>, never pulling its images: what the bed runs on its
// nodes (Traefik, the backends, the metrics agents).
func podDeployment(namespace, name string, spec corev1.PodSpec) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": name}
	for i := range spec.Containers {
		spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}
