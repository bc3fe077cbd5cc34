// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
