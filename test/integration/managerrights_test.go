// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestChartManagerRights: the chart's rbac.yaml, rendered as `helm install` renders it
// and applied to the hub, gives the manager's ServiceAccount what the policy controller
// needs and nothing more than the chart says, as the real API server's authorizer
// answers a SubjectAccessReview (what `kubectl auth can-i --as=system:serviceaccount:…`
// asks). The add-on framework's rights (CSR approval on the kube-apiserver-client
// signer, ManifestWorks, Roles and RoleBindings, ManagedClusterAddOn create and delete),
// which together equal hub and fleet admin, belong to the add-on manager's
// ServiceAccount alone, which in turn may read no Secret and no policy
// (docs/security.md).
func TestChartManagerRights(t *testing.T) {
	kube := hubKube(t)
	release := bed.Hub.Namespace(t, "tm-rights")
	tenant := bed.Hub.Namespace(t, "tm-rights-tenant")
	// A cluster namespace, as OCM makes one per ManagedCluster.
	clusterNS := bed.Hub.Namespace(t, "tm-rights-cluster")

	applyChartRBAC(t, kube, release)
	user := "system:serviceaccount:" + release + ":traffic-migration-manager"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + release, "system:authenticated"}

	ra := func(ns, verb, group, resource, sub, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: sub, Name: name}
	}
	const (
		traffic = "traffic.open-cluster-management.io"
		cluster = "cluster.open-cluster-management.io"
		addon   = "addon.open-cluster-management.io"
	)
	needed := []authorizationv1.ResourceAttributes{
		ra(tenant, "watch", traffic, "trafficmigrationpolicies", "", ""),
		ra(tenant, "patch", traffic, "trafficmigrationpolicies", "status", "p"),
		ra(tenant, "get", "", "secrets", "", "prometheus"),
		ra(tenant, "create", cluster, "placements", "", ""),
		ra(tenant, "create", cluster, "placementdecisions", "", ""),
		ra(tenant, "update", cluster, "placementdecisions", "status", "d"),
		ra(tenant, "delete", cluster, "placementdecisions", "", "d"),
		ra(tenant, "patch", cluster, "placementdecisions", "", "d"),
		ra("", "watch", cluster, "managedclusters", "", ""),
		ra("", "watch", addon, "managedclusteraddons", "", ""),
		ra(clusterNS, "patch", addon, "managedclusteraddons", "status", "traffic-migration"),
		ra(tenant, "create", "externaldns.k8s.io", "dnsendpoints", "", ""),
		ra(tenant, "create", "events.k8s.io", "events", "", ""),
		ra(release, "create", "coordination.k8s.io", "leases", "", ""),
		ra(release, "update", "coordination.k8s.io", "leases", "", "traffic-migration-manager"),
		ra(release, "watch", "", "configmaps", "", "traffic-migration-notifications-cm"),
	}
	// Never granted, to the policy controller nor to the framework.
	denied := []authorizationv1.ResourceAttributes{
		ra(tenant, "list", "", "secrets", "", ""),
		ra(tenant, "watch", "", "secrets", "", ""),
		ra(tenant, "create", "", "secrets", "", ""),
		ra(tenant, "delete", traffic, "trafficmigrationpolicies", "", "p"),
		ra(tenant, "update", traffic, "trafficmigrationpolicies", "", "p"),
		ra(tenant, "delete", cluster, "placements", "", "p"),
		ra("", "create", cluster, "managedclusters", "", ""),
		ra("", "update", cluster, "managedclusters", "", "c"),
		ra(tenant, "delete", "externaldns.k8s.io", "dnsendpoints", "", "e"),
		ra(release, "update", "coordination.k8s.io", "leases", "", "someone-else"),
		ra(release, "get", "", "configmaps", "", "other"),
		ra("", "create", "rbac.authorization.k8s.io", "clusterrolebindings", "", ""),
		ra("", "bind", "rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin"),
		ra("", "escalate", "rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin"),
		ra(tenant, "create", "", "pods", "", ""),
		ra(tenant, "create", "", "serviceaccounts", "token", "default"),
		ra("", "impersonate", "", "users", "", "admin"),
	}
	// The add-on framework's: equal, together, to hub and fleet admin (issue 42).
	framework := []authorizationv1.ResourceAttributes{
		ra("", "approve", "certificates.k8s.io", "signers", "", "kubernetes.io/kube-apiserver-client"),
		ra("", "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "csr"),
		ra(clusterNS, "create", "work.open-cluster-management.io", "manifestworks", "", ""),
		ra(clusterNS, "create", "rbac.authorization.k8s.io", "rolebindings", "", ""),
		ra(clusterNS, "create", addon, "managedclusteraddons", "", ""),
		ra(clusterNS, "delete", addon, "managedclusteraddons", "", "traffic-migration"),
	}

	wantRights(t, kube, user, groups, needed, append(denied, framework...))

	// The add-on manager: the framework's rights, its own Lease, and a read of the
	// policy controllers' Lease (the handover); no tenant input.
	addonUser := "system:serviceaccount:" + release + ":traffic-migration-addon-manager"
	addonNeeded := append(slices.Clone(framework),
		ra("", "watch", cluster, "managedclusters", "", ""),
		ra("", "watch", addon, "addondeploymentconfigs", "", ""),
		ra(release, "update", "coordination.k8s.io", "leases", "", "traffic-migration-addon-manager"),
		ra(release, "get", "coordination.k8s.io", "leases", "", "traffic-migration-manager"),
	)
	addonDenied := []authorizationv1.ResourceAttributes{
		ra(tenant, "get", "", "secrets", "", "prometheus"),
		ra(release, "get", "", "secrets", "", "traffic-migration-notifications-secret"),
		ra(tenant, "get", traffic, "trafficmigrationpolicies", "", "p"),
		ra(tenant, "create", cluster, "placementdecisions", "", ""),
		ra(tenant, "create", "externaldns.k8s.io", "dnsendpoints", "", ""),
		ra(release, "update", "coordination.k8s.io", "leases", "", "traffic-migration-manager"),
		ra("", "create", "rbac.authorization.k8s.io", "clusterrolebindings", "", ""),
		ra("", "impersonate", "", "users", "", "admin"),
	}
	wantRights(t, kube, addonUser, groups, addonNeeded, addonDenied)
}

// applyChartRBAC applies the chart's rbac.yaml, rendered into namespace release with
// helm's further args (such as --set), to the hub. Its ClusterRoles and ClusterRoleBindings are cluster-wide and named by the chart:
// renamed here per test, so that nothing else on the bed is granted them; they go when
// the test ends.
func applyChartRBAC(t *testing.T, kube kubernetes.Interface, release string, args ...string) {
	t.Helper()
	ctx := t.Context()
	var err error
	suffix := ":" + release
	for _, obj := range chartRBAC(t, release, args...) {
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err = kube.CoreV1().ServiceAccounts(release).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = kube.RbacV1().Roles(release).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			if o.RoleRef.Kind == "ClusterRole" {
				o.RoleRef.Name += suffix
			}
			_, err = kube.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			o.Name += suffix
			_, err = kube.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() {
				_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRoleBinding:
			o.Name += suffix
			o.RoleRef.Name += suffix
			_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() {
				_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		}
		if err != nil {
			t.Fatalf("apply the chart's %T: %v", obj, err)
		}
	}
}

// sarAllowed asks the hub, with a SubjectAccessReview, whether user may do a.
func sarAllowed(ctx context.Context, t *testing.T, kube kubernetes.Interface, user string, groups []string, a authorizationv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &a,
	}}
	got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview for %s: %v", sarDescribe(a), err)
	}
	return got.Status.Allowed
}

// wantRights checks that user, in groups, may do all that allowed holds, once the
// first of it is allowed (RBAC caches catch up), and none of denied.
func wantRights(t *testing.T, kube kubernetes.Interface, user string, groups []string, allowed, denied []authorizationv1.ResourceAttributes) {
	t.Helper()
	pollAllowed(t, kube, user, groups, allowed[0])
	for _, a := range allowed {
		if !sarAllowed(t.Context(), t, kube, user, groups, a) {
			t.Errorf("%s may not %s", user, sarDescribe(a))
		}
	}
	for _, a := range denied {
		if sarAllowed(t.Context(), t, kube, user, groups, a) {
			t.Errorf("%s may %s", user, sarDescribe(a))
		}
	}
}

// pollAllowed waits until the authorizer has the first right a test asks for: it sees
// new bindings through its informers.
func pollAllowed(t *testing.T, kube kubernetes.Interface, user string, groups []string, a authorizationv1.ResourceAttributes) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return sarAllowed(ctx, t, kube, user, groups, a), nil
	})
	if err != nil {
		t.Fatalf("%s never may %s: are the chart's bindings applied? %v", user, sarDescribe(a), err)
	}
}

func sarDescribe(a authorizationv1.ResourceAttributes) string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	if a.Name != "" {
		s += " " + a.Name
	}
	if a.Namespace != "" {
		return s + " in namespace " + a.Namespace
	}
	return s + " cluster-wide"
}

// chartDocuments are the YAML documents of one template of the chart, as `helm
// install` renders it with the chart's defaults into namespace (and args, such as
// --api-versions), empty ones left out.
func chartDocuments(t *testing.T, namespace, template string, args ...string) [][]byte {
	t.Helper()
	dir, err := testbed.ChartDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := testbed.Helm(t.Context(), t.TempDir(), "", append([]string{"template", "traffic-migration", dir,
		"--namespace", namespace, "--show-only", template}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(strings.TrimSpace(strings.ReplaceAll(string(doc), "---", ""))) > 0 {
			docs = append(docs, doc)
		}
	}
}

// chartRBAC are the objects of the chart's rbac.yaml, as `helm install` renders them
// into namespace, with the chart's defaults changed by helm's args.
func chartRBAC(t *testing.T, namespace string, args ...string) []any {
	t.Helper()
	var objs []any
	for _, doc := range chartDocuments(t, namespace, "templates/rbac.yaml", args...) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		var obj any
		switch meta.Kind {
		case "":
			continue
		case "ServiceAccount":
			obj = &corev1.ServiceAccount{}
		case "ClusterRole":
			obj = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding":
			obj = &rbacv1.ClusterRoleBinding{}
		case "Role":
			obj = &rbacv1.Role{}
		case "RoleBinding":
			obj = &rbacv1.RoleBinding{}
		default:
			t.Fatalf("the chart's rbac.yaml renders a %s", meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		t.Fatal("the chart's rbac.yaml renders nothing")
	}
	return objs
}
