// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	typedtraffic "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/typed/traffic/v1alpha1"
)

// aggregationWait bounds how long the clusterrole-aggregation controller may take to
// add the chart's rules to view, edit and admin.
const aggregationWait = 30 * time.Second

// TestChartAggregatedRoles: the chart's ClusterRoles labelled aggregate-to-view, -edit
// and -admin, applied to the hub as `helm install` renders them, give Kubernetes'
// default roles their policies, through the real clusterrole-aggregation controller of
// kube-controller-manager (testbed.StartRoleAggregation), as on a real hub. In a
// tenant's namespace, a user bound to edit creates, changes and deletes policies
// (but not their status, the manager's); a user bound to view reads them (get, list,
// watch) and may not write them; admin does what edit does. Before the chart's roles
// are there, edit grants nothing on policies; a binding in one namespace grants
// nothing in another.
func TestChartAggregatedRoles(t *testing.T) {
	ctx := t.Context()
	kube := hubKube(t)
	if _, err := bed.StartRoleAggregation(ctx, bed.Hub); err != nil {
		t.Fatalf("start the clusterrole-aggregation controller: %v", err)
	}
	ns := bed.Hub.Namespace(t, "tenant")
	other := bed.Hub.Namespace(t, "tenant-other")

	// One user per default role, each bound to it in ns only, as a hub admin gives a
	// team its namespace.
	users := map[string]versioned.Interface{}
	for _, role := range []string{"view", "edit", "admin"} {
		user := "tenant-" + role + "-" + ns
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg, err := bed.Hub.UserConfig(user)
		if err != nil {
			t.Fatal(err)
		}
		if users[role], err = versioned.NewForConfig(cfg); err != nil {
			t.Fatal(err)
		}
	}
	policies := func(role, namespace string) typedtraffic.TrafficMigrationPolicyInterface {
		return users[role].TrafficV1alpha1().TrafficMigrationPolicies(namespace)
	}
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}

	// Without the chart's roles, edit has nothing on policies: what follows comes
	// from them.
	_, err := policies("edit", ns).Create(ctx, queryPolicy("before"), metav1.CreateOptions{})
	forbidden("edit creates a policy before the chart's roles exist", err)

	for _, role := range chartAggregatedRoles(t, ns) {
		if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("apply the chart's ClusterRole %s: %v", role.Name, err)
		}
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		})
	}
	// The aggregation is the controller's, and takes a moment: wait until the API
	// server's authorizer grants what the roles say, for each role.
	for role, verb := range map[string]string{"view": "watch", "edit": "create", "admin": "deletecollection"} {
		waitAllowed(t, kube, "tenant-"+role+"-"+ns, ns, verb)
	}

	// edit: create, read, change and delete; not the status.
	created, err := policies("edit", ns).Create(ctx, queryPolicy("by-editor"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a user bound to edit creates a policy: %v", err)
	}
	if _, err := policies("edit", ns).Patch(ctx, created.Name, types.MergePatchType, []byte(`{"spec":{"expectedMetricsResult":"<= 0.01"}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("a user bound to edit changes a policy: %v", err)
	}
	_, err = policies("edit", ns).Patch(ctx, created.Name, types.MergePatchType, []byte(`{"status":{"observedGeneration":1}}`), metav1.PatchOptions{}, "status")
	forbidden("edit writes a policy's status", err)
	_, err = policies("edit", other).Create(ctx, queryPolicy("elsewhere"), metav1.CreateOptions{})
	forbidden("edit creates a policy in a namespace it is not bound in", err)

	// view: get, list and watch; nothing else.
	if got, err := policies("view", ns).Get(ctx, created.Name, metav1.GetOptions{}); err != nil || got.Spec.ExpectedMetricsResult != "<= 0.01" {
		t.Errorf("a user bound to view gets the policy: %v, %+v", err, got)
	}
	if list, err := policies("view", ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 || list.Items[0].Name != created.Name {
		t.Errorf("a user bound to view lists the policies: %v, %+v", err, list)
	}
	w, err := policies("view", ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("a user bound to view watches the policies: %v", err)
	} else {
		w.Stop()
	}
	_, err = policies("view", ns).Create(ctx, queryPolicy("by-viewer"), metav1.CreateOptions{})
	forbidden("view creates a policy", err)
	_, err = policies("view", ns).Patch(ctx, created.Name, types.MergePatchType, []byte(`{"spec":{"expectedMetricsResult":"<= 0.5"}}`), metav1.PatchOptions{})
	forbidden("view changes a policy", err)
	forbidden("view deletes a policy", policies("view", ns).Delete(ctx, created.Name, metav1.DeleteOptions{}))
	_, err = policies("view", other).List(ctx, metav1.ListOptions{})
	forbidden("view lists the policies of a namespace it is not bound in", err)

	// admin: what edit does.
	if _, err := policies("admin", ns).Create(ctx, queryPolicy("by-admin"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a user bound to admin creates a policy: %v", err)
	}
	if err := policies("admin", ns).Delete(ctx, "by-admin", metav1.DeleteOptions{}); err != nil {
		t.Errorf("a user bound to admin deletes a policy: %v", err)
	}
	if err := policies("edit", ns).Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("a user bound to edit deletes a policy: %v", err)
	}
}

// chartAggregatedRoles are the ClusterRoles of the chart's aggregate-roles.yaml, as
// `helm install` renders them with the chart's defaults.
func chartAggregatedRoles(t *testing.T, namespace string) []*rbacv1.ClusterRole {
	t.Helper()
	var roles []*rbacv1.ClusterRole
	for _, doc := range chartDocuments(t, namespace, "templates/aggregate-roles.yaml") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.UnmarshalStrict(doc, role); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if role.Kind == "" {
			continue
		}
		if role.Kind != "ClusterRole" {
			t.Fatalf("the chart's aggregate-roles.yaml renders a %s", role.Kind)
		}
		roles = append(roles, role)
	}
	if len(roles) != 2 {
		t.Fatalf("the chart renders %d aggregated ClusterRoles, want 2 (view, edit)", len(roles))
	}
	return roles
}

// waitAllowed waits until the hub's authorizer lets user do verb on the policies of
// namespace, as a SubjectAccessReview asks it.
func waitAllowed(t *testing.T, kube kubernetes.Interface, user, namespace, verb string) {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: trafficv1alpha1.GroupName, Resource: "trafficmigrationpolicies",
		},
	}}
	var last authorizationv1.SubjectAccessReviewStatus
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, aggregationWait, true, func(ctx context.Context) (bool, error) {
		r, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		last = r.Status
		return r.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("%s may not %s policies in %s after %s (last answer %+v): is the chart's role aggregated? %v", user, verb, namespace, aggregationWait, last, err)
	}
}
