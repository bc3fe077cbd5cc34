// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

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
		if !slices.Equal(images, []string{image}) {
			return fmt.Errorf("images %v, want %s", images, image)
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
	mca, err := hub.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addonName, metav1.GetOptions{})
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
