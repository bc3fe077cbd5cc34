// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package hub wires the hub manager's controllers: the clients, the informers, the
// policy controller and the fleet-by-cluster controller, started by the manager
// command once it leads.
package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	addoninformers "open-cluster-management.io/api/client/addon/informers/externalversions"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterlisters "open-cluster-management.io/api/client/cluster/listers/cluster/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/events"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficclient "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned"
	trafficinformers "open-cluster-management.io/traffic-migration/pkg/client/informers/externalversions"
	trafficlisters "open-cluster-management.io/traffic-migration/pkg/client/listers/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/addon"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/dns"
	"open-cluster-management.io/traffic-migration/pkg/hub/fleetstatus"
	"open-cluster-management.io/traffic-migration/pkg/hub/notify"
	"open-cluster-management.io/traffic-migration/pkg/hub/nsinformer"
	"open-cluster-management.io/traffic-migration/pkg/hub/policy"
	"open-cluster-management.io/traffic-migration/pkg/hub/process"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// Options configure the hub's controllers.
type Options struct {
	// AgentImage is the spoke agent's image that the add-on deploys.
	AgentImage string

	// PrometheusAllowlist are the Prometheus URLs the manager may connect to (URL
	// prefixes, hosts, wildcard hosts or CIDRs); empty allows any.
	PrometheusAllowlist []string
	// MaxAnswerBytes and MaxSeries bound each answer of a Prometheus.
	MaxAnswerBytes int64
	MaxSeries      int
	// MaxDrainDuration is the hub's ceiling on every drain; zero is none.
	// OnMaxDrainDuration is what happens at it: Hold or Remove.
	MaxDrainDuration   time.Duration
	OnMaxDrainDuration string
	// NotificationsNamespace holds the notifications ConfigMap and Secret
	// (notify.ConfigMapName, notify.SecretName); empty turns notifications off.
	NotificationsNamespace string
	// DNSDomains are the namespaces that may publish each domain
	// (dns.ParseDomains); empty lets every namespace publish any name.
	DNSDomains []string
	// DNSAllowPrivate lets private addresses be published.
	DNSAllowPrivate bool
	// DNSNameserverAllowlist are the name servers the manager may ask whether a
	// cluster left DNS (dns.ParseNameserverAllowlist); empty: public addresses, port
	// 53.
	DNSNameserverAllowlist []string
	// DNSOwnerID is the manager's id on its DNSEndpoints.
	DNSOwnerID string
	// Controllers says what this process runs: ControllersAll, ControllersAddon (the
	// add-on framework only, which takes no tenant input) or ControllersPolicy (the
	// policy, fleet-status and notifications controllers, without the framework).
	Controllers string
	// HandoverLease is the policy controllers' leader election Lease, which the add-on
	// manager (ControllersAddon) reads before it starts the add-on framework
	// (waitForHandover).
	HandoverLease types.NamespacedName
	// StatusWriteQPS and StatusFlushInterval bound the status writes that carry only
	// new check results (policy.StatusWrites).
	StatusWriteQPS      float32
	StatusFlushInterval time.Duration
	// WatchNamespaces are the namespaces whose policies, Placements, decisions and
	// DNSEndpoints the policy controllers watch, each with an informer of its own,
	// so that a hub admin can grant Secrets in those namespaces only; empty: every
	// namespace.
	WatchNamespaces []string
}

// What a manager process runs (--controllers): both halves, as one process did
// before issue 42, or one of them, each under its own ServiceAccount, so that the
// process that reads tenants' templates, Secrets and URLs holds none of the add-on
// framework's rights (docs/design.md, "Splitting the add-on manager from the policy
// controller").
const (
	ControllersAll    = "all"
	ControllersAddon  = "addon-manager"
	ControllersPolicy = "policy"
)

// NewOptions returns the defaults: the agent runs the image of this release, any
// Prometheus URL is allowed, and drains have no ceiling.
func NewOptions() *Options {
	return &Options{
		AgentImage:         DefaultAgentImage,
		MaxAnswerBytes:     promcheck.DefaultMaxAnswerBytes,
		MaxSeries:          promcheck.DefaultMaxSeries,
		OnMaxDrainDuration: string(trafficv1alpha1.DeadlineHold),
		// The manager's own namespace, as for the leader election Lease.
		NotificationsNamespace: process.OwnNamespace(),
		DNSAllowPrivate:        true,
		DNSOwnerID:             defaultDNSOwnerID(process.OwnNamespace()),
		Controllers:            ControllersAll,
		StatusWriteQPS:         20,
		StatusFlushInterval:    time.Minute,
		HandoverLease:          types.NamespacedName{Namespace: process.OwnNamespace(), Name: process.DefaultLeaderElectionID},
	}
}

// defaultDNSOwnerID names the manager on its DNSEndpoints by the namespace it runs
// in, so that two installations on one hub own their own.
func defaultDNSOwnerID(namespace string) string {
	if namespace == "" {
		return "traffic-migration"
	}
	return "traffic-migration." + namespace
}

// DefaultAgentImage is the agent image of this build's release.
var DefaultAgentImage = "quay.io/open-cluster-management/traffic-migration:" + imageTag(version.Version)

func imageTag(v string) string {
	if v == "" || v == "dev" {
		return "latest"
	}
	return v
}

// AddFlags adds the hub's flags to the manager command.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.AgentImage, "agent-image", o.AgentImage, "image of the spoke agent that the add-on deploys (an AddOnDeploymentConfig's registries can rewrite it)")
	fs.StringSliceVar(&o.PrometheusAllowlist, "prometheus-allowlist", o.PrometheusAllowlist,
		"Prometheus URLs that policies' Secrets may name: URL prefixes (https://prom.example.com/), hosts (thanos.monitoring.svc), wildcard hosts (*.monitoring.svc) or CIDRs (10.0.0.0/8), comma-separated; empty allows any")
	fs.Int64Var(&o.MaxAnswerBytes, "prometheus-max-answer-bytes", o.MaxAnswerBytes,
		"largest answer of a Prometheus the manager reads; a larger one fails the check (AnswerTooLarge)")
	fs.IntVar(&o.MaxSeries, "prometheus-max-series", o.MaxSeries,
		"most series the manager reads of one answer of a Prometheus; a check needs one, and more fail it (AnswerTooLarge)")
	fs.DurationVar(&o.MaxDrainDuration, "max-drain-duration", o.MaxDrainDuration,
		"hub-wide ceiling on how long any policy keeps a cluster draining, counted from when it left the real Placement; 0 is none")
	fs.Float32Var(&o.StatusWriteQPS, "status-write-qps", o.StatusWriteQPS,
		"status writes per second, over all policies, that carry only new check results (values, times, history), shared fairly by namespace, a status of more than 10 clusters counting as one write for every 10; beyond it they wait in memory until the policy's next change or --status-flush-interval, so checks keep their interval on a large hub. A change of a phase, a run of passes, a check's result, a condition or the proxy is written at once; 0 writes every check")
	fs.DurationVar(&o.StatusFlushInterval, "status-flush-interval", o.StatusFlushInterval,
		"longest time a policy's new check results wait in memory for --status-write-qps before they are written")
	fs.StringVar(&o.OnMaxDrainDuration, "on-max-drain-duration", o.OnMaxDrainDuration,
		"what happens to a cluster still draining at --max-drain-duration, whatever its policy says: Hold (phase Held) or Remove")
	fs.StringVar(&o.NotificationsNamespace, "notifications-namespace", o.NotificationsNamespace,
		"namespace of the notifications ConfigMap "+notify.ConfigMapName+" and Secret "+notify.SecretName+
			" (the only namespace whose ConfigMaps and Secrets the manager watches for them); defaults to the pod's own namespace; empty turns notifications off")
	fs.StringSliceVar(&o.DNSDomains, "dns-domains", o.DNSDomains,
		"which namespaces may publish which names with spec.dns: <namespace>=<domain> entries, comma-separated, where namespace is a name or * and domain is a name (shop.example.com) or *. and a name (*.a.example.com: every name under it); repeat a namespace for several domains; empty lets every namespace publish any name (a hub of one tenant)")
	fs.BoolVar(&o.DNSAllowPrivate, "dns-allow-private", o.DNSAllowPrivate,
		"publish private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) that agents report; unspecified, loopback, link-local, multicast, broadcast and cloud metadata addresses are never published")
	fs.StringSliceVar(&o.DNSNameserverAllowlist, "dns-nameserver-allowlist", o.DNSNameserverAllowlist,
		"name servers the manager may ask whether a cluster left DNS (spec.dns.verify.nameservers, and the NS servers of a zone it finds): public (any public address, on port 53), host names (ns1.example.com), wildcard hosts (*.example.com), CIDRs (10.0.0.0/8) or IP addresses, each of the last four on any port, comma-separated; empty is public: unspecified, loopback, private, link-local, multicast and cloud metadata addresses and ports other than 53 are refused unless listed")
	fs.StringVar(&o.Controllers, "controllers", o.Controllers,
		"what this process runs: "+ControllersAll+" (the add-on framework and the policy controllers), "+ControllersAddon+
			" (the add-on framework only: it deploys and registers the agent and reads no policy, Secret or URL) or "+ControllersPolicy+
			" (the policy, fleet-status and notifications controllers, without the add-on framework's rights)")
	fs.Var(namespacedName{&o.HandoverLease}, "handover-lease",
		"<namespace>/<name> of the policy controllers' leader election Lease: with --controllers="+ControllersAddon+
			", the add-on framework starts only once its holder runs the policy controllers alone (--controllers="+ControllersPolicy+
			"), or it is released or expired, so that an earlier release's single manager and this one never both run the framework")
	fs.StringSliceVar(&o.WatchNamespaces, "watch-namespaces", o.WatchNamespaces,
		"namespaces whose policies the policy controllers serve, comma-separated: they watch policies, Placements, PlacementDecisions and DNSEndpoints in these alone, and need rights (Secrets included) in these alone; a policy elsewhere is not seen; empty: every namespace")
	fs.StringVar(&o.DNSOwnerID, "dns-owner-id", o.DNSOwnerID,
		"this manager's id on the DNSEndpoints it writes: it never writes one another id owns; unique per manager that writes DNSEndpoints on the hub")
}

// Validate checks the hub's flags and says which is wrong and why.
func (o *Options) Validate() error {
	var errs []error
	if _, err := promcheck.ParseAllowlist(o.PrometheusAllowlist); err != nil {
		errs = append(errs, fmt.Errorf("--prometheus-allowlist: %w", err))
	}
	if o.MaxAnswerBytes < 1 {
		errs = append(errs, fmt.Errorf("--prometheus-max-answer-bytes must be at least 1, not %d", o.MaxAnswerBytes))
	}
	if o.MaxSeries < 1 {
		errs = append(errs, fmt.Errorf("--prometheus-max-series must be at least 1, not %d", o.MaxSeries))
	}
	if o.MaxDrainDuration < 0 {
		errs = append(errs, fmt.Errorf("--max-drain-duration must not be negative, not %s", o.MaxDrainDuration))
	}
	if o.StatusWriteQPS < 0 {
		errs = append(errs, fmt.Errorf("--status-write-qps must not be negative, not %v", o.StatusWriteQPS))
	}
	if o.StatusFlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("--status-flush-interval must be greater than 0, not %s", o.StatusFlushInterval))
	}
	if o.NotificationsNamespace != "" {
		if msgs := validation.IsDNS1123Label(o.NotificationsNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--notifications-namespace %q is not a namespace name: %s", o.NotificationsNamespace, strings.Join(msgs, "; ")))
		}
	}
	if _, err := dns.ParseDomains(o.DNSDomains); err != nil {
		errs = append(errs, fmt.Errorf("--dns-domains: %w", err))
	}
	if _, err := dns.ParseNameserverAllowlist(o.DNSNameserverAllowlist); err != nil {
		errs = append(errs, fmt.Errorf("--dns-nameserver-allowlist: %w", err))
	}
	if msgs := validation.IsQualifiedName(o.DNSOwnerID); o.DNSOwnerID == "" || len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--dns-owner-id %q must be a non-empty name of letters, digits, '-', '_' and '.': %s", o.DNSOwnerID, strings.Join(msgs, "; ")))
	}
	for _, ns := range o.WatchNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--watch-namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	switch o.Controllers {
	case ControllersAll, ControllersAddon, ControllersPolicy:
	default:
		errs = append(errs, fmt.Errorf("--controllers must be %s, %s or %s, not %q", ControllersAll, ControllersAddon, ControllersPolicy, o.Controllers))
	}
	if msgs := validation.IsDNS1123Label(o.HandoverLease.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--handover-lease namespace %q is not a namespace name: %s", o.HandoverLease.Namespace, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Subdomain(o.HandoverLease.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--handover-lease name %q is not a Lease name: %s", o.HandoverLease.Name, strings.Join(msgs, "; ")))
	}
	switch trafficv1alpha1.DeadlineAction(o.OnMaxDrainDuration) {
	case trafficv1alpha1.DeadlineHold, trafficv1alpha1.DeadlineRemove:
	default:
		errs = append(errs, fmt.Errorf("--on-max-drain-duration must be Hold or Remove, not %q", o.OnMaxDrainDuration))
	}
	return errors.Join(errs...)
}

// limits are the policy controller's bounds from the flags, once validated.
func (o *Options) limits() (policy.Limits, error) {
	allowlist, err := promcheck.ParseAllowlist(o.PrometheusAllowlist)
	if err != nil {
		return policy.Limits{}, fmt.Errorf("--prometheus-allowlist: %w", err)
	}
	domains, err := dns.ParseDomains(o.DNSDomains)
	if err != nil {
		return policy.Limits{}, fmt.Errorf("--dns-domains: %w", err)
	}
	nameservers, err := dns.ParseNameserverAllowlist(o.DNSNameserverAllowlist)
	if err != nil {
		return policy.Limits{}, fmt.Errorf("--dns-nameserver-allowlist: %w", err)
	}
	l := policy.Limits{Allowlist: allowlist, MaxAnswerBytes: o.MaxAnswerBytes, MaxSeries: o.MaxSeries,
		DNSDomains: domains, DNSAddresses: dns.AddressRules{RefusePrivate: !o.DNSAllowPrivate}, DNSNameservers: nameservers,
		StatusWrites: policy.StatusWrites{QPS: o.StatusWriteQPS, FlushInterval: o.StatusFlushInterval},
		QuerySpread:  policy.DefaultQuerySpread}
	if o.MaxDrainDuration > 0 {
		l.Ceiling = &decision.Ceiling{MaxDrainDuration: o.MaxDrainDuration, Action: trafficv1alpha1.DeadlineAction(o.OnMaxDrainDuration)}
	}
	return l, nil
}

// Start runs the hub's controllers until ctx ends: the policy controller, the
// fleet-by-cluster controller, the notifications controller (unless
// --notifications-namespace is empty) and the add-on framework's manager of the
// traffic-migration add-on. It is the manager
// command's StartFunc: it marks the
// manager ready once every informer has synced.
func (o *Options) Start(ctx context.Context, env process.Env) error {
	logger := klog.FromContext(ctx)
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(countWrites(env.Registry))

	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the Kubernetes client: %w", err)
	}
	clusterClient, err := clusterclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the OCM cluster client: %w", err)
	}
	addonClient, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the OCM add-on client: %w", err)
	}
	if o.Controllers == ControllersAddon {
		return o.startAddonManager(ctx, env, cfg, kubeClient, addonClient, clusterClient)
	}
	trafficClient, err := trafficclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the traffic-migration client: %w", err)
	}
	dynamicClient, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build the dynamic client: %w", err)
	}
	endpoints := dns.NewEndpoints(dynamicClient, kubeClient.Discovery(), clock.RealClock{}, policy.ControllerName, o.DNSOwnerID)
	endpoints.WatchNamespaces(o.WatchNamespaces)

	// No periodic resync: every sync comes from a change or from the time a draining
	// cluster is next due, so an idle fleet costs nothing.
	// The caches drop what nothing here reads (trimForCache).
	clusterInformers := clusterinformers.NewSharedInformerFactoryWithOptions(clusterClient, 0,
		clusterinformers.WithTransform(trimForCache))
	trafficInformers := trafficinformers.NewSharedInformerFactoryWithOptions(trafficClient, 0,
		trafficinformers.WithTransform(trimForCache))
	// Only this add-on's ManagedClusterAddOns, one per cluster.
	addonInformers := addoninformers.NewSharedInformerFactoryWithOptions(addonClient, 0,
		addoninformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String()
		}), addoninformers.WithTransform(trimForCache))

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(trafficv1alpha1.AddToScheme(scheme))
	recorder, err := events.NewEventRecorder(ctx, scheme, kubeClient.EventsV1(), policy.ControllerName)
	if err != nil {
		return fmt.Errorf("start the event recorder: %w", err)
	}

	informers := policy.Informers{
		Policies:   trafficInformers.Traffic().V1alpha1().TrafficMigrationPolicies(),
		Placements: clusterInformers.Cluster().V1beta1().Placements(),
		Decisions:  clusterInformers.Cluster().V1beta1().PlacementDecisions(),
		Addons:     addonInformers.Addon().V1alpha1().ManagedClusterAddOns(),
	}
	var metadataInformers metadatainformer.SharedInformerFactory
	if o.Controllers == ControllersPolicy {
		metadataClient, err := metadata.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("build the metadata client: %w", err)
		}
		metadataInformers = metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, 0,
			metadatainformer.WithTransform(trimForCache))
	}
	informers.ManagedClusters = managedClusterInformer(clusterInformers, metadataInformers)
	var namespaced []interface{ Start(<-chan struct{}) }
	if len(o.WatchNamespaces) > 0 {
		informers, namespaced = watchNamespaces(informers, o.WatchNamespaces, trafficClient, clusterClient)
	}
	limits, err := o.limits()
	if err != nil {
		return err
	}
	ctrl, err := policy.NewController(trafficClient, clusterClient, kubeClient, informers, recorder, endpoints, limits, policy.NewMetrics(env.Registry), clock.RealClock{})
	if err != nil {
		return err
	}

	fleetCtrl, err := fleetstatus.NewController(addonClient, informers.Policies, informers.Addons)
	if err != nil {
		return err
	}

	// Notifications read the policies from the manager's cache; the informers of their
	// ConfigMap and Secret are their own, and the manager is ready without them, so
	// that a missing ConfigMap, or a Role not yet granted, stops nothing else.
	var notifyCtrl *notify.Controller
	if o.NotificationsNamespace != "" {
		notifyRecorder, err := events.NewEventRecorder(ctx, scheme, kubeClient.EventsV1(), notify.ControllerName)
		if err != nil {
			return fmt.Errorf("start the notifications' event recorder: %w", err)
		}
		if notifyCtrl, err = notify.NewController(informers.Policies.Informer(), dynamicClient, kubeClient, o.NotificationsNamespace, notifyRecorder); err != nil {
			return err
		}
	}

	if o.Controllers == ControllersAll {
		agentAddon, err := addon.NewAgentAddon(kubeClient, addonClient, addon.Options{AgentImage: o.AgentImage})
		if err != nil {
			return err
		}
		// Before the cluster informers start: the framework shares their ManagedClusters.
		if err := addon.StartFramework(ctx, cfg, agentAddon, clusterInformers, trimForCache); err != nil {
			return err
		}
	}

	clusterInformers.Start(ctx.Done())
	trafficInformers.Start(ctx.Done())
	addonInformers.Start(ctx.Done())
	if metadataInformers != nil {
		metadataInformers.Start(ctx.Done())
	}
	for _, f := range namespaced {
		f.Start(ctx.Done())
	}
	go endpoints.Run(ctx)
	go ctrl.Run(ctx, env.Workers)
	go fleetCtrl.Run(ctx, 1)
	if notifyCtrl != nil {
		go notifyCtrl.Run(ctx)
	}

	synced := []cache.InformerSynced{
		informers.Policies.Informer().HasSynced, informers.Placements.Informer().HasSynced,
		informers.Decisions.Informer().HasSynced, informers.ManagedClusters.HasSynced,
		informers.Addons.Informer().HasSynced,
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	logger.Info("Hub controllers started", "controller", policy.ControllerName, "workers", env.Workers, "controllers", o.Controllers)
	env.Ready()
	<-ctx.Done()
	return nil
}

// managedClusterInformer is the informer of the hub's ManagedClusters that the policy
// controllers read. Without the add-on framework, which reads their labels, conditions
// and version, the controllers need only which exist: given metadataInformers, they
// list, decode and keep the metadata alone, and a registered cluster's CA bundle,
// capacity and claims stay on the API server. The cluster factory's typed informer,
// which the framework shares, is asked for only otherwise, so that it is not started
// beside the other.
func managedClusterInformer(clusters clusterinformers.SharedInformerFactory, metadataInformers metadatainformer.SharedInformerFactory) cache.SharedIndexInformer {
	if metadataInformers == nil {
		return clusters.Cluster().V1().ManagedClusters().Informer()
	}
	return metadataInformers.ForResource(clusterv1.SchemeGroupVersion.WithResource("managedclusters")).Informer()
}

// startAddonManager runs the add-on framework alone (--controllers=addon-manager): it
// deploys the agent through ManifestWork, approves its CSRs and binds its hub Role,
// and reads no policy, Secret or Prometheus URL.
func (o *Options) startAddonManager(ctx context.Context, env process.Env, cfg *rest.Config, kubeClient kubernetes.Interface, addonClient addonclient.Interface, clusterClient clusterclient.Interface) error {
	logger := klog.FromContext(ctx)
	clusterInformers := clusterinformers.NewSharedInformerFactoryWithOptions(clusterClient, 0,
		clusterinformers.WithTransform(trimForCache))
	clusters := clusterInformers.Cluster().V1().ManagedClusters().Informer()
	agentAddon, err := addon.NewAgentAddon(kubeClient, addonClient, addon.Options{AgentImage: o.AgentImage})
	if err != nil {
		return err
	}
	if err := waitForHandover(ctx, kubeClient, o.HandoverLease, clock.RealClock{}); err != nil {
		return err
	}
	// Before the cluster informers start: the framework shares their ManagedClusters.
	if err := addon.StartFramework(ctx, cfg, agentAddon, clusterInformers, trimForCache); err != nil {
		return err
	}
	clusterInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), clusters.HasSynced) {
		return ctx.Err()
	}
	logger.Info("Add-on manager started", "controllers", o.Controllers)
	env.Ready()
	<-ctx.Done()
	return nil
}

// countWrites counts the manager's API writes by method and resource, so that an idle
// fleet can be seen to cost none and a busy one shows where its writes go.
func countWrites(reg prometheus.Registerer) func(http.RoundTripper) http.RoundTripper {
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "traffic_migration_api_writes_total",
		Help: "Requests that change something, made by the manager to the hub's API server, by method and resource (with its subresource, e.g. placementdecisions/status).",
	}, []string{"method", "resource"})
	if reg != nil {
		reg.MustRegister(writes)
	}
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
			default:
				writes.WithLabelValues(req.Method, resourceOf(req.URL.Path)).Inc()
			}
			return rt.RoundTrip(req)
		})
	}
}

// resourceOf returns the resource, and its subresource if any, of an API path:
// /api/v1/namespaces/ns/events -> events, /apis/g/v/namespaces/ns/r/name/status ->
// r/status, /apis/g/v/r/name -> r. Anything else is "other".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "other"
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // a namespaced resource; "namespaces/<name>" alone is the namespace
	}
	switch len(parts) {
	case 0:
		return "other"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// watchNamespaces replaces the policies', Placements' and decisions' informers of
// informers with ones that watch namespaces alone (--watch-namespaces): an informer
// per namespace, merged into one (nsinformer), so that the controllers keep one
// lister and one set of indexes. It returns the factories to start.
func watchNamespaces(informers policy.Informers, namespaces []string, trafficClient trafficclient.Interface, clusterClient clusterclient.Interface) (policy.Informers, []interface{ Start(<-chan struct{}) }) {
	policies := map[string]cache.SharedIndexInformer{}
	placements := map[string]cache.SharedIndexInformer{}
	decisions := map[string]cache.SharedIndexInformer{}
	var factories []interface{ Start(<-chan struct{}) }
	for _, ns := range namespaces {
		t := trafficinformers.NewSharedInformerFactoryWithOptions(trafficClient, 0,
			trafficinformers.WithNamespace(ns), trafficinformers.WithTransform(trimForCache))
		c := clusterinformers.NewSharedInformerFactoryWithOptions(clusterClient, 0,
			clusterinformers.WithNamespace(ns), clusterinformers.WithTransform(trimForCache))
		policies[ns] = t.Traffic().V1alpha1().TrafficMigrationPolicies().Informer()
		placements[ns] = c.Cluster().V1beta1().Placements().Informer()
		decisions[ns] = c.Cluster().V1beta1().PlacementDecisions().Informer()
		factories = append(factories, t, c)
	}
	informers.Policies = merged[trafficlisters.TrafficMigrationPolicyLister]{nsinformer.Merge(policies), trafficlisters.NewTrafficMigrationPolicyLister}
	informers.Placements = merged[clusterlisters.PlacementLister]{nsinformer.Merge(placements), clusterlisters.NewPlacementLister}
	informers.Decisions = merged[clusterlisters.PlacementDecisionLister]{nsinformer.Merge(decisions), clusterlisters.NewPlacementDecisionLister}
	return informers, factories
}

// merged is a typed informer (Informer and Lister) over a merged informer.
type merged[L any] struct {
	informer  cache.SharedIndexInformer
	newLister func(cache.Indexer) L
}

func (m merged[L]) Informer() cache.SharedIndexInformer { return m.informer }
func (m merged[L]) Lister() L                           { return m.newLister(m.informer.GetIndexer()) }
