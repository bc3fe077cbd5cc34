// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package addonstatus writes conditions of a ManagedClusterAddOn, whose status several
// writers share: the add-on framework, the spoke agent and the hub's fleet-status
// controller each own some of its conditions and must never overwrite another's.
package addonstatus

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned/typed/addon/v1alpha1"
)

// Writer writes the conditions of ManagedClusterAddOns as one field manager.
type Writer struct {
	// Client reaches the ManagedClusterAddOns.
	Client addonclient.ManagedClusterAddOnsGetter
	// FieldManager names the writer in the objects' managedFields.
	FieldManager string
}

// Update sets the conditions of addon to what desired computes from its current ones.
// Nothing is written when they do not change. The write is a merge patch of the status
// that carries the resourceVersion the conditions were computed from: when someone else
// wrote the add-on meanwhile it fails with a conflict, and Update reads the add-on from
// the API server and computes again, so it never overwrites a condition it does not
// own with an old one. It returns the add-on as written, or nil when nothing changed
// or the add-on is gone (a new one is an event of its own).
func (w Writer) Update(ctx context.Context, addon *addonv1alpha1.ManagedClusterAddOn, desired func([]metav1.Condition) []metav1.Condition) (*addonv1alpha1.ManagedClusterAddOn, error) {
	client := w.Client.ManagedClusterAddOns(addon.Namespace)
	var written *addonv1alpha1.ManagedClusterAddOn
	fresh := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if fresh {
			var err error
			if addon, err = client.Get(ctx, addon.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		fresh = true // after a conflict the cache may be behind: read the API server
		conditions := desired(cloneConditions(addon.Status.Conditions))
		if equality.Semantic.DeepEqual(conditions, addon.Status.Conditions) {
			return nil
		}
		patch, err := conditionsPatch(addon, conditions)
		if err != nil {
			return err
		}
		written, err = client.Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: w.FieldManager}, "status")
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("write the status of ManagedClusterAddOn %s/%s: %w", addon.Namespace, addon.Name, err)
	}
	return written, nil
}

// conditionsPatch is the merge patch that sets the conditions of addon, valid only for
// the version of it they were computed from.
func conditionsPatch(addon *addonv1alpha1.ManagedClusterAddOn, conditions []metav1.Condition) ([]byte, error) {
	if conditions == nil {
		conditions = []metav1.Condition{} // null would not clear the list
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": addon.UID, "resourceVersion": addon.ResourceVersion},
		"status":   map[string]any{"conditions": conditions},
	})
}

func cloneConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
