// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package hubclient finds the hub's kubeconfig for the read-only commands (status,
// check) as kubectl does, so that every command takes the same --kubeconfig,
// --context and --namespace flags and reads them the same way.
package hubclient

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"

	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
)

// Flags are the kubeconfig flags of a command that reads the hub.
type Flags struct {
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
	// Namespace is the namespace to read; empty means the context's namespace.
	Namespace string
}

// AddFlags adds --kubeconfig, --context and --namespace (-n); what sets the
// namespace is named by namespaceOf, for example "the policies' namespace".
func (f *Flags) AddFlags(fs *pflag.FlagSet, namespaceOf string) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "the hub's kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.Context, "context", f.Context, "the kubeconfig context to use (default: its current context)")
	fs.StringVarP(&f.Namespace, "namespace", "n", f.Namespace, namespaceOf+" (default: the context's namespace)")
}

// Load reads the kubeconfig as kubectl finds it (--kubeconfig, then $KUBECONFIG, then
// ~/.kube/config, or the in-cluster config) and returns a client configuration that
// sends userAgent, and the namespace to read: --namespace, or the context's, or
// "default".
func (f *Flags) Load(userAgent string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := config.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load the kubeconfig: %w", err)
	}
	namespace, _, err := config.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	return rest.AddUserAgent(rest.CopyConfig(cfg), userAgent), namespace, nil
}

// Clients are the hub clients the read-only commands read through.
type Clients struct {
	Kube    kubernetes.Interface
	Traffic trafficclient.Interface
	Cluster clusterclient.Interface
	Addon   addonclient.Interface
}

// Clients loads the kubeconfig (see Load) and builds the hub clients on it; it also
// returns the namespace to read.
func (f *Flags) Clients(userAgent string) (*Clients, string, error) {
	cfg, namespace, err := f.Load(userAgent)
	if err != nil {
		return nil, "", err
	}
	c := &Clients{}
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, "", fmt.Errorf("create the Kubernetes client: %w", err)
	}
	if c.Traffic, err = trafficclient.NewForConfig(cfg); err != nil {
		return nil, "", fmt.Errorf("create the traffic client: %w", err)
	}
	if c.Cluster, err = clusterclient.NewForConfig(cfg); err != nil {
		return nil, "", fmt.Errorf("create the cluster client: %w", err)
	}
	if c.Addon, err = addonclient.NewForConfig(cfg); err != nil {
		return nil, "", fmt.Errorf("create the add-on client: %w", err)
	}
	return c, namespace, nil
}
