// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/probe"
)

const (
	// DefaultAddonNamespace is the namespace OCM installs add-on agents in, unless an
	// AddOnDeploymentConfig says otherwise.
	DefaultAddonNamespace = "open-cluster-management-agent-addon"
	// DefaultHealthProbeBindAddress is where /healthz and /readyz are served.
	DefaultHealthProbeBindAddress = ":8081"
)

// metricsLabelName is what a metrics label may be called: a Prometheus label name, as
// the labels describe the cluster's series in Prometheus.
var metricsLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Options are the settings of the spoke agent process: how it reaches the hub and its
// own cluster, which cluster it is, and what it reports.
type Options struct {
	// HubKubeconfig is the path of the kubeconfig that OCM's registration agent writes
	// for the add-on. Relative certificate paths in it are resolved against its
	// directory, and rotated certificates are picked up as the files change.
	HubKubeconfig string
	// Kubeconfig is the path of the kubeconfig of the agent's own cluster; empty means
	// the in-cluster service account.
	Kubeconfig string
	// ClusterName is the cluster's name on the hub.
	ClusterName string
	// AddonNamespace is the agent's install namespace, its Deployment's.
	AddonNamespace string
	// MetricsLabels are extra labels of the cluster, "k=v,k2=v2", reported beside
	// cluster_name and cluster_id for the hub's metrics queries.
	MetricsLabels string
	// GatewayLabelSelector selects the Gateways to report; empty selects all.
	GatewayLabelSelector string
	// HealthProbeBindAddress is host:port of /healthz and /readyz.
	HealthProbeBindAddress string
	// HubProxyCABundle holds the PEM certificates of the CA of an HTTPS proxy between
	// the agent and the hub, or of one that inspects TLS: they are trusted beside the
	// hub kubeconfig's CA. It is not a flag: it comes from the environment
	// (ProxyCABundleEnv), where the add-on puts the AddOnDeploymentConfig's
	// proxyConfig.caBundle.
	HubProxyCABundle string

	// OnListening, when set, is called once with the bound address of the health
	// probes before anything else starts. It is not a flag: tests and programs that
	// embed the agent use it to learn a port chosen by the system (":0").
	OnListening func(healthAddress string)
}

// ProxyCABundleEnv is the environment variable of Options.HubProxyCABundle.
const ProxyCABundleEnv = "PROXY_CA_BUNDLE"

// NewOptions returns the options with their defaults, and the proxy's CA bundle
// from the environment.
func NewOptions() *Options {
	return &Options{
		AddonNamespace:         DefaultAddonNamespace,
		HealthProbeBindAddress: DefaultHealthProbeBindAddress,
		HubProxyCABundle:       os.Getenv(ProxyCABundleEnv),
	}
}

// AddFlags adds the options' flags, with the current values as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.HubKubeconfig, "hub-kubeconfig", o.HubKubeconfig,
		"path of the hub kubeconfig that OCM's registration writes for the add-on (required)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"path of the kubeconfig of the agent's own cluster; empty: the in-cluster service account")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "name of this cluster on the hub (required)")
	fs.StringVar(&o.AddonNamespace, "addon-namespace", o.AddonNamespace,
		"the agent's install namespace, its Deployment's")
	fs.StringVar(&o.MetricsLabels, "metrics-labels", o.MetricsLabels,
		"labels of this cluster in metrics, as k=v,k2=v2, reported beside cluster_name and cluster_id")
	fs.StringVar(&o.GatewayLabelSelector, "gateway-label-selector", o.GatewayLabelSelector,
		"label selector of the Gateways to report (at most 64); empty: all Gateways")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"host:port to serve /healthz and /readyz on; port 0 picks a free port")
}

// Validate checks the options and says which flag is wrong and why.
func (o *Options) Validate() error {
	var errs []error
	if o.HubKubeconfig == "" {
		errs = append(errs, errors.New("--hub-kubeconfig is required"))
	} else if _, err := os.Stat(o.HubKubeconfig); err != nil {
		errs = append(errs, fmt.Errorf("--hub-kubeconfig: %w", err))
	}
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("--kubeconfig: %w", err))
		}
	}
	if o.ClusterName == "" {
		errs = append(errs, errors.New("--cluster-name is required"))
	} else if msgs := validation.IsDNS1123Label(o.ClusterName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--cluster-name %q is not a cluster name: %s", o.ClusterName, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.AddonNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--addon-namespace %q is not a namespace name: %s", o.AddonNamespace, strings.Join(msgs, "; ")))
	}
	if _, err := ParseMetricsLabels(o.MetricsLabels); err != nil {
		errs = append(errs, fmt.Errorf("--metrics-labels: %w", err))
	}
	if _, err := labels.Parse(o.GatewayLabelSelector); err != nil {
		errs = append(errs, fmt.Errorf("--gateway-label-selector %q: %w", o.GatewayLabelSelector, err))
	}
	errs = append(errs, probe.ValidateAddress("health-probe-bind-address", o.HealthProbeBindAddress, false))
	return errors.Join(errs...)
}

// ParseMetricsLabels reads metrics labels written as k=v,k2=v2. Spaces around keys and
// values are dropped, and so are empty pairs, so "a=1, b=2," is fine. A key is a
// Prometheus label name not starting with "__", appears once, and is neither
// cluster_name nor cluster_id, which the agent reports itself. A value is not empty
// and has no comma. The empty string means no labels.
func ParseMetricsLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%q is not key=value", strings.TrimSpace(pair)))
		case !metricsLabelName.MatchString(k):
			errs = append(errs, fmt.Errorf("key %q must be a label name: a letter or _, then letters, digits and _", k))
		case strings.HasPrefix(k, "__"):
			errs = append(errs, fmt.Errorf("key %q: names starting with __ are reserved by Prometheus", k))
		case k == trafficv1alpha1.ClusterNameLabel || k == trafficv1alpha1.ClusterIDLabel:
			errs = append(errs, fmt.Errorf("key %q is reserved: the agent reports it itself", k))
		case v == "":
			errs = append(errs, fmt.Errorf("key %q has an empty value", k))
		default:
			if _, dup := out[k]; dup {
				errs = append(errs, fmt.Errorf("key %q is given more than once", k))
				continue
			}
			out[k] = v
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
