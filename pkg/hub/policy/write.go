// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"open-cluster-management.io/sdk-go/pkg/patcher"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// object is an API object as clients and listers return it.
type object interface {
	metav1.Object
	runtime.Object
}

// resourceClient is what the controller uses of a typed client of one resource.
type resourceClient[T object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// writer is the one way the controller writes objects of one resource: creates,
// patches through sdk-go's patcher (which writes nothing when nothing changed and
// carries the resourceVersion that was read, so a write from a stale view conflicts)
// and deletes with preconditions. Every write is made as the controller's field
// manager and recorded in the controller's expectations, so that the next sync of the
// policy waits until the caches show it. A writer is made for one sync's writes to
// one namespace.
type writer[T object, Sp, St any] struct {
	client resourceClient[T]
	// expect records the writes for the policy whose sync makes them, as kind.
	expect *expectations
	policy string
	kind   kind

	patcher patcher.Patcher[T, Sp, St]
	// last is the object as the last patch left it: the patcher does not return it.
	last T
}

func newWriter[T object, Sp, St any](client resourceClient[T], expect *expectations, policy string, k kind) *writer[T, Sp, St] {
	w := &writer[T, Sp, St]{client: client, expect: expect, policy: policy, kind: k}
	w.patcher = patcher.NewPatcher[T, Sp, St](w)
	return w
}

// Patch implements patcher.PatchClient: the patcher's writes go through here.
func (w *writer[T, Sp, St]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	opts.FieldManager = ControllerName
	obj, err := w.client.Patch(ctx, name, pt, data, opts, subresources...)
	if err == nil {
		w.expect.wrote(w.policy, w.kind, obj)
		w.last = obj
	}
	return obj, err
}

// create creates obj and returns it as the API server made it.
func (w *writer[T, Sp, St]) create(ctx context.Context, obj T) (T, error) {
	created, err := w.client.Create(ctx, obj, metav1.CreateOptions{FieldManager: ControllerName})
	if err == nil {
		w.expect.wrote(w.policy, w.kind, created)
	}
	return created, err
}

// patchStatus writes obj's status from old to updated and returns the object as
// written: obj itself when nothing changed.
func (w *writer[T, Sp, St]) patchStatus(ctx context.Context, obj T, updated, old St) (T, error) {
	changed, err := w.patcher.PatchStatus(ctx, obj, updated, old)
	if err != nil || !changed {
		return obj, err
	}
	return w.last, nil
}

// patchMeta writes obj's labels and annotations from old to updated and returns the
// object as written: obj itself when nothing changed.
func (w *writer[T, Sp, St]) patchMeta(ctx context.Context, obj T, updated, old metav1.ObjectMeta) (T, error) {
	changed, err := w.patcher.PatchLabelAnnotations(ctx, obj, updated, old)
	if err != nil || !changed {
		return obj, err
	}
	return w.last, nil
}

// delete deletes obj only as it was read: its UID and resourceVersion.
func (w *writer[T, Sp, St]) delete(ctx context.Context, obj T) error {
	uid, version := obj.GetUID(), obj.GetResourceVersion()
	err := w.client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}})
	if err == nil || apierrors.IsNotFound(err) {
		w.expect.deleted(w.policy, w.kind, obj)
	}
	return err
}

// The writers of the three resources the controller writes.
type (
	policyWriter    = writer[*trafficv1alpha1.TrafficMigrationPolicy, trafficv1alpha1.TrafficMigrationPolicySpec, trafficv1alpha1.TrafficMigrationPolicyStatus]
	placementWriter = writer[*clusterv1beta1.Placement, clusterv1beta1.PlacementSpec, clusterv1beta1.PlacementStatus]
	decisionWriter  = writer[*clusterv1beta1.PlacementDecision, struct{}, clusterv1beta1.PlacementDecisionStatus]
)

// policyWriter, placementWriter and decisionWriter write for policy's sync.
func (c *Controller) policyWriter(policy *trafficv1alpha1.TrafficMigrationPolicy) *policyWriter {
	return newWriter[*trafficv1alpha1.TrafficMigrationPolicy, trafficv1alpha1.TrafficMigrationPolicySpec, trafficv1alpha1.TrafficMigrationPolicyStatus](
		c.policyClient.TrafficV1alpha1().TrafficMigrationPolicies(policy.Namespace), c.expectations, keyOf(policy), kindPolicy)
}

func (c *Controller) placementWriter(policy *trafficv1alpha1.TrafficMigrationPolicy) *placementWriter {
	return newWriter[*clusterv1beta1.Placement, clusterv1beta1.PlacementSpec, clusterv1beta1.PlacementStatus](
		c.clusterClient.ClusterV1beta1().Placements(policy.Namespace), c.expectations, keyOf(policy), kindPlacement)
}

func (c *Controller) decisionWriter(policy *trafficv1alpha1.TrafficMigrationPolicy) *decisionWriter {
	return newWriter[*clusterv1beta1.PlacementDecision, struct{}, clusterv1beta1.PlacementDecisionStatus](
		c.clusterClient.ClusterV1beta1().PlacementDecisions(policy.Namespace), c.expectations, keyOf(policy), kindDecision)
}

// keyOf is a policy's queue key.
func keyOf(policy *trafficv1alpha1.TrafficMigrationPolicy) string {
	return policy.Namespace + "/" + policy.Name
}

// patchPolicy makes one write to the policy as it is now: write gets the policy as
// the sync read it, and on a conflict the policy as it is then, if it is still the
// same object. The proxy's decisions are written before the policy, so if someone
// changed the policy since it was read (a label, an annotation, its spec) the write
// must still be made, or a removal would go unrecorded. Only this controller writes
// what these writes change, so writing again on a fresh copy loses nobody's change.
func (c *Controller) patchPolicy(ctx context.Context, policy *trafficv1alpha1.TrafficMigrationPolicy, what string,
	write func(w *policyWriter, current *trafficv1alpha1.TrafficMigrationPolicy) error) error {
	w := c.policyWriter(policy)
	current := policy
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := write(w, current)
		if apierrors.IsConflict(err) {
			if fresh, getErr := w.client.Get(ctx, policy.Name, metav1.GetOptions{}); getErr == nil && fresh.UID == policy.UID {
				current = fresh
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s of %s/%s: %w", what, policy.Namespace, policy.Name, err)
	}
	return nil
}
