// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package version

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The manager's Deployment, as the chart and manifests/ write it: named
// traffic-migration-manager, labelled app.kubernetes.io/name=traffic-migration-manager,
// its container "manager" running the release's image, whose tag is the release
// (make release tags the image with VERSION, and builds its binaries with it).
const (
	ManagerSelector  = "app.kubernetes.io/name=traffic-migration-manager"
	ManagerContainer = "manager"
	// DefaultNamespace is where manifests/ installs the manager, and the chart's
	// documented namespace: where the manager is looked for when Deployments cannot be
	// listed in every namespace.
	DefaultNamespace = "open-cluster-management-addon"
	// chartVersionLabel is Helm's standard label, the chart's appVersion, which the
	// chart sets on the Deployment: the version when the image has no tag.
	chartVersionLabel = "app.kubernetes.io/version"
)

// Manager is the version of a manager installed on the hub.
type Manager struct {
	// Version is the tag of the manager's image, or, for an image pinned by digest,
	// the chart's appVersion label when it has one.
	Version string `json:"version,omitempty"`
	// Namespace and Deployment name the manager's Deployment.
	Namespace  string `json:"namespace"`
	Deployment string `json:"deployment"`
	// Image is the manager container's image.
	Image string `json:"image"`
}

// ReadManagers reads the version of every traffic-migration manager on the hub from
// its Deployment: in namespace, or in every namespace when it is empty, and then, if
// Deployments may not be listed in every namespace, in DefaultNamespace.
func ReadManagers(ctx context.Context, kube kubernetes.Interface, namespace string) ([]Manager, error) {
	list, err := kube.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{LabelSelector: ManagerSelector})
	if namespace == "" && apierrors.IsForbidden(err) {
		namespace = DefaultNamespace
		list, err = kube.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{LabelSelector: ManagerSelector})
	}
	if err != nil {
		where := "in any namespace"
		if namespace != "" {
			where = "in namespace " + namespace
		}
		return nil, fmt.Errorf("cannot list the manager's Deployments (%s) %s: %w", ManagerSelector, where, err)
	}
	var managers []Manager
	for _, d := range list.Items {
		m := Manager{Namespace: d.Namespace, Deployment: d.Name}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == ManagerContainer {
				m.Image = c.Image
			}
		}
		m.Version = imageTag(m.Image)
		if m.Version == "" {
			m.Version = d.Labels[chartVersionLabel]
		}
		managers = append(managers, m)
	}
	return managers, nil
}

// imageTag is the tag of an image reference, "" when it has none (a digest alone, or
// the default latest left out).
func imageTag(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	return ""
}
