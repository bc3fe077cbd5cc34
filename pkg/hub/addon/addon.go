// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package addon is the hub side of the traffic-migration add-on, built on OCM's add-on
// framework: the agent's manifests, which the framework renders per cluster and ships
// through ManifestWork, the agent's registration (a hub kubeconfig through the CSR
// flow and the hub RBAC it needs), and its health: the availability of the agent's
// Deployment on each cluster.
package addon

import (
	"context"
	"embed"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"open-cluster-management.io/addon-framework/pkg/addonfactory"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

const (
	// AgentName is the stable name of the agent in its hub identity:
	// system:open-cluster-management:cluster:<cluster>:addon:traffic-migration:agent:agent.
	AgentName = "agent"

	// DefaultInstallNamespace is where the agent runs on each cluster unless an
	// AddOnDeploymentConfig says otherwise.
	DefaultInstallNamespace = "open-cluster-management-agent-addon"

	// HubKubeconfigSecret is the Secret, in the install namespace, in which OCM's
	// registration agent writes the agent's hub kubeconfig.
	HubKubeconfigSecret = trafficv1alpha1.AddonName + "-hub-kubeconfig"

	// MetricsLabelsVariable is the AddOnDeploymentConfig customized variable whose value
	// (k=v,k2=v2) the agent reports as the cluster's metrics labels.
	MetricsLabelsVariable = "METRICS_LABELS"

	// ImagePullSecretsVariable is the AddOnDeploymentConfig customized variable that
	// names, separated by commas, the Secrets in the agent's namespace on each cluster
	// that the agent's pods pull their image with (the Deployment's imagePullSecrets).
	// The AddOnDeploymentConfig has no field of its own for them.
	ImagePullSecretsVariable = "IMAGE_PULL_SECRETS"
)

//go:embed manifests/templates
var manifests embed.FS

// Options configure the add-on.
type Options struct {
	// AgentImage is the image of the agent, unless an AddOnDeploymentConfig's
	// registries say otherwise.
	AgentImage string
}

// NewAgentAddon builds the traffic-migration add-on for the framework's manager.
func NewAgentAddon(kubeClient kubernetes.Interface, addonClient addonclient.Interface, o Options) (agent.AgentAddon, error) {
	configs := utils.NewAddOnDeploymentConfigGetter(addonClient)
	a, err := addonfactory.NewAgentAddonFactory(trafficv1alpha1.AddonName, manifests, "manifests/templates").
		WithConfigGVRs(utils.AddOnDeploymentConfigGVR).
		WithGetValuesFuncs(
			defaultValues(o),
			addonfactory.GetAddOnDeploymentConfigValues(configs,
				addonfactory.ToAddOnDeploymentConfigValues,
				addonfactory.ToImageOverrideValuesFunc("Image", o.AgentImage),
				imagePullSecretsValues,
			),
		).
		WithAgentRegistrationOption(&agent.RegistrationOption{
			Configurations:   agent.KubeClientSignerConfigurations(trafficv1alpha1.AddonName, AgentName),
			CSRApproveCheck:  utils.DefaultCSRApprover(AgentName),
			PermissionConfig: hubPermissions(kubeClient),
		}).
		WithAgentInstallNamespace(utils.AgentInstallNamespaceFromDeploymentConfigFunc(configs)).
		// The add-on is Available while its agent's Deployment has a Ready replica, as
		// the work agent reports it in the ManifestWork's status feedback: the agent's
		// readiness probe passes once it has read its hub kubeconfig and its caches have
		// synced. The agent itself writes nothing for its health.
		WithAgentHealthProber(&agent.HealthProber{Type: agent.HealthProberTypeDeploymentAvailability}).
		BuildTemplateAgentAddon()
	if err != nil {
		return nil, fmt.Errorf("build the %s add-on: %w", trafficv1alpha1.AddonName, err)
	}
	return a, nil
}

// defaultValues are the template values of every cluster before an
// AddOnDeploymentConfig's.
func defaultValues(o Options) addonfactory.GetValuesFunc {
	return func(cluster *clusterv1.ManagedCluster, _ *addonv1beta1.ManagedClusterAddOn) (addonfactory.Values, error) {
		return addonfactory.Values{
			"ClusterName":      cluster.Name,
			"KubeConfigSecret": HubKubeconfigSecret,
			"Image":            o.AgentImage,
		}, nil
	}
}

// imagePullSecretsValues reads ImagePullSecretsVariable into ImagePullSecrets, the
// names the agent's Deployment template lists. A name that is not a Secret's name
// fails the rendering, saying which: the agent is then left as it was, rather than
// deployed with a pull secret other than the one meant.
func imagePullSecretsValues(config addonv1beta1.AddOnDeploymentConfig) (addonfactory.Values, error) {
	var names []string
	for _, v := range config.Spec.CustomizedVariables {
		if v.Name != ImagePullSecretsVariable {
			continue
		}
		names = names[:0]
		for name := range strings.SplitSeq(v.Value, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				return nil, fmt.Errorf("AddOnDeploymentConfig %s/%s: %s %q is not a Secret's name: %s",
					config.Namespace, config.Name, ImagePullSecretsVariable, name, strings.Join(errs, "; "))
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return addonfactory.Values{"ImagePullSecrets": names}, nil
}

// hubPermissions lets a cluster's agent read its own ManagedClusterAddOn and write its
// status, in its cluster's namespace and nowhere else. The role is bound to the agent's
// user, which names its cluster, and not to the add-on's group, which every cluster's
// agent shares.
func hubPermissions(kubeClient kubernetes.Interface) agent.PermissionConfigFunc {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:traffic-migration:agent"},
		Rules: []rbacv1.PolicyRule{
			{
				APIGroups:     []string{addonv1beta1.GroupName},
				Resources:     []string{"managedclusteraddons"},
				ResourceNames: []string{trafficv1alpha1.AddonName},
				Verbs:         []string{"get", "list", "watch"},
			},
			{
				APIGroups:     []string{addonv1beta1.GroupName},
				Resources:     []string{"managedclusteraddons/status"},
				ResourceNames: []string{trafficv1alpha1.AddonName},
				Verbs:         []string{"get", "patch", "update"},
			},
		},
	}
	return func(ctx context.Context, cluster *clusterv1.ManagedCluster, addon *addonv1beta1.ManagedClusterAddOn) error {
		user := agent.DefaultUser(cluster.Name, trafficv1alpha1.AddonName, AgentName)
		return utils.NewRBACPermissionConfigBuilder(kubeClient).BindRoleToUser(role.DeepCopy(), user).Build()(ctx, cluster, addon)
	}
}
