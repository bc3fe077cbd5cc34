// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

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

// HTTPReadiness is a readiness probe that GETs path on the container's port every
// second, so that the bed sees a pod ready within a second of it being so.
func HTTPReadiness(path string, port intstr.IntOrString) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port}},
		PeriodSeconds: 1,
	}
}

// RestrictedSecurityContext is a container's security context under the restricted
// Pod Security Standard, as the chart's own pods run: not root, no privilege
// escalation, a read-only root file system and no capabilities.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}
