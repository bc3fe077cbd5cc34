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
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The caching resolvers users have between their clients and the authoritative DNS:
// Debian's Unbound and dnsmasq (hack/node-packages.sh installs both).
var (
	ProgramUnbound = Program{Name: "unbound", EnvVar: "TESTBED_UNBOUND"}
	ProgramDnsmasq = Program{Name: "dnsmasq", EnvVar: "TESTBED_DNSMASQ"}
)

// ResolverKind names the software of a Resolver.
type ResolverKind string

const (
	Unbound ResolverKind = "unbound"
	Dnsmasq ResolverKind = "dnsmasq"
)

// ResolverOptions says how a Resolver caches. The zero value is the software's own
// defaults: it keeps an answer for the record's TTL.
type ResolverOptions struct {
	Kind ResolverKind
	// MinTTL raises every shorter TTL to itself, as many resolvers are set up to do
	// (Unbound's cache-min-ttl, dnsmasq's min-cache-ttl; whole seconds, at most an
	// hour for dnsmasq).
	MinTTL time.Duration
	// ServeExpired makes Unbound answer from its cache after the TTL has run out, and
	// refresh the answer behind it (serve-expired: yes). Unbound only.
	ServeExpired bool
}

// String describes the resolver as the benchmarks' rows name it, e.g. "Unbound,
// cache-min-ttl 60".
func (o ResolverOptions) String() string {
	var parts []string
	switch o.Kind {
	case Unbound:
		parts = append(parts, "Unbound")
		if o.MinTTL > 0 {
			parts = append(parts, fmt.Sprintf("cache-min-ttl %d", int(o.MinTTL.Seconds())))
		}
		if o.ServeExpired {
			parts = append(parts, "serve-expired")
		}
	case Dnsmasq:
		parts = append(parts, "dnsmasq")
		if o.MinTTL > 0 {
			parts = append(parts, fmt.Sprintf("min-cache-ttl=%d", int(o.MinTTL.Seconds())))
		}
	default:
		parts = append(parts, string(o.Kind))
	}
	if len(parts) == 1 {
		parts = append(parts, "defaults")
	}
	return strings.Join(parts, ", ")
}

func (o ResolverOptions) validate() error {
	switch {
	case o.Kind != Unbound && o.Kind != Dnsmasq:
		return fmt.Errorf("resolver kind %q: want %q or %q", o.Kind, Unbound, Dnsmasq)
	case o.MinTTL < 0 || o.MinTTL%time.Second != 0:
		return fmt.Errorf("resolver MinTTL %s: want whole seconds", o.MinTTL)
	case o.Kind == Dnsmasq && o.MinTTL > time.Hour:
		return fmt.Errorf("dnsmasq's min-cache-ttl is at most an hour, not %s", o.MinTTL)
	case o.Kind == Dnsmasq && o.ServeExpired:
		return errors.New("dnsmasq serves no expired answers: ServeExpired is Unbound's")
	}
	return nil
}

// Resolver is a caching resolver the bed runs in front of one of its DNS servers:
// it forwards the server's zones to it and answers clients from its cache, as the
// resolver of a user's host or network does.
type Resolver struct {
	// Process is the running resolver.
	Process *Process
	Options ResolverOptions

	addr string
}

// resolverSeq numbers the resolvers of the test binary, each with a folder of its own.
var resolverSeq atomic.Int64

// StartResolver starts a resolver on a free port of the bed's listen address, UDP and
// TCP, forwarding the zones of upstream to it. It returns once the resolver answers
// for the first zone; it runs until the bed stops or Stop.
func (b *Bed) StartResolver(ctx context.Context, upstream *DNS, opts ResolverOptions) (*Resolver, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	dir := filepath.Join(b.dir, fmt.Sprintf("resolver-%d", resolverSeq.Add(1)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	host := b.listenHost()
	upHost, upPort, err := net.SplitHostPort(upstream.Addr())
	if err != nil {
		return nil, fmt.Errorf("upstream DNS address %q: %w", upstream.Addr(), err)
	}
	name := fmt.Sprintf("%s (%s)", opts.Kind, filepath.Base(dir))
	p, addr, err := b.listenOnFreePort(ctx, host, func(port int) (*Process, error) {
		if opts.Kind == Dnsmasq {
			return startProcess(name, ProgramDnsmasq, dir, "dnsmasq", nil, dnsmasqArgs(host, port, upHost, upPort, upstream.Zones, opts)...)
		}
		conf := filepath.Join(dir, "unbound.conf")
		if err := os.WriteFile(conf, []byte(unboundConfig(dir, host, port, upHost, upPort, upstream.Zones, opts)), 0o600); err != nil {
			return nil, err
		}
		return startProcess(name, ProgramUnbound, dir, "unbound", nil, "-d", "-c", conf)
	}, func(ctx context.Context, addr string) error {
		// Any answer for the zone's apex means the resolver listens and reached the
		// upstream server.
		_, err := lookupAt(ctx, addr, upstream.Zones[0])
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Resolver{Process: p, Options: opts, addr: addr}, nil
}

// unboundConfig is an Unbound configuration that changes its defaults only where the
// bed needs it to (a port of its own, in the foreground, no privilege drop or chroot,
// forwarding to a server on this host, answering the bed's addresses) and where opts
// say.
func unboundConfig(dir, host string, port int, upHost, upPort string, zones []string, opts ResolverOptions) string {
	var c strings.Builder
	fmt.Fprintf(&c, "server:\n\tinterface: %s\n\tport: %d\n\tdo-daemonize: no\n\tusername: \"\"\n\tchroot: \"\"\n", host, port)
	fmt.Fprintf(&c, "\tdirectory: %q\n\tpidfile: \"\"\n\tuse-syslog: no\n\tlogfile: \"\"\n\tnum-threads: 1\n", dir)
	// Queries to this host's addresses, refused by default, are how it reaches the
	// bed's CoreDNS; the clients are the bed's own (loopback, or its bridge).
	c.WriteString("\tdo-not-query-localhost: no\n\taccess-control: 0.0.0.0/0 allow\n")
	if opts.MinTTL > 0 {
		fmt.Fprintf(&c, "\tcache-min-ttl: %d\n", int(opts.MinTTL.Seconds()))
	}
	if opts.ServeExpired {
		c.WriteString("\tserve-expired: yes\n")
	}
	for _, z := range zones {
		fmt.Fprintf(&c, "\tdomain-insecure: %q\n", z)
	}
	c.WriteString("remote-control:\n\tcontrol-enable: no\n")
	for _, z := range zones {
		fmt.Fprintf(&c, "forward-zone:\n\tname: %q\n\tforward-addr: %s@%s\n", z, upHost, upPort)
	}
	return c.String()
}

// dnsmasqArgs are dnsmasq's arguments: its defaults, but for a port of its own, in the
// foreground, no configuration file, hosts file or resolv.conf of the machine, and
// the zones forwarded to the upstream server.
func dnsmasqArgs(host string, port int, upHost, upPort string, zones []string, opts ResolverOptions) []string {
	args := []string{
		"--keep-in-foreground", "--log-facility=-", "--conf-file=/dev/null", "--pid-file",
		"--no-resolv", "--no-hosts", "--no-poll", "--bind-interfaces",
		"--listen-address=" + host, "--port=" + strconv.Itoa(port),
	}
	for _, z := range zones {
		args = append(args, fmt.Sprintf("--server=/%s/%s#%s", strings.TrimSuffix(z, "."), upHost, upPort))
	}
	if opts.MinTTL > 0 {
		args = append(args, fmt.Sprintf("--min-cache-ttl=%d", int(opts.MinTTL.Seconds())))
	}
	return args
}

// Addr is the resolver's address, host:port, on UDP and TCP.
func (r *Resolver) Addr() string { return r.addr }

// Resolver returns a resolver that asks this one only, with Go's own DNS client.
func (r *Resolver) Resolver() *net.Resolver { return resolverAt(r.addr) }

// Lookup asks the resolver for the addresses of name, as DNS.Lookup asks CoreDNS.
func (r *Resolver) Lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	return lookupAt(ctx, r.addr, name)
}

// Stop stops the resolver; the bed stops it too.
func (r *Resolver) Stop() { r.Process.Stop() }
