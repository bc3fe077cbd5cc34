// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/traffic-migration/pkg/agent"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/addon"
)

// applyFieldManager owns, in server-side apply, what ApplyKustomization writes.
const applyFieldManager = "testbed"

// ManifestsDir is the project's plain install manifests: manifests/ at the root of
// the module, with its kustomization.yaml.
func ManifestsDir() (string, error) {
	root, err := moduleDir("")
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "manifests"), nil
}

// ApplyKustomization applies every object of the files that the kustomization.yaml in
// dir lists under resources, in their order, with server-side apply (as
// 'kubectl apply --server-side -k dir' does for a kustomization without
// transformations). It refuses a kustomization that asks for more than a list of
// files, so that nothing it asks for is silently left out. Each of edits changes every
// object before it is applied, as a kustomize patch of the user's overlay would (see
// ManagerArgs). It returns the objects it applied.
func ApplyKustomization(ctx context.Context, cfg *rest.Config, dir string, edits ...func(*unstructured.Unstructured) error) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k map[string]any
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return nil, fmt.Errorf("read %s/kustomization.yaml: %w", dir, err)
	}
	var resources []string
	for key, value := range k {
		switch key {
		case "apiVersion", "kind":
		case "resources":
			list, _ := value.([]any)
			for _, r := range list {
				s, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("%s/kustomization.yaml: resource %v is not a file name", dir, r)
				}
				resources = append(resources, s)
			}
		default:
			return nil, fmt.Errorf("%s/kustomization.yaml uses %q, which ApplyKustomization does not support: it applies a plain list of resources", dir, key)
		}
	}

	var objs []*unstructured.Unstructured
	for _, r := range resources {
		docs, err := readObjects(filepath.Join(dir, r))
		if err != nil {
			return nil, err
		}
		objs = append(objs, docs...)
	}

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, obj := range objs {
		for _, edit := range edits {
			if err := edit(obj); err != nil {
				return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
		if err := applyObject(ctx, dyn, mapper, obj); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// ManagerArgs is an edit of ApplyKustomization that adds args to the command line of
// every container of a Deployment that runs 'traffic-migration manager' (its first
// argument is "manager"), as a user's kustomize patch adds flags.
func ManagerArgs(args ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		if obj.GetKind() != "Deployment" {
			return nil
		}
		containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return err
		}
		for i, c := range containers {
			container, ok := c.(map[string]any)
			if !ok {
				continue
			}
			have, _, err := unstructured.NestedStringSlice(container, "args")
			if err != nil || len(have) == 0 || have[0] != "manager" {
				continue
			}
			if err := unstructured.SetNestedStringSlice(container, append(have, args...), "args"); err != nil {
				return err
			}
			containers[i] = container
		}
		return unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
	}
}

// readObjects reads the objects of a YAML file of one or more documents.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document
		}
		if obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("%s: an object without kind or name", path)
		}
		objs = append(objs, obj)
	}
}

// applyObject applies one object. A kind the mapper does not know yet (a CRD applied
// just before) makes it read the API's discovery again, once.
func applyObject(ctx context.Context, dyn dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		mapper.Reset()
		mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return fmt.Errorf("find the resource of %s %s: %w", gvk, obj.GetName(), err)
	}
	var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			return fmt.Errorf("%s %s has no namespace", gvk.Kind, obj.GetName())
		}
		client = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	if _, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: applyFieldManager, Force: true}); err != nil {
		return fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return nil
}

// AddonAgent is the traffic-migration spoke agent of one joined spoke, run by the test
// bed as a local process: on a spoke without a node nothing runs pods, so the
// Deployment that the add-on ships to the spoke through ManifestWork lands there but
// never runs. (On a spoke with a node that Deployment runs, and needs no AddonAgent.)
type AddonAgent struct {
	// ClusterName is the spoke's cluster name.
	ClusterName string
	// Process is the running agent.
	Process *Process
	// HubKubeconfigPath is the hub kubeconfig it runs with: what OCM's registration
	// agent wrote to the add-on's hub kubeconfig Secret on the spoke, as files (a pod
	// mounts the Secret so).
	HubKubeconfigPath string
	// HealthURL is its /readyz.
	HealthURL string
}

// hubKubeconfigKeys are the keys of the add-on's hub kubeconfig Secret the agent needs;
// the kubeconfig names the certificate files by relative path.
var hubKubeconfigKeys = []string{"kubeconfig", "tls.crt", "tls.key"}

// StartAddonAgent runs traffic-migration-agent, the binary the add-on's agent
// Deployment runs, for a spoke that joined the OCM hub and on which the
// traffic-migration add-on is enabled. It waits until OCM's registration agent has
// written the add-on's hub kubeconfig Secret on the spoke
// (traffic-migration-hub-kubeconfig in open-cluster-management-agent-addon: the
// add-on's CSR approved by the manager and signed on the hub), writes its keys to
// files, starts the agent with them and the spoke's admin kubeconfig, and returns once
// the agent is ready. args are added to its command line, for example
// "--metrics-labels=region=us-east". It runs until the test bed stops, or until its
// process is stopped.
func (b *Bed) StartAddonAgent(ctx context.Context, cluster string, args ...string) (*AddonAgent, error) {
	b.mu.Lock()
	k := b.Klusterlets[cluster]
	b.mu.Unlock()
	if k == nil {
		return nil, fmt.Errorf("spoke %q has not joined the OCM hub: run JoinSpokes first", cluster)
	}
	spokeClient, err := kubernetes.NewForConfig(k.Spoke.Config)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(k.dir, "traffic-migration-agent")
	kubeconfigDir := filepath.Join(dir, "hub-kubeconfig")
	if err := os.MkdirAll(kubeconfigDir, 0o700); err != nil {
		return nil, err
	}
	// The registration agent gets the certificate once the add-on is enabled, the
	// manager has approved its CSR and the hub's kube-controller-manager has signed it.
	err = k.RegistrationAgent.waitReady(ctx, joinTimeout, func(ctx context.Context) error {
		secret, err := spokeClient.CoreV1().Secrets(agent.DefaultAddonNamespace).Get(ctx, addon.HubKubeconfigSecret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no Secret %s/%s on %s yet: is the add-on enabled and the manager running?", agent.DefaultAddonNamespace, addon.HubKubeconfigSecret, cluster)
		}
		if err != nil {
			return err
		}
		for _, key := range hubKubeconfigKeys {
			if len(secret.Data[key]) == 0 {
				return fmt.Errorf("Secret %s/%s on %s has no %s yet", agent.DefaultAddonNamespace, addon.HubKubeconfigSecret, cluster, key)
			}
		}
		for _, key := range hubKubeconfigKeys {
			if err := os.WriteFile(filepath.Join(kubeconfigDir, key), secret.Data[key], 0o600); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the add-on's hub kubeconfig on %s: %w", cluster, err)
	}

	healthPort, err := freePort()
	if err != nil {
		return nil, err
	}
	a := &AddonAgent{
		ClusterName:       cluster,
		HubKubeconfigPath: filepath.Join(kubeconfigDir, "kubeconfig"),
		HealthURL:         "http://" + hostPort(healthPort) + "/readyz",
	}
	args = append([]string{
		"--hub-kubeconfig=" + a.HubKubeconfigPath,
		"--kubeconfig=" + k.Spoke.KubeconfigPath,
		"--cluster-name=" + cluster,
		"--addon-namespace=" + agent.DefaultAddonNamespace,
		"--health-probe-bind-address=" + hostPort(healthPort),
	}, args...)
	a.Process, err = b.StartProgram(ctx, "traffic-migration agent ("+cluster+")", ProgramTrafficMigrationAgent, args, HTTPReady(a.HealthURL))
	if err != nil {
		return nil, err
	}
	return a, nil
}

// AgentHubKubeconfig writes into dir a kubeconfig of the cluster c, the hub, for the
// add-on's agent of the managed cluster named cluster, and returns its path. Its user
// is the agent's, as OCM's registration names it, with the rights the add-on gives the
// agent on the hub and no more: read its own ManagedClusterAddOn, in its cluster's
// namespace, and write its status.
func (c *Cluster) AgentHubKubeconfig(ctx context.Context, cluster, dir string) (string, error) {
	hub, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return "", err
	}
	user := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:agent", cluster, trafficv1alpha1.AddonName)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "traffic-migration-agent", Namespace: cluster},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{addonv1alpha1.GroupName}, Resources: []string{"managedclusteraddons"},
				ResourceNames: []string{trafficv1alpha1.AddonName}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{addonv1alpha1.GroupName}, Resources: []string{"managedclusteraddons/status"},
				ResourceNames: []string{trafficv1alpha1.AddonName}, Verbs: []string{"get", "patch", "update"}},
		},
	}
	if _, err := hub.RbacV1().Roles(cluster).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create the agent's hub Role: %w", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: cluster},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := hub.RbacV1().RoleBindings(cluster).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create the agent's hub RoleBinding: %w", err)
	}
	cfg, err := c.UserConfig(user)
	if err != nil {
		return "", err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["agent"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "agent"}
	kc.CurrentContext = "hub"
	path := filepath.Join(dir, "hub-kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// HTTPReady is a readiness check for StartProgram: a plain HTTP endpoint answers 200.
func HTTPReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		return answersOK(ctx, http.DefaultClient, http.MethodGet, url)
	}
}
