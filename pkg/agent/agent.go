// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package agent is the traffic-migration spoke agent process: it connects to its own
// cluster and to the hub, reports the cluster's Gateways and metrics labels on the
// add-on's ManagedClusterAddOn (package report) and serves its health probes, whose
// readiness makes its Deployment available and so the add-on Available on the hub.
package agent

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"open-cluster-management.io/traffic-migration/pkg/agent/report"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/probe"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// userAgent names the agent in the API servers' audit logs and metrics.
const userAgent = "traffic-migration-agent"

// Run runs the agent until ctx is done. It returns nil after a shutdown asked for
// through ctx, and an error when the options are invalid, a client cannot be built or
// the health probe server fails. It never exits the process.
func (o *Options) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if err := o.Validate(); err != nil {
		return fmt.Errorf("invalid options: %w", err)
	}
	// Validate parsed both already.
	metricsLabels, _ := ParseMetricsLabels(o.MetricsLabels)
	selector, _ := labels.Parse(o.GatewayLabelSelector)

	hubConfig, spokeConfig, err := o.restConfigs()
	if err != nil {
		return err
	}
	c, err := newClients(hubConfig, spokeConfig)
	if err != nil {
		return err
	}

	// /readyz answers 200 once the agent's caches have synced.
	ready := &atomic.Bool{}
	probes, err := probe.Listen("health probes", o.HealthProbeBindAddress, probe.Handler(ctx, ready, "the agent's caches have not synced"))
	if err != nil {
		return err
	}
	if o.OnListening != nil {
		o.OnListening(probes.Addr())
	}
	// A probe server that fails stops the agent: a pod without probes is restarted
	// anyway.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := probe.Serve(ctx, cancel, probes)

	// The hub kubeconfig may allow no more than this add-on in this cluster's
	// namespace; the CRD informer needs only the Gateway CRD.
	addonInformers := addoninformers.NewSharedInformerFactoryWithOptions(c.hubAddon, 0,
		addoninformers.WithNamespace(o.ClusterName),
		addoninformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String()
		}))
	crdInformers := apiextensionsinformers.NewSharedInformerFactoryWithOptions(c.spokeAPIExtensions, 0,
		apiextensionsinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", report.GatewayCRDName).String()
		}))
	ctrl := report.NewController(report.Config{
		ClusterName:   o.ClusterName,
		Labels:        metricsLabels,
		Selector:      selector,
		AddonClient:   c.hubAddon.AddonV1alpha1(),
		Addons:        addonInformers.Addon().V1alpha1().ManagedClusterAddOns(),
		CRDs:          crdInformers.Apiextensions().V1().CustomResourceDefinitions(),
		Namespaces:    c.spokeKube.CoreV1(),
		GatewayClient: c.spokeGateway,
	})
	addonInformers.Start(ctx.Done())
	crdInformers.Start(ctx.Done())

	var wg sync.WaitGroup
	wg.Go(func() {
		if cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced) {
			ready.Store(true)
			logger.Info("Agent ready", "cluster", o.ClusterName)
		}
	})
	logger.Info("Starting the agent", "cluster", o.ClusterName, "gatewaySelector", selector.String(), "addonNamespace", o.AddonNamespace)
	ctrl.Run(ctx)

	cancel()
	wg.Wait()
	addonInformers.Shutdown()
	crdInformers.Shutdown()
	return srv.Shutdown(ctx)
}

// restConfigs loads the hub's and the agent's cluster's client configurations.
func (o *Options) restConfigs() (hub, spoke *rest.Config, err error) {
	if hub, err = clientcmd.BuildConfigFromFlags("", o.HubKubeconfig); err != nil {
		return nil, nil, fmt.Errorf("load the hub kubeconfig: %w", err)
	}
	if err := trustProxyCA(hub, o.HubProxyCABundle); err != nil {
		return nil, nil, err
	}
	if o.Kubeconfig == "" {
		spoke, err = rest.InClusterConfig()
	} else {
		spoke, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load the cluster's kubeconfig: %w", err)
	}
	ua := version.UserAgent(userAgent)
	hub.UserAgent, spoke.UserAgent = ua, ua
	return hub, spoke, nil
}

// trustProxyCA adds the certificates of bundle (PEM) to the CAs that hub's client
// trusts: the TLS connection to an HTTPS proxy, and to the hub through a proxy that
// inspects TLS, is verified with the same CAs as the hub's own. A kubeconfig that
// names no CA trusts the system's roots, which a bundle would replace, so it is
// refused with one.
func trustProxyCA(hub *rest.Config, bundle string) error {
	if strings.TrimSpace(bundle) == "" {
		return nil
	}
	// Only the CA is read from its file: the client certificate's files stay files,
	// so that their rotation is picked up.
	if len(hub.CAData) == 0 && hub.CAFile != "" {
		data, err := os.ReadFile(hub.CAFile)
		if err != nil {
			return fmt.Errorf("read the hub kubeconfig's CA: %w", err)
		}
		hub.CAData = data
	}
	if len(hub.CAData) == 0 {
		return fmt.Errorf("the hub kubeconfig names no CA, so its client trusts the system's; %s cannot be added to them: put the hub's CA in the kubeconfig", ProxyCABundleEnv)
	}
	var certs []byte
	for remaining := []byte(bundle); ; {
		var block *pem.Block
		block, remaining = pem.Decode(remaining)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("%s: a certificate that cannot be read: %w", ProxyCABundleEnv, err)
		}
		certs = append(certs, pem.EncodeToMemory(block)...)
	}
	if len(certs) == 0 {
		return fmt.Errorf("%s holds no PEM certificate", ProxyCABundleEnv)
	}
	hub.CAData = append(append(bytes.TrimRight(hub.CAData, "\n"), '\n'), certs...)
	hub.CAFile = ""
	return nil
}

// clients are the agent's API clients.
type clients struct {
	hubAddon           addonclient.Interface
	spokeKube          kubernetes.Interface
	spokeAPIExtensions apiextensionsclient.Interface
	spokeGateway       gatewayclient.Interface
}

func newClients(hub, spoke *rest.Config) (*clients, error) {
	c := &clients{}
	var errs []error
	var err error
	if c.hubAddon, err = addonclient.NewForConfig(hub); err != nil {
		errs = append(errs, fmt.Errorf("build the hub's add-on client: %w", err))
	}
	if c.spokeKube, err = kubernetes.NewForConfig(spoke); err != nil {
		errs = append(errs, fmt.Errorf("build the cluster's Kubernetes client: %w", err))
	}
	if c.spokeAPIExtensions, err = apiextensionsclient.NewForConfig(spoke); err != nil {
		errs = append(errs, fmt.Errorf("build the cluster's CRD client: %w", err))
	}
	if c.spokeGateway, err = gatewayclient.NewForConfig(spoke); err != nil {
		errs = append(errs, fmt.Errorf("build the cluster's Gateway API client: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}
