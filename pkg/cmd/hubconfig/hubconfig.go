// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package hubconfig finds the hub's REST configuration as kubectl finds it, for the
// commands that people run against a hub (dashboard; status and check can share it):
// --kubeconfig, then $KUBECONFIG, then ~/.kube/config, or the in-cluster config,
// with --context choosing among its contexts.
package hubconfig

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Flags are the kubeconfig flags of a command.
type Flags struct {
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
}

// AddFlags adds --kubeconfig and --context to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "the hub's kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.Context, "context", f.Context, "the kubeconfig context to use (default: its current context)")
}

// Load returns the REST configuration the flags point at, with userAgent as its
// user agent, and the context's namespace ("default" when it names none).
func (f *Flags) Load(userAgent string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.Context})
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
