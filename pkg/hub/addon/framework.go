// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package addon

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"open-cluster-management.io/addon-framework/pkg/addonmanager"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/index"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"
	workinformers "open-cluster-management.io/api/client/work/informers/externalversions"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// frameworkResync is the add-on framework's own resync period, kept for the caches
// only it reads.
const frameworkResync = 10 * time.Minute

// frameworkIndexers are the indexes the framework's controllers look up, by informer,
// as the framework's own Start adds them. TestFrameworkIndexers fails when a framework
// upgrade adds one that is not here.
var frameworkIndexers = struct {
	manifestWorks, managedClusterAddOns, clusterManagementAddOns cache.Indexers
}{
	manifestWorks: cache.Indexers{
		index.ManifestWorkByAddon:           index.IndexManifestWorkByAddon,
		index.ManifestWorkByHostedAddon:     index.IndexManifestWorkByHostedAddon,
		index.ManifestWorkHookByHostedAddon: index.IndexManifestWorkHookByHostedAddon,
	},
	managedClusterAddOns: cache.Indexers{
		index.ManagedClusterAddonByNamespace: index.IndexManagedClusterAddonByNamespace,
		index.AddonByConfig:                  index.IndexAddonByConfig,
	},
	clusterManagementAddOns: cache.Indexers{
		index.ClusterManagementAddonByConfig: index.IndexClusterManagementAddonByConfig,
	},
}

// StartFramework starts the add-on framework's controllers for agentAddon, as the
// framework's own Start does, but with caches sized for a large fleet: the
// ManagedClusters come from the hub's shared cluster informers (one cache, not two),
// the add-on informers hold only this add-on's ManagedClusterAddOns and
// ClusterManagementAddOn (not every add-on's of the fleet), and every cache is stored
// through transform (the manager drops managedFields). It returns once the
// controllers are started; they and their informers stop with ctx.
//
// The framework's ManagedClusterAddOn informer is of the v1beta1 API, which OCM serves
// through its conversion webhook; the policy controller keeps its own cache of the
// v1alpha1 objects, the version the agents write. Both hold only this add-on's
// objects (one per cluster); sharing one would move the policy controller to v1beta1.
func StartFramework(ctx context.Context, cfg *rest.Config, agentAddon agent.AgentAddon, clusters clusterinformers.SharedInformerFactory, transform cache.TransformFunc) error {
	mgr, err := addonmanager.New(cfg)
	if err != nil {
		return fmt.Errorf("build the add-on manager: %w", err)
	}
	if err := mgr.AddAgent(agentAddon); err != nil {
		return fmt.Errorf("register the %s add-on: %w", trafficv1alpha1.AddonName, err)
	}
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the add-on framework's Kubernetes client: %w", err)
	}
	workClient, err := workclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the add-on framework's work client: %w", err)
	}
	dynamicClient, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the add-on framework's dynamic client: %w", err)
	}
	addonClient, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the add-on framework's add-on client: %w", err)
	}

	// The objects the framework makes for this add-on carry its label.
	byAddonLabel := func(o *metav1.ListOptions) {
		o.LabelSelector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{
			addonv1beta1.AddonLabelKey: trafficv1alpha1.AddonName,
		}})
	}
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, frameworkResync,
		kubeinformers.WithTweakListOptions(byAddonLabel), kubeinformers.WithTransform(transform))
	workInformers := workinformers.NewSharedInformerFactoryWithOptions(workClient, frameworkResync,
		workinformers.WithTweakListOptions(byAddonLabel), workinformers.WithTransform(transform))
	// ManagedClusterAddOns and the ClusterManagementAddOn of this add-on share its name.
	addonInformers := addoninformers.NewSharedInformerFactoryWithOptions(addonClient, frameworkResync,
		addoninformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String()
		}), addoninformers.WithTransform(transform))
	dynamicInformers := dynamicinformer.NewDynamicSharedInformerFactory(dynamicClient, frameworkResync)

	works := workInformers.Work().V1().ManifestWorks()
	for _, ix := range []struct {
		what     string
		informer cache.SharedIndexInformer
		indexers cache.Indexers
	}{
		{"ManifestWorks", works.Informer(), frameworkIndexers.manifestWorks},
		{"ManagedClusterAddOns", addonInformers.Addon().V1beta1().ManagedClusterAddOns().Informer(), frameworkIndexers.managedClusterAddOns},
		{"ClusterManagementAddOns", addonInformers.Addon().V1beta1().ClusterManagementAddOns().Informer(), frameworkIndexers.clusterManagementAddOns},
	} {
		if err := ix.informer.AddIndexers(ix.indexers); err != nil {
			return fmt.Errorf("add the add-on framework's indexes of %s: %w", ix.what, err)
		}
	}

	if err := mgr.StartWithInformers(ctx, workClient, works, kubeInformers, addonInformers, clusters, dynamicInformers); err != nil {
		return fmt.Errorf("start the add-on manager: %w", err)
	}
	kubeInformers.Start(ctx.Done())
	workInformers.Start(ctx.Done())
	addonInformers.Start(ctx.Done())
	dynamicInformers.Start(ctx.Done())
	// The cluster informers are started by their owner, with the other hub informers.
	return nil
}
