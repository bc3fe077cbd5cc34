// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package addonstatus

import (
	"context"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
)

const manager = "test-writer"

func addonWith(conditions ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "traffic-migration", Namespace: "c1", UID: "u1", ResourceVersion: "7"},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conditions},
	}
}

var (
	theirs = metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "ProbeAvailable"}
	ours   = metav1.Condition{Type: "Ours", Status: metav1.ConditionTrue, Reason: "Set"}
)

func setOurs(conditions []metav1.Condition) []metav1.Condition {
	meta.SetStatusCondition(&conditions, ours)
	return conditions
}

// patches returns the status patches the client got.
func patches(t *testing.T, client *addonfake.Clientset) []clienttesting.PatchActionImpl {
	t.Helper()
	var out []clienttesting.PatchActionImpl
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			if p.GetSubresource() != "status" || p.PatchOptions.FieldManager != manager {
				t.Errorf("patch of %q as %q, want the status as %q", p.GetSubresource(), p.PatchOptions.FieldManager, manager)
			}
			out = append(out, p)
		}
	}
	return out
}

func TestUpdateWritesOnlyAChange(t *testing.T) {
	addon := addonWith(theirs, ours)
	client := addonfake.NewSimpleClientset(addon)
	written, err := Writer{Client: client.AddonV1alpha1(), FieldManager: manager}.Update(context.Background(), addon, setOurs)
	if err != nil || written != nil {
		t.Fatalf("Update() = %v, %v; want nothing written", written, err)
	}
	if p := patches(t, client); len(p) != 0 {
		t.Errorf("%d patches for no change", len(p))
	}
}

func TestUpdateKeepsOthersConditionsAndCarriesTheVersion(t *testing.T) {
	addon := addonWith(theirs)
	client := addonfake.NewSimpleClientset(addon)
	written, err := Writer{Client: client.AddonV1alpha1(), FieldManager: manager}.Update(context.Background(), addon, setOurs)
	if err != nil || written == nil {
		t.Fatalf("Update() = %v, %v", written, err)
	}
	if got := written.Status.Conditions; len(got) != 2 || meta.FindStatusCondition(got, "Available") == nil || meta.FindStatusCondition(got, "Ours") == nil {
		t.Errorf("conditions written: %+v", got)
	}
	p := patches(t, client)
	if len(p) != 1 {
		t.Fatalf("%d patches, want 1", len(p))
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			UID             string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(p[0].GetPatch(), &body); err != nil || body.Metadata.ResourceVersion != "7" || body.Metadata.UID != "u1" {
		t.Errorf("the patch does not carry the version it was computed from: %s (%v)", p[0].GetPatch(), err)
	}
}

func TestUpdateRereadsOnConflict(t *testing.T) {
	stale := addonWith(theirs)
	// Someone else wrote the add-on after the cache saw it.
	current := addonWith(theirs, metav1.Condition{Type: "Another", Status: metav1.ConditionFalse, Reason: "Theirs"})
	current.ResourceVersion = "8"
	client := addonfake.NewSimpleClientset(current)
	conflicts := 0
	client.PrependReactor("patch", "managedclusteraddons", func(a clienttesting.Action) (bool, runtime.Object, error) {
		var body struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(a.(clienttesting.PatchActionImpl).GetPatch(), &body)
		if body.Metadata.ResourceVersion != "8" {
			conflicts++
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "managedclusteraddons"}, "traffic-migration", nil)
		}
		return false, nil, nil
	})
	written, err := Writer{Client: client.AddonV1alpha1(), FieldManager: manager}.Update(context.Background(), stale, setOurs)
	if err != nil || written == nil {
		t.Fatalf("Update() = %v, %v", written, err)
	}
	if conflicts != 1 || meta.FindStatusCondition(written.Status.Conditions, "Another") == nil || meta.FindStatusCondition(written.Status.Conditions, "Ours") == nil {
		t.Errorf("after %d conflicts wrote %+v; want the other writer's condition kept", conflicts, written.Status.Conditions)
	}
}

func TestUpdateOfADeletedAddon(t *testing.T) {
	client := addonfake.NewSimpleClientset()
	written, err := Writer{Client: client.AddonV1alpha1(), FieldManager: manager}.Update(context.Background(), addonWith(theirs), setOurs)
	if err != nil || written != nil {
		t.Errorf("Update() of a deleted add-on = %v, %v; want nothing and no error", written, err)
	}
}
