// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command externaldns is the loop that feeds external-dns's engine, standing in for
// external-dns's controller and CRD source, which cannot be built here because three
// provider SDKs that external-dns's binary links (civo, exoscale, openshift/api) are
// not served by the module proxy. Everything that decides and writes DNS records is
// external-dns's own code, at the version of this module's go.mod: the DNSEndpoint API
// (apis/v1alpha1), the endpoints (endpoint), the planner with the sync policy (plan),
// the TXT ownership registry (registry/txt) and the CoreDNS provider (provider/coredns),
// which writes SkyDNS records to etcd for CoreDNS's etcd plugin to serve.
//
// It does what 'external-dns --source=crd --provider=coredns --registry=txt
// --policy=sync' does: it reads the DNSEndpoints (externaldns.k8s.io/v1alpha1) of the
// cluster of --kubeconfig, takes their spec.endpoints as the desired records as the
// CRD source does, and runs the controller's pass: the registry's records, a plan from
// them to the desired ones, and the plan's changes applied. A pass runs when a
// DNSEndpoint changes (--events, on here by default, off in external-dns) and at
// least every --interval; --label-filter reads only the DNSEndpoints it selects, so
// that two engines with their own owner ids can share a zone. The etcd address comes from
// ETCD_URLS (and ETCD_USERNAME, ETCD_PASSWORD, ETCD_* TLS variables), as
// provider/coredns reads it.
//
// One thing differs on purpose: external-dns's CRD source writes a DNSEndpoint's
// status.observedGeneration when it reads the object, before the provider applied
// anything. Here it is written after the pass applied the changes (or found none), so
// that a client that waits for observedGeneration == generation knows the records of
// that generation are in etcd. With --refuse-withdrawal-once, the first change that
// drops an address from a name it matches is refused for --refuse-for while the
// DNSEndpoints are marked read, which is external-dns's own order: a test bed's
// provider that refuses or rate-limits a change.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	log "github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	apiv1alpha1 "sigs.k8s.io/external-dns/apis/v1alpha1"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/registry"
	"sigs.k8s.io/external-dns/registry/txt"
)

// dnsEndpoints is the resource of external-dns's DNSEndpoint CRD
// (config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml).
var dnsEndpoints = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// stringList is a flag that may be repeated and takes comma-separated values, as
// external-dns's --domain-filter does.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func main() {
	var (
		kubeconfig    = flag.String("kubeconfig", "", "kubeconfig of the cluster whose DNSEndpoints to read (default: in-cluster configuration)")
		ownerID       = flag.String("txt-owner-id", "default", "the TXT registry's owner id: records of other owners are left alone")
		interval      = flag.Duration("interval", time.Second, "the longest time between two passes")
		namespace     = flag.String("namespace", "", "read the DNSEndpoints of this namespace only (default: all)")
		corednsPrefix = flag.String("coredns-prefix", "/skydns/", "the etcd prefix of CoreDNS's etcd plugin (its path, between slashes)")
		listen        = flag.String("listen", "", "address of /healthz and /readyz, ready once a first pass succeeded (default: none)")
		refuseOnce    = flag.String("refuse-withdrawal-once", "", "a regular expression of record names: the first change that drops a target from one of them is refused, as a provider that rate-limits or rejects a change does, and applied --refuse-for later; the DNSEndpoints' observedGeneration is written all the same, as external-dns's CRD source does (default: none)")
		refuseFor     = flag.Duration("refuse-for", time.Minute, "how long after its refusal a refused change is applied: external-dns tries again at its next --interval (one minute by default)")
		events        = flag.Bool("events", true, "run a pass as soon as a DNSEndpoint changes, as external-dns's --events does; with --events=false (external-dns's default), passes run only every --interval")
		labelFilter   = flag.String("label-filter", "", "read only the DNSEndpoints that this label selector selects, as external-dns's --label-filter does (default: all)")
		domainFilter  stringList
	)
	flag.Var(&domainFilter, "domain-filter", "manage records of these domains only (repeatable, or comma-separated)")
	flag.Parse()
	log.SetFormatter(&log.TextFormatter{FullTimestamp: true})
	var refuse *refusal
	if *refuseOnce != "" {
		re, err := regexp.Compile(*refuseOnce)
		if err != nil {
			log.Fatalf("--refuse-withdrawal-once: %v", err)
		}
		refuse = &refusal{names: re, delay: *refuseFor, until: map[string]time.Time{}}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	loop := loopConfig{kubeconfig: *kubeconfig, namespace: *namespace, labelFilter: *labelFilter, listen: *listen, interval: *interval, events: *events, refusal: refuse}
	if err := run(ctx, loop, &externaldns.Config{
		TXTOwnerID:    *ownerID,
		CoreDNSPrefix: *corednsPrefix,
		DomainFilter:  domainFilter,
		// external-dns's defaults.
		ManagedDNSRecordTypes: []string{endpoint.RecordTypeA, endpoint.RecordTypeAAAA, endpoint.RecordTypeCNAME},
	}); err != nil {
		log.Fatal(err)
	}
	log.Info("stopped")
}

// feeder is external-dns's engine with the DNSEndpoints it reads.
type feeder struct {
	client       dynamic.Interface
	store        cache.Store
	registry     registry.Registry
	domainFilter *endpoint.DomainFilter
	managed      []string
	refusal      *refusal
	ready        atomic.Bool
}

// loopConfig is what the loop reads, and when it runs a pass.
type loopConfig struct {
	kubeconfig, namespace, labelFilter, listen string
	interval                                   time.Duration
	events                                     bool
	refusal                                    *refusal
}

func run(ctx context.Context, loop loopConfig, cfg *externaldns.Config) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", loop.kubeconfig)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	// As external-dns builds them: the provider with the domain filter, the TXT
	// registry over it.
	domainFilter := endpoint.NewDomainFilter(cfg.DomainFilter)
	dnsProvider, err := coredns.New(ctx, cfg, domainFilter)
	if err != nil {
		return fmt.Errorf("coredns provider: %w", err)
	}
	reg, err := txt.New(cfg, dnsProvider)
	if err != nil {
		return fmt.Errorf("txt registry: %w", err)
	}

	// Every change of a DNSEndpoint asks for a pass; passes that are asked for while
	// one runs make one more pass.
	// An informer of its own rather than client-go's dynamicinformer, which links
	// every typed informer and the typed clientset (a third of the build).
	// The label filter is the lists' and watches' label selector, as the CRD source
	// sets it.
	resource := client.Resource(dnsEndpoints).Namespace(orAll(loop.namespace))
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = loop.labelFilter
			return resource.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = loop.labelFilter
			return resource.Watch(ctx, opts)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	changed := make(chan struct{}, 1)
	poke := func(any) {
		if !loop.events {
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, obj any) { poke(obj) },
		DeleteFunc: poke,
	}); err != nil {
		return err
	}
	f := &feeder{client: client, store: informer.GetStore(), registry: reg, domainFilter: domainFilter, managed: cfg.ManagedDNSRecordTypes, refusal: loop.refusal}

	if loop.listen != "" {
		if err := f.serveHealth(ctx, loop.listen); err != nil {
			return err
		}
	}
	go informer.RunWithContext(ctx)
	log.Infof("waiting for the DNSEndpoints (namespace %q, labels %q, owner %q, domains %v, prefix %s; a pass every %s, and on changes: %t)",
		loop.namespace, loop.labelFilter, cfg.TXTOwnerID, []string(cfg.DomainFilter), cfg.CoreDNSPrefix, loop.interval, loop.events)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("the DNSEndpoints' cache did not sync")
	}

	tick := time.NewTicker(loop.interval)
	defer tick.Stop()
	for {
		if err := f.pass(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Errorf("pass: %v", err)
		} else if !f.ready.Swap(true) {
			log.Info("ready: first pass done")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
	}
}

// orAll is the informer's namespace: metav1.NamespaceAll for "".
func orAll(namespace string) string {
	if namespace == "" {
		return metav1.NamespaceAll
	}
	return namespace
}

// pass is one pass of external-dns's controller (controller.Controller.RunOnce) with
// the CRD source's endpoints, and then the DNSEndpoints' observedGeneration.
func (f *feeder) pass(ctx context.Context) error {
	objs := f.store.List()
	var read []*apiv1alpha1.DNSEndpoint
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		// Through JSON, as external-dns's client decodes it: endpoint.Endpoint has
		// unexported fields, which runtime.DefaultUnstructuredConverter cannot fill.
		ep := &apiv1alpha1.DNSEndpoint{}
		raw, err := u.MarshalJSON()
		if err == nil {
			err = json.Unmarshal(raw, ep)
		}
		if err != nil {
			log.Errorf("DNSEndpoint %s/%s: %v", u.GetNamespace(), u.GetName(), err)
			continue
		}
		read = append(read, ep)
	}

	current, err := f.registry.Records(ctx)
	if err != nil {
		return fmt.Errorf("registry records: %w", err)
	}
	ctx = context.WithValue(ctx, provider.RecordsContextKey, current)
	desired, err := f.registry.AdjustEndpoints(desiredEndpoints(read))
	if err != nil {
		return fmt.Errorf("adjusting endpoints: %w", err)
	}
	p := (&plan.Plan{
		Policies:       []plan.Policy{&plan.SyncPolicy{}},
		Current:        current,
		Desired:        desired,
		DomainFilter:   endpoint.MatchAllDomainFilters{f.domainFilter, f.registry.GetDomainFilter()},
		ManagedRecords: f.managed,
		OwnerID:        f.registry.OwnerID(),
	}).Calculate()
	if f.refusal != nil {
		f.refusal.hold(p.Changes, time.Now())
	}
	if p.Changes.HasChanges() {
		if err := f.registry.ApplyChanges(ctx, p.Changes); err != nil {
			return fmt.Errorf("apply changes: %w", err)
		}
		log.Infof("applied: %d created %v, %d updated %v, %d deleted %v",
			len(p.Changes.Create), names(p.Changes.Create), len(p.Changes.UpdateNew), names(p.Changes.UpdateNew), len(p.Changes.Delete), names(p.Changes.Delete))
	}

	// The records of every DNSEndpoint read are in etcd now.
	var errs []error
	for _, ep := range read {
		if ep.Status.ObservedGeneration == ep.Generation {
			continue
		}
		patch := fmt.Appendf(nil, `{"status":{"observedGeneration":%d}}`, ep.Generation)
		_, err := f.client.Resource(dnsEndpoints).Namespace(ep.Namespace).Patch(ctx, ep.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil {
			errs = append(errs, fmt.Errorf("DNSEndpoint %s/%s: observedGeneration: %w", ep.Namespace, ep.Name, err))
		}
	}
	return errors.Join(errs...)
}

// refusal is a provider's refusal of one withdrawal per record name: the first change
// that drops a target from a name it matches is held back for a while, and the
// DNSEndpoints are marked read all the same, as external-dns's CRD source marks them
// before the provider is called.
type refusal struct {
	names *regexp.Regexp
	delay time.Duration
	// until is, by record name, when its refused change may be applied.
	until map[string]time.Time
}

// hold takes out of changes those of the names under refusal at now: a name whose
// first withdrawal this is starts its refusal. An update is the pair of its old and
// new endpoint, matched by name, type and set identifier.
func (r *refusal) hold(changes *plan.Changes, now time.Time) {
	key := func(ep *endpoint.Endpoint) string { return ep.DNSName + " " + ep.RecordType + " " + ep.SetIdentifier }
	old := map[string]*endpoint.Endpoint{}
	for _, ep := range changes.UpdateOld {
		old[key(ep)] = ep
	}
	refuse := func(ep *endpoint.Endpoint, what string) {
		if _, seen := r.until[ep.DNSName]; !seen && r.names.MatchString(ep.DNSName) {
			r.until[ep.DNSName] = now.Add(r.delay)
			log.Warnf("refused: %s %s %s, applied after %s", what, ep.DNSName, ep.RecordType, r.delay)
		}
	}
	for _, ep := range changes.UpdateNew {
		if o := old[key(ep)]; o != nil && drops(o.Targets, ep.Targets) {
			refuse(ep, fmt.Sprintf("update %v -> %v of", o.Targets, ep.Targets))
		}
	}
	for _, ep := range changes.Delete {
		refuse(ep, "delete of")
	}
	held := func(ep *endpoint.Endpoint) bool {
		until, ok := r.until[ep.DNSName]
		return ok && now.Before(until)
	}
	changes.UpdateOld = slices.DeleteFunc(changes.UpdateOld, held)
	changes.UpdateNew = slices.DeleteFunc(changes.UpdateNew, held)
	changes.Delete = slices.DeleteFunc(changes.Delete, held)
}

// drops reports whether a target of old is not in new.
func drops(old, new endpoint.Targets) bool {
	for _, t := range old {
		if !slices.Contains(new, t) {
			return true
		}
	}
	return false
}

// desiredEndpoints takes the DNSEndpoints' endpoints as external-dns's CRD source does
// (source/crd.go): nil endpoints and those with a target that is illegal for their
// type are left out, each is labelled with its DNSEndpoint, and endpoints of the same
// name, type and set identifier are merged.
func desiredEndpoints(read []*apiv1alpha1.DNSEndpoint) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for _, de := range read {
		for _, ep := range de.Spec.Endpoints {
			if ep == nil {
				continue
			}
			if illegal := illegalTarget(ep); illegal != "" {
				log.Warnf("DNSEndpoint %s/%s: %s has an illegal target %q for a %s record", de.Namespace, de.Name, ep.DNSName, illegal, ep.RecordType)
				continue
			}
			ep.WithLabel(endpoint.ResourceLabelKey, fmt.Sprintf("crd/%s/%s", de.Namespace, de.Name))
			out = append(out, ep)
		}
	}
	return endpoint.MergeEndpoints(out)
}

// illegalTarget returns the first target of ep that external-dns's CRD source rejects:
// one with a trailing dot where the record type takes none, or one without where
// NAPTR needs it. "" when every target is legal.
func illegalTarget(ep *endpoint.Endpoint) string {
	if endpoint.RequiresTrailingDot(ep.RecordType) {
		return ""
	}
	switch ep.RecordType {
	case endpoint.RecordTypeTXT, endpoint.RecordTypeMX, endpoint.RecordTypeSRV:
		return ""
	}
	for _, target := range ep.Targets {
		hasDot := strings.HasSuffix(target, ".")
		if (ep.RecordType == endpoint.RecordTypeNAPTR) != hasDot {
			return target
		}
	}
	return ""
}

// names lists the endpoints for the log: name, type and targets.
func names(eps []*endpoint.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, ep := range eps {
		out = append(out, fmt.Sprintf("%s %s %s", ep.DNSName, ep.RecordType, ep.Targets))
	}
	return out
}

// serveHealth serves /healthz (the process runs) and /readyz (a first pass
// succeeded) on addr until ctx ends. It listens before it returns, so that a failure
// to listen stops the program at once.
func (f *feeder) serveHealth(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !f.ready.Load() {
			http.Error(w, "no pass has succeeded yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Errorf("health server: %v", err)
		}
	}()
	return nil
}
