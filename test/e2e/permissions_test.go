// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"

	"slices"
	"testing"

	"k8s.io/client-go/kubernetes"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// hubPermissions asks the hub what cluster1's agent, as its certificate names it, may
// do: read its own ManagedClusterAddOn and write its status, and nothing of another
// cluster, no Secret and no policy.
func (a *addonTest) hubPermissions(t *testing.T) {
	if a.agentUser == "" {
		t.Fatal("no agent identity read from the agent's certificate")
	}
	// The API server adds system:authenticated to every authenticated user.
	groups := append(slices.Clone(a.agentGroups), "system:authenticated")
	t.Logf("agent identity: user %s, groups %v", a.agentUser, groups)
	addons := func(verb, sub, ns, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: addonv1alpha1.GroupName, Resource: "managedclusteraddons", Subresource: sub, Namespace: ns, Name: name}
	}
	own := func(verb, sub, ns string) authorizationv1.ResourceAttributes { return addons(verb, sub, ns, addonName) }
	secrets := func(verb, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets", Namespace: ns}
	}
	policies := func(verb, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: trafficv1alpha1.GroupName, Resource: "trafficmigrationpolicies", Namespace: ns}
	}
	// What the agent does: read its add-on (list and watch with a metadata.name field
	// selector, which RBAC sees as the name) and write its status.
	allowed := []authorizationv1.ResourceAttributes{
		own("patch", "status", cluster1), own("update", "status", cluster1),
		own("get", "", cluster1), own("watch", "", cluster1), own("list", "", cluster1),
	}
	denied := []authorizationv1.ResourceAttributes{
		// Another cluster's add-on.
		own("patch", "status", cluster2), own("get", "", cluster2), own("watch", "", cluster2),
		// Its add-on's spec, and the other add-ons of its cluster.
		own("patch", "", cluster1), own("delete", "", cluster1),
		addons("get", "", cluster1, "another-addon"), addons("list", "", cluster1, ""),
		// Secrets, anywhere.
		secrets("get", ""), secrets("list", ""), secrets("get", cluster1), secrets("list", cluster1),
		secrets("get", testbed.AgentAddonNamespace),
	}
	// Policies, in all namespaces and in those where they could be.
	for _, ns := range []string{"", cluster1, gatewaySystem} {
		for _, verb := range []string{"get", "list", "update"} {
			denied = append(denied, policies(verb, ns))
		}
	}
	// The add-on framework grants the permissions shortly after registering the agent.
	checkAccess(t, hub.Kube, a.agentUser, groups, allowed, denied)
}

// spokePermissions asks each spoke what the agent's pod identity there, its
// ServiceAccount, may do: read Gateways, find the Gateway API's CRD, read the
// kube-system namespace (the cluster_id label); and nothing else: no write to Gateways
// or their status, no Secret (the hub kubeconfig comes from the pod's volume), no
// other CRD, namespace or workload, and no Lease (its health is its Deployment's).
func (a *addonTest) spokePermissions(t *testing.T) {
	for _, c := range []string{cluster1, cluster2} {
		pods := a.pods.pods(c, testbed.AgentAddonNamespace)
		if len(pods) != 1 {
			t.Fatalf("%d agent pods on %s, want 1", len(pods), c)
		}
		ns, sa := pods[0].Namespace, pods[0].Spec.ServiceAccountName
		user := "system:serviceaccount:" + ns + ":" + sa
		groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
		t.Logf("the agent's identity on %s: user %s, groups %v", c, user, groups)

		gateways := func(verb, sub, ns string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Verb: verb, Group: "gateway.networking.k8s.io", Resource: "gateways", Subresource: sub, Namespace: ns}
		}
		crd := func(verb, name string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Verb: verb, Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: name}
		}
		core := func(verb, resource, ns, name string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Verb: verb, Resource: resource, Namespace: ns, Name: name}
		}
		lease := func(verb, name string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Namespace: ns, Name: name}
		}
		const gatewayCRD = "gateways.gateway.networking.k8s.io"
		allowed := []authorizationv1.ResourceAttributes{
			gateways("get", "", ""), gateways("list", "", ""), gateways("watch", "", ""), gateways("get", "", gatewaySystem),
			crd("get", gatewayCRD), crd("list", gatewayCRD), crd("watch", gatewayCRD),
			core("get", "namespaces", "", metav1.NamespaceSystem),
		}
		denied := []authorizationv1.ResourceAttributes{
			// Gateways: read only.
			gateways("create", "", gatewaySystem), gateways("update", "", gatewaySystem), gateways("patch", "", gatewaySystem),
			gateways("delete", "", gatewaySystem), gateways("update", "status", gatewaySystem), gateways("patch", "status", gatewaySystem),
			// Other Gateway API kinds and other CRDs.
			{Verb: "list", Group: "gateway.networking.k8s.io", Resource: "httproutes"},
			crd("list", ""), crd("get", "httproutes.gateway.networking.k8s.io"), crd("update", gatewayCRD),
			// Secrets and ConfigMaps, its namespace included.
			core("list", "secrets", "", ""), core("get", "secrets", ns, agentHubKubeconfigSecret), core("list", "secrets", ns, ""),
			core("list", "configmaps", "", ""),
			// Other namespaces, workloads, nodes.
			core("list", "namespaces", "", ""), core("get", "namespaces", "", metav1.NamespaceDefault), core("update", "namespaces", "", metav1.NamespaceSystem),
			core("list", "pods", "", ""), core("create", "pods", ns, ""), core("list", "nodes", "", ""),
			{Verb: "update", Group: "apps", Resource: "deployments", Namespace: ns, Name: agentDeployment},
			// Leases.
			lease("create", ""), lease("get", addonName), lease("update", addonName), lease("list", ""),
		}
		checkAccess(t, spokes[c], user, groups, allowed, denied)
	}
}

// checkAccess asks a cluster, with SubjectAccessReviews, whether a user may do what
// allowed lists, waiting for it to be granted, and fails for each thing of denied it
// may do.
func checkAccess(t *testing.T, client kubernetes.Interface, user string, groups []string, allowed, denied []authorizationv1.ResourceAttributes) {
	t.Helper()
	for _, attrs := range allowed {
		eventually(t, fmt.Sprintf("%s may %s", user, describe(attrs)), func(ctx context.Context) error {
			ok, reason, err := canI(ctx, client, user, groups, attrs)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("denied: %s", reason)
			}
			return nil
		})
	}
	for _, attrs := range denied {
		ok, reason, err := canI(t.Context(), client, user, groups, attrs)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("%s may %s: %s", user, describe(attrs), reason)
		}
	}
}

// canI asks a cluster, with a SubjectAccessReview, whether a user may do something.
func canI(ctx context.Context, client kubernetes.Interface, user string, groups []string, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &attrs,
	}}
	got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return got.Status.Allowed, got.Status.Reason, nil
}

func describe(a authorizationv1.ResourceAttributes) string {
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	where := "in all namespaces"
	if a.Namespace != "" {
		where = "in namespace " + a.Namespace
	}
	name := ""
	if a.Name != "" {
		name = " " + a.Name
	}
	return fmt.Sprintf("%s %s%s %s", a.Verb, res, name, where)
}

// managerLeasePermissions asks the hub what the manager's pods' identity may do with
// Leases: create its leader election Lease and get and update it, and nothing more:
// no other Lease, no list, watch or delete.
func managerLeasePermissions(t *testing.T) {
	t.Helper()
	user := "system:serviceaccount:" + managerNamespace + ":" + managerServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + managerNamespace, "system:authenticated"}
	lease := func(verb, ns, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Namespace: ns, Name: name}
	}
	allowed := []authorizationv1.ResourceAttributes{
		lease("create", managerNamespace, ""), lease("get", managerNamespace, managerLease), lease("update", managerNamespace, managerLease),
	}
	denied := []authorizationv1.ResourceAttributes{
		lease("list", managerNamespace, ""), lease("watch", managerNamespace, ""), lease("delete", managerNamespace, managerLease),
		lease("get", managerNamespace, "another"), lease("update", managerNamespace, "another"),
		lease("update", "kube-system", managerLease), lease("create", "kube-system", ""),
	}
	checkAccess(t, hub.Kube, user, groups, allowed, denied)
}
