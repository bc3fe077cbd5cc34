// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// The programs of the test bed's DNS (StartDNS): CoreDNS with its etcd plugin
// (hack/tools/coredns), and the loop that feeds external-dns's engine from
// DNSEndpoints (hack/tools/externaldns), as external-dns with --source=crd
// --provider=coredns does.
var (
	ProgramCoreDNS     = Program{Name: "coredns", EnvVar: "TESTBED_COREDNS"}
	ProgramExternalDNS = Program{Name: "externaldns", EnvVar: "TESTBED_EXTERNALDNS"}
)

// dnsEndpointCRDEnv names external-dns's DNSEndpoint CRD file, from the external-dns
// module that the Makefile downloads (make dnsendpoint-crd).
const dnsEndpointCRDEnv = "TESTBED_DNSENDPOINT_CRD"

// DNSEndpointCRDFile returns the path of external-dns's DNSEndpoint CRD
// (externaldns.k8s.io/v1alpha1), or an error that says how to get it.
func DNSEndpointCRDFile() (string, error) {
	path := Getenv(dnsEndpointCRDEnv)
	if path == "" {
		return "", fmt.Errorf("%s is not set: run the tests through 'make test-integration' (or 'make dnsendpoint-crd'), which downloads external-dns's module and sets it", dnsEndpointCRDEnv)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s=%s: %w; 'make dnsendpoint-crd' downloads it", dnsEndpointCRDEnv, path, err)
	}
	return path, nil
}

// InstallDNSEndpointCRD installs external-dns's DNSEndpoint CRD on the cluster of cfg
// and waits until it is served. StartDNS needs it on the cluster it reads. Tests that
// run in parallel may each install it: a write that loses to another's is tried again.
func InstallDNSEndpointCRD(ctx context.Context, cfg *rest.Config) error {
	file, err := DNSEndpointCRDFile()
	if err != nil {
		return err
	}
	return retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		return InstallCRDs(ctx, cfg, file)
	})
}

// DNSOptions says what StartDNS serves.
type DNSOptions struct {
	// Zones are the zones CoreDNS serves, e.g. "demo.example."; they are also the
	// domain filter of external-dns's engine, which writes no record outside them.
	// At least one.
	Zones []string
	// Kubeconfig is the kubeconfig of the cluster whose DNSEndpoints make the
	// records. Default: the hub's admin kubeconfig. The cluster must serve the
	// DNSEndpoint CRD (InstallDNSEndpointCRD).
	Kubeconfig string
	// Namespace, when set, limits the DNSEndpoints read to that namespace.
	Namespace string
	// OwnerID is the TXT registry's owner id (external-dns's --txt-owner-id): the
	// engine changes only the records it owns. Default "testbed".
	OwnerID string
	// Interval is the longest time between two passes of the engine; a change of a
	// DNSEndpoint starts one at once (unless NoEvents). Default 1s.
	Interval time.Duration
	// LogQueries makes CoreDNS log every query it answers (its log plugin).
	LogQueries bool
	// RefuseWithdrawalOnce, a regular expression of record names, makes the engine
	// refuse the first change that drops an address from each name it matches, for
	// RefuseFor (default a minute, external-dns's --interval), while it writes the
	// DNSEndpoints' observedGeneration all the same: the order of external-dns's CRD
	// source and a provider that rejects or rate-limits a change.
	RefuseWithdrawalOnce string
	RefuseFor            time.Duration
	// LabelFilter, a label selector, limits the DNSEndpoints read to those it
	// selects (external-dns's --label-filter), so that two engines with their own
	// OwnerID share a zone (DNS.StartEngine).
	LabelFilter string
	// NoEvents runs the engine's passes only every Interval, as external-dns does
	// without --events (its default, with a one-minute interval): a change waits for
	// the next pass.
	NoEvents bool
}

// DNS is real DNS software run by the test bed: CoreDNS serving zones from etcd,
// where external-dns's own engine (its planner, TXT registry and CoreDNS provider)
// writes the records of the DNSEndpoints (externaldns.k8s.io/v1alpha1) of a cluster,
// as external-dns with --source=crd --provider=coredns does. A DNSEndpoint's
// status.observedGeneration is its generation once its records are in etcd, which
// CoreDNS reads at every query: from then on CoreDNS answers them (except for a change
// refused by DNSOptions.RefuseWithdrawalOnce).
type DNS struct {
	// CoreDNS is the running CoreDNS.
	CoreDNS *Process
	// Feeder is the loop that feeds external-dns's engine.
	Feeder *Process
	// engines are further engines that write the same zones (StartEngine).
	engines []*Process
	// Zones are the zones served, fully qualified.
	Zones []string
	// EtcdPrefix is the etcd prefix of the records, CoreDNS's etcd path.
	EtcdPrefix string

	addr string
}

// dnsSeq numbers the DNS servers of the test binary, so that each keeps its records
// under an etcd prefix of its own in the bed's etcd.
var dnsSeq atomic.Int64

// dnsReadyTimeout is how long CoreDNS and the feeder each have to get ready.
const dnsReadyTimeout = 60 * time.Second

// StartDNS starts CoreDNS on a free port of the bed's listen address (127.0.0.1, or
// the bridge's address on a bed with nodes), UDP and TCP, serving opts.Zones from the
// bed's etcd under a prefix of its own, and the loop that feeds external-dns's engine
// from the DNSEndpoints of opts.Kubeconfig's cluster. It returns once CoreDNS answers
// and a first pass of the engine succeeded. Both run until the bed stops or DNS.Stop;
// on error, what it started is stopped.
func (b *Bed) StartDNS(ctx context.Context, opts DNSOptions) (_ *DNS, err error) {
	if len(opts.Zones) == 0 {
		return nil, errors.New("StartDNS: no zone")
	}
	if opts.OwnerID == "" {
		opts.OwnerID = "testbed"
	}
	n := dnsSeq.Add(1)
	dir := filepath.Join(b.dir, fmt.Sprintf("dns-%d", n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// One path segment: CoreDNS's etcd plugin strips exactly one from its keys.
	d := &DNS{EtcdPrefix: fmt.Sprintf("/skydns-%d", n)}
	for _, z := range opts.Zones {
		z = strings.TrimSuffix(strings.TrimSpace(z), ".")
		if z == "" {
			return nil, fmt.Errorf("StartDNS: empty zone in %q", opts.Zones)
		}
		d.Zones = append(d.Zones, z+".")
	}
	defer func() {
		if err != nil {
			d.Stop()
		}
	}()

	if err := d.startCoreDNS(ctx, b, dir, opts.LogQueries); err != nil {
		return nil, err
	}

	if d.Feeder, err = d.startEngine(ctx, b, dir, n, opts); err != nil {
		return nil, err
	}
	return d, nil
}

// StartEngine starts a further loop of external-dns's engine that writes d's zones,
// with opts' Kubeconfig, Namespace, OwnerID (which must differ from the other
// engines'), Interval, LabelFilter, NoEvents and refusal; opts.Zones are d's. It
// returns once its first pass succeeded, and stops with d.
func (d *DNS) StartEngine(ctx context.Context, b *Bed, opts DNSOptions) error {
	if opts.OwnerID == "" {
		return errors.New("StartEngine: a further engine needs an owner id of its own")
	}
	opts.Zones = d.Zones
	n := dnsSeq.Add(1)
	dir := filepath.Join(b.dir, fmt.Sprintf("dns-%d", n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p, err := d.startEngine(ctx, b, dir, n, opts)
	if err != nil {
		return err
	}
	d.engines = append(d.engines, p)
	return nil
}

// startEngine starts the loop that feeds external-dns's engine, writing d's records
// (default: the hub's DNSEndpoints, a pass every second).
func (d *DNS) startEngine(ctx context.Context, b *Bed, dir string, n int64, opts DNSOptions) (*Process, error) {
	if opts.Kubeconfig == "" {
		opts.Kubeconfig = b.Hub.KubeconfigPath
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	var filter []string
	for _, z := range opts.Zones {
		filter = append(filter, strings.TrimSuffix(strings.TrimSpace(z), "."))
	}
	healthPort, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + opts.Kubeconfig,
		"--txt-owner-id=" + opts.OwnerID,
		"--domain-filter=" + strings.Join(filter, ","),
		"--interval=" + opts.Interval.String(),
		"--coredns-prefix=" + d.EtcdPrefix + "/",
		"--listen=" + hostPort(healthPort),
		"--events=" + strconv.FormatBool(!opts.NoEvents),
	}
	if opts.Namespace != "" {
		args = append(args, "--namespace="+opts.Namespace)
	}
	if opts.LabelFilter != "" {
		args = append(args, "--label-filter="+opts.LabelFilter)
	}
	if opts.RefuseWithdrawalOnce != "" {
		args = append(args, "--refuse-withdrawal-once="+opts.RefuseWithdrawalOnce)
		if opts.RefuseFor > 0 {
			args = append(args, "--refuse-for="+opts.RefuseFor.String())
		}
	}
	return b.startTracked(ctx, fmt.Sprintf("externaldns (dns-%d)", n), ProgramExternalDNS, dir, "externaldns",
		[]string{"ETCD_URLS=" + b.EtcdURL}, dnsReadyTimeout, HTTPReady("http://"+hostPort(healthPort)+"/readyz"), args...)
}

// startCoreDNS writes the Corefile and starts CoreDNS on a free port (listenOnFreePort).
func (d *DNS) startCoreDNS(ctx context.Context, b *Bed, dir string, logQueries bool) error {
	host := b.listenHost()
	p, addr, err := b.listenOnFreePort(ctx, host, func(port int) (*Process, error) {
		var keys []string
		for _, z := range d.Zones {
			keys = append(keys, z+":"+strconv.Itoa(port))
		}
		var corefile strings.Builder
		fmt.Fprintf(&corefile, "%s {\n\tbind %s\n\terrors\n", strings.Join(keys, " "), host)
		if logQueries {
			corefile.WriteString("\tlog\n")
		}
		fmt.Fprintf(&corefile, "\tetcd {\n\t\tpath %s\n\t\tendpoint %s\n\t}\n}\n", d.EtcdPrefix, b.EtcdURL)
		corefilePath := filepath.Join(dir, "Corefile")
		if err := os.WriteFile(corefilePath, []byte(corefile.String()), 0o600); err != nil {
			return nil, err
		}
		return startProcess(fmt.Sprintf("coredns (%s)", filepath.Base(dir)), ProgramCoreDNS, dir, "coredns", nil, "-conf="+corefilePath)
	}, func(ctx context.Context, addr string) error {
		// Any answer, even that the zone's apex has no address, means CoreDNS serves
		// the zone and reached etcd; a failure of etcd is an error (SERVFAIL).
		_, err := lookupAt(ctx, addr, d.Zones[0])
		return err
	})
	if err != nil {
		return err
	}
	d.CoreDNS, d.addr = p, addr
	return nil
}

// listenOnFreePort starts a DNS server on a free port of host (start), tracked by the
// bed, and waits until ready says it answers at host:port. It tries another port when
// the one it got was taken meanwhile: freePort checks TCP only, and a DNS server binds
// UDP too.
func (b *Bed) listenOnFreePort(ctx context.Context, host string, start func(port int) (*Process, error), ready func(ctx context.Context, addr string) error) (*Process, string, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		p, err := start(port)
		if err != nil {
			return nil, "", err
		}
		b.Track(p)
		lastErr = p.waitReady(ctx, dnsReadyTimeout, func(ctx context.Context) error { return ready(ctx, addr) })
		if lastErr == nil {
			return p, addr, nil
		}
		exited := p.Exited()
		p.Stop()
		if !exited || ctx.Err() != nil || !strings.Contains(p.Tail(4096), "ddress already in use") {
			return nil, "", lastErr
		}
	}
	return nil, "", lastErr
}

// Addr is CoreDNS's address, host:port, on UDP and TCP.
func (d *DNS) Addr() string { return d.addr }

// Resolver returns a resolver that asks CoreDNS only, with Go's own DNS client (no
// cache), for clients that resolve names as a program's would.
func (d *DNS) Resolver() *net.Resolver { return resolverAt(d.addr) }

// Lookup asks CoreDNS for the A and AAAA records of name (taken as fully qualified)
// and returns their addresses, sorted. A name without addresses (NXDOMAIN, or no
// record of either type) gives none and no error.
func (d *DNS) Lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	return lookupAt(ctx, d.addr, name)
}

// resolverAt returns a resolver that asks the DNS server at addr only, with Go's own
// DNS client (no cache).
func resolverAt(addr string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, network, addr)
		},
	}
}

// lookupAt asks the DNS server at addr for the addresses of name, as DNS.Lookup.
func lookupAt(ctx context.Context, addr, name string) ([]netip.Addr, error) {
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolverAt(addr).LookupNetIP(ctx, "ip", name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	return addrs, nil
}

// AnswerWatch polls CoreDNS for a name at a fixed pace, as a resolver of a busy
// client would, and keeps every poll that got no address (NXDOMAIN, an empty answer,
// an error) and each distinct answer in order.
type AnswerWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	log    AnswerLog
}

// AnswerLog is what an AnswerWatch saw.
type AnswerLog struct {
	// Polls is how many polls it made.
	Polls int
	// Failures are the polls that got no address, each with its time and error, at
	// most maxAnswerFailures of them; Failed counts them all.
	Failures []string
	Failed   int
	// Answers are the distinct answers in the order seen, each once per change.
	Answers [][]netip.Addr
}

// maxAnswerFailures bounds the failures an AnswerLog quotes.
const maxAnswerFailures = 10

// WatchAnswers polls CoreDNS for name every interval until Stop (or ctx ends).
func (d *DNS) WatchAnswers(ctx context.Context, name string, every time.Duration) *AnswerWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &AnswerWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			got, err := d.Lookup(ctx, name)
			if ctx.Err() != nil {
				return
			}
			w.log.Polls++
			if err == nil && len(got) == 0 {
				err = fmt.Errorf("no address for %s", name)
			}
			switch {
			case err != nil:
				w.log.Failed++
				if len(w.log.Failures) < maxAnswerFailures {
					w.log.Failures = append(w.log.Failures, time.Now().Format("15:04:05.000")+": "+err.Error())
				}
			case len(w.log.Answers) == 0 || !slices.Equal(w.log.Answers[len(w.log.Answers)-1], got):
				w.log.Answers = append(w.log.Answers, got)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Stop stops the polls and returns what they saw.
func (w *AnswerWatch) Stop() AnswerLog {
	w.cancel()
	<-w.done
	return w.log
}

// Stop stops the feeder and CoreDNS; the bed stops them too. The records stay in etcd
// under EtcdPrefix.
func (d *DNS) Stop() {
	for _, p := range d.engines {
		p.Stop()
	}
	if d.Feeder != nil {
		d.Feeder.Stop()
	}
	if d.CoreDNS != nil {
		d.CoreDNS.Stop()
	}
}
