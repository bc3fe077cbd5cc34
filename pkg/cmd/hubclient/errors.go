// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package hubclient

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// UserAgent is how the hub's audit log names the requests of command (status, check,
// wait, suspend, ...): one name per command, with the CLI's version.
func UserAgent(command string) string {
	return "traffic-migration-" + command + "/" + version.Version
}

// ErrCRDNotInstalled: the hub serves no TrafficMigrationPolicies.
var ErrCRDNotInstalled = errors.New("the traffic-migration CRD is not installed on this cluster: " +
	"it serves no trafficmigrationpolicies." + trafficv1alpha1.GroupName + " (does the kubeconfig point at the OCM hub?)")

// PolicyNotFoundError says that a named policy does not exist: every command says it
// in these words.
type PolicyNotFoundError struct{ Namespace, Name string }

func (e *PolicyNotFoundError) Error() string {
	return fmt.Sprintf("no TrafficMigrationPolicy %s in namespace %s", e.Name, e.Namespace)
}

// PolicyError explains, for a person, a request on TrafficMigrationPolicies that
// failed with err: a CRD the hub does not serve (asked of disc), a policy that does not
// exist (name is "" for a list or a watch), missing rights, or credentials the hub did
// not accept. verb is the request's verb: get, list, watch, patch.
func PolicyError(disc discovery.DiscoveryInterface, err error, verb, namespace, name string) error {
	where := "in all namespaces"
	if namespace != "" {
		where = "in namespace " + namespace
	}
	switch {
	case apierrors.IsNotFound(err):
		if !CRDInstalled(disc) {
			return ErrCRDNotInstalled
		}
		if name != "" {
			return &PolicyNotFoundError{Namespace: namespace, Name: name}
		}
	case apierrors.IsForbidden(err):
		needs := "reading them needs get, list and watch"
		if verb == "patch" {
			needs = "changing them needs get and patch"
		}
		if namespace == "" {
			needs = "give a namespace you may read with -n; " + needs
		}
		return fmt.Errorf("forbidden: you may not %s TrafficMigrationPolicies %s (%s on trafficmigrationpolicies.%s): %w",
			verb, where, needs, trafficv1alpha1.GroupName, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("unauthorized: the hub did not accept the kubeconfig's credentials (log in again?): %w", err)
	}
	if name != "" {
		return fmt.Errorf("%s TrafficMigrationPolicy %s %s: %w", verb, name, where, err)
	}
	return fmt.Errorf("%s TrafficMigrationPolicies %s: %w", verb, where, err)
}

// CRDInstalled asks discovery whether the hub serves TrafficMigrationPolicies. When
// discovery itself fails for another reason the answer is yes: the request's own
// error says more.
func CRDInstalled(disc discovery.DiscoveryInterface) bool {
	resources, err := disc.ServerResourcesForGroupVersion(trafficv1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil || resources == nil {
		return true
	}
	for _, res := range resources.APIResources {
		if res.Name == "trafficmigrationpolicies" {
			return true
		}
	}
	return false
}
