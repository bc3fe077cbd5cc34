// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package hubclient reaches the hub for the commands that talk to it (status, check,
// wait, dashboard, suspend, resume, force-remove, version, and the shell completion of
// policy and cluster names) with kubectl's own flags: those of k8s.io/cli-runtime's
// ConfigFlags (--kubeconfig, --context, --namespace, --as, --as-group,
// --request-timeout, --cluster, --user, --server, ...), read the way kubectl reads them.
// The root command has them among its persistent flags, as kubectl plugins do, so that
// every command takes them before or after its name.
package hubclient

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"

	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
)

// Flags are the flags of a command that talks to the hub. Kubeconfig, Context and
// Namespace are the values of --kubeconfig, --context and --namespace; set before
// AddFlags, they are the flags' defaults (tests set them instead of parsing flags).
type Flags struct {
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
	// Namespace is the namespace to read; empty means the context's namespace.
	Namespace string

	config *genericclioptions.ConfigFlags
	// added is true once AddFlags added the flags to a flag set.
	added bool
}

// ConfigFlags returns kubectl's flags, whose kubeconfig, context and namespace are
// f's fields.
func (f *Flags) ConfigFlags() *genericclioptions.ConfigFlags {
	if f.config == nil {
		f.config = genericclioptions.NewConfigFlags(true)
		f.config.KubeConfig, f.config.Context, f.config.Namespace = &f.Kubeconfig, &f.Context, &f.Namespace
	}
	return f.config
}

// AddFlags adds kubectl's flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.ConfigFlags().AddFlags(fs)
	f.added = true
}

// AddTo adds kubectl's flags to cmd's own flags, unless they were added already: the
// root command adds the flags it shares with its commands to its persistent flags
// first, and a command built alone (as tests build them) takes them as its own.
func (f *Flags) AddTo(cmd *cobra.Command) {
	if !f.added {
		f.AddFlags(cmd.Flags())
	}
}

// Names are the names of kubectl's flags that AddFlags adds.
func Names() []string {
	fs := pflag.NewFlagSet("names", pflag.ContinueOnError)
	(&Flags{}).AddFlags(fs)
	var names []string
	fs.VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	return names
}

// Load reads the kubeconfig as kubectl finds it (--kubeconfig, then $KUBECONFIG, then
// ~/.kube/config, or the in-cluster config), with the flags' overrides, and returns a
// client configuration that sends userAgent, and the namespace to read: --namespace,
// or the context's, or "default".
func (f *Flags) Load(userAgent string) (*rest.Config, string, error) {
	cfg, err := f.ConfigFlags().ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load the kubeconfig: %w", err)
	}
	namespace, _, err := f.ConfigFlags().ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	return rest.AddUserAgent(rest.CopyConfig(cfg), userAgent), namespace, nil
}

// Clients are the hub clients the commands read and write through.
type Clients struct {
	Kube    kubernetes.Interface
	Traffic trafficclient.Interface
	Cluster clusterclient.Interface
	Addon   addonclient.Interface
}

// NewClients loads the kubeconfig (see Load) and builds the hub clients on it; it
// also returns the namespace to read.
func (f *Flags) NewClients(userAgent string) (*Clients, string, error) {
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

// Options are what every command that talks to the hub holds: kubectl's flags (shared
// with the root command) and the hub clients built from them once, on first use, with
// the user agent of the command's verb.
type Options struct {
	*Flags
	// Verb is the command's name in its user agent (UserAgent): status, wait, suspend, ...
	Verb string
	// Load builds the clients and says which namespace to read; nil builds them from
	// the flags. Tests set it to fakes.
	Load func() (*Clients, string, error)

	clients   *Clients
	namespace string
}

// NewOptions returns the options of the command verb on flags; nil flags gives the
// command flags of its own.
func NewOptions(flags *Flags, verb string) Options {
	if flags == nil {
		flags = &Flags{}
	}
	return Options{Flags: flags, Verb: verb}
}

// Clients returns the hub clients and the namespace to read: --namespace, or the
// kubeconfig context's, or "default". They are built on the first call.
func (o *Options) Clients() (*Clients, string, error) {
	if o.clients != nil {
		return o.clients, o.namespace, nil
	}
	load := o.Load
	if load == nil {
		load = func() (*Clients, string, error) { return o.Flags.NewClients(UserAgent(o.Verb)) }
	}
	c, namespace, err := load()
	if err != nil {
		return nil, "", err
	}
	o.clients, o.namespace = c, namespace
	return c, namespace, nil
}
