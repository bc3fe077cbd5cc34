// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package clients is the applications that call a gateway by its DNS name, as the
// demo and the strategy benchmark run them: each resolves the name, keeps the answer
// for a TTL of its own whatever the record says, sends a request at a steady rate to
// the address it holds, and on a connection error (or an answer of the gateway with no
// route) resolves again and retries once. They count every request: served, retried,
// failed, and by the cluster that answered. Beside them, as users run them: Go clients
// that keep their connections (Config.Pooled, over HTTP/1.1 or HTTP/2), OpenJDK
// applications (JVMFleet) and grpc-go applications (GRPCFleet).
package clients

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// ServedByHeader names the cluster whose backend served a request.
	ServedByHeader = "X-Served-By"
	// RequestTimeout bounds one HTTP request, connection included: generous, as the
	// machine runs the whole fleet on a few cores. At 5 s, the strategies benchmark's
	// 28 rows on 2 cores (load 15-20) saw a request of every row time out when the
	// Gateways moved, retried at once with success.
	RequestTimeout = 15 * time.Second
	// ResolveTimeout bounds one DNS lookup.
	ResolveTimeout = 5 * time.Second
	// maxFailureSamples is how many failures the counts keep to explain them.
	maxFailureSamples = 5
)

// Counts are what the clients saw, request by request.
type Counts struct {
	// Served is the requests answered at the first attempt.
	Served int64
	// Retried is the requests whose first attempt failed on a connection error, or got
	// an answer of the gateway itself (no route to a backend), and that were answered
	// after the client resolved the name again and retried once.
	Retried int64
	// Failed is the requests that got no answer: the retry failed too, the name
	// could not be resolved, or the backend answered with an error status.
	Failed int64
	// ByCluster is the answered requests (served or retried) by the cluster that
	// answered them.
	ByCluster map[string]int64
	// FailureSamples are the first few failures, in words.
	FailureSamples []string
	// RetrySamples are the first few first attempts that failed and were retried,
	// in words, with the time of day.
	RetrySamples []string
}

// clientStats are the counts, shared by the clients.
type clientStats struct {
	served, retried, failed atomic.Int64
	mu                      sync.Mutex
	byCluster               map[string]int64
	samples, retrySamples   []string
}

// firstFailed notes a first attempt that failed and is retried.
func (s *clientStats) firstFailed(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.retrySamples) < maxFailureSamples {
		s.retrySamples = append(s.retrySamples, time.Now().Format("15:04:05.000")+" "+why)
	}
}

func (s *clientStats) answered(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byCluster[cluster]++
}

func (s *clientStats) fail(why string) {
	s.failed.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) < maxFailureSamples {
		s.samples = append(s.samples, why)
	}
}

func (s *clientStats) counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Counts{
		Served: s.served.Load(), Retried: s.retried.Load(), Failed: s.failed.Load(),
		ByCluster: make(map[string]int64, len(s.byCluster)), FailureSamples: append([]string(nil), s.samples...),
		RetrySamples: append([]string(nil), s.retrySamples...),
	}
	for k, v := range s.byCluster {
		c.ByCluster[k] = v
	}
	return c
}

// LookupFunc resolves the gateway's name: its A records, as the DNS answers them now.
type LookupFunc func(ctx context.Context) ([]netip.Addr, error)

// client is one application that calls the gateway: it resolves the gateway's name
// through the DNS, keeps the answer for its own TTL whatever the record says, and
// sends a request every interval to the address it holds. When a request fails on a
// connection error it resolves the name again, bypassing its cache, and retries once,
// as many real clients do.
type client struct {
	id       int
	hostname string
	ttl      time.Duration
	every    time.Duration
	port     string
	lookup   LookupFunc
	http     *http.Client
	stats    *clientStats
	// pooled: the URL names the host, and the client resolves only when its
	// transport dials (Config.Pooled). dialer is the client whose dial the transport
	// uses, whose cache holds the address it dialed: the client itself, or the first
	// of the clients that share an HTTP/2 connection (Config.ConnShare).
	pooled bool
	dialer *client

	mu      sync.Mutex
	cached  netip.Addr
	expires time.Time
}

// resolve returns the cached answer, or asks the DNS when there is none or it expired
// (fresh forces asking).
func (c *client) resolve(fresh bool) (netip.Addr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && c.cached.IsValid() && time.Now().Before(c.expires) {
		return c.cached, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ResolveTimeout)
	defer cancel()
	addrs, err := c.lookup(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("no address for %s", c.hostname)
	}
	c.cached, c.expires = addrs[0].Unmap(), time.Now().Add(c.ttl)
	return c.cached, nil
}

// holding is the address the client's cache holds now (a pooled client's, the
// address its transport last dialed).
func (c *client) holding() netip.Addr {
	if c.pooled {
		c = c.dialer
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cached
}

// bound is the address the client's next request is bound to whatever DNS says now:
// its cached answer until it expires (then the request asks DNS again), or a pooled
// client's connection's.
func (c *client) bound() netip.Addr {
	if c.pooled {
		return c.holding()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !time.Now().Before(c.expires) {
		return netip.Addr{}
	}
	return c.cached
}

// age makes the cached answer look obtained at a random moment of its TTL, as in a
// population of clients that has run for a while.
func (c *client) age(rng *rand.Rand) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expires = time.Now().Add(time.Duration(rng.Int64N(int64(c.ttl)) + 1))
}

// get sends one request to the gateway at addr and returns the cluster that answered.
// A pooled client sends it to its hostname instead, on a connection of its pool or
// one it dials (to the address it resolves then): addr is the address it last
// dialed, for messages.
func (c *client) get(addr netip.Addr) (string, error) {
	target := net.JoinHostPort(addr.String(), c.port)
	if c.pooled {
		target = net.JoinHostPort(c.hostname, c.port)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+target+"/", nil)
	if err != nil {
		return "", err
	}
	req.Host = c.hostname
	resp, err := c.http.Do(req)
	if c.pooled {
		addr = c.holding()
	}
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	servedBy := resp.Header.Get(ServedByHeader)
	switch {
	case resp.StatusCode == http.StatusOK && servedBy != "":
		return servedBy, nil
	case servedBy == "":
		return "", &unroutedError{addr: addr, status: resp.Status}
	default:
		return "", &statusError{addr: addr, status: resp.Status, servedBy: servedBy}
	}
}

// statusError is an error status of the backend, reached through the gateway: it
// counts as a failed request, without a retry.
type statusError struct {
	addr     netip.Addr
	status   string
	servedBy string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s answered %s from the backend of %s", e.addr, e.status, e.servedBy)
}

// unroutedError is an answer of the gateway itself, which no backend served: Traefik's
// 404 once the Gateway is gone from its cluster, to a client that still holds that
// cluster's address. Like a connection error, the client resolves again and retries.
type unroutedError struct {
	addr   netip.Addr
	status string
}

func (e *unroutedError) Error() string {
	return fmt.Sprintf("%s answered %s with no route to a backend", e.addr, e.status)
}

// request sends one request and counts its outcome.
func (c *client) request() {
	if c.pooled {
		c.requestPooled()
		return
	}
	addr, err := c.resolve(false)
	if err != nil {
		c.stats.fail(fmt.Sprintf("client %d: resolve %s: %v", c.id, c.hostname, err))
		return
	}
	cluster, err := c.get(addr)
	if !c.firstAnswer(cluster, err) {
		return
	}
	// A connection error, or the gateway has no route for the name any more: resolve
	// again, bypassing the cache, and retry once.
	retryAddr, rerr := c.resolve(true)
	if rerr != nil {
		c.stats.fail(fmt.Sprintf("client %d: %v; then resolving again: %v", c.id, err, rerr))
		return
	}
	cluster, rerr = c.get(retryAddr)
	if rerr != nil {
		c.stats.fail(fmt.Sprintf("client %d: %v; retried at %s: %v", c.id, err, retryAddr, rerr))
		return
	}
	c.stats.retried.Add(1)
	c.stats.answered(cluster)
}

// firstAnswer counts the outcome of a request's first try, which got cluster's answer
// or err: served, or failed on an HTTP status. It reports whether to retry: a
// connection error, or the gateway with no route for the name.
func (c *client) firstAnswer(cluster string, err error) (retry bool) {
	if err == nil {
		c.stats.served.Add(1)
		c.stats.answered(cluster)
		return false
	}
	if _, ok := err.(*statusError); ok {
		c.stats.fail(fmt.Sprintf("client %d: %v", c.id, err))
		return false
	}
	c.stats.firstFailed(fmt.Sprintf("client %d: %v", c.id, err))
	return true
}

// requestPooled is request for a pooled client: the transport resolves when it dials,
// and a request that fails on a connection error or meets the gateway with no route
// is retried once, which dials again when the connection is gone (a pooled connection
// to a gateway that answers "no route" is kept, so the retry meets it again, as a
// pooled client's does).
func (c *client) requestPooled() {
	cluster, err := c.get(netip.Addr{})
	if !c.firstAnswer(cluster, err) {
		return
	}
	cluster, rerr := c.get(netip.Addr{})
	if rerr != nil {
		c.stats.fail(fmt.Sprintf("client %d: %v; retried: %v", c.id, err, rerr))
		return
	}
	c.stats.retried.Add(1)
	c.stats.answered(cluster)
}

// dialPooled is a pooled client's transport's dial: it resolves the name now, as Go's
// resolver does for each dial, and connects to the first address; the client holds
// that address from then on.
func (c *client) dialPooled(ctx context.Context, network, _ string) (net.Conn, error) {
	addr, err := c.resolve(true)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", c.hostname, err)
	}
	return (&net.Dialer{Timeout: RequestTimeout}).DialContext(ctx, network, net.JoinHostPort(addr.String(), c.port))
}

// Fleet is the demo's clients.
type Fleet struct {
	clients []*client
	stats   *clientStats
	stop    chan struct{}
	wg      sync.WaitGroup
	rng     *rand.Rand
}

// Config is the clients of a Fleet.
type Config struct {
	// Hostname is the name the clients resolve and send in their requests' Host.
	Hostname string
	// TTLs are the clients' own TTLs, one client each (see TTLs).
	TTLs []time.Duration
	// Every is the interval between two requests of a client.
	Every time.Duration
	// Everies, when set, are the clients' own intervals, one per TTL (ZipfEvery),
	// in place of Every.
	Everies []time.Duration
	// Lookup resolves Hostname.
	Lookup LookupFunc
	// Port is the gateway's port.
	Port int
	// Seed draws the clients' cache ages and request phases.
	Seed uint64
	// Pooled makes the clients as Go's net/http clients are in users' programs: the
	// URL names the host, the transport keeps its connections alive (Go's defaults:
	// idle for up to 90 s, two idle ones per host) and resolves the name only when it
	// dials a new one, so a busy client stays on the address it dialed for as long as
	// the gateway keeps the connection open, whatever DNS answers since. TTLs are then
	// only how many clients there are.
	Pooled bool
	// HTTP2 makes the clients pooled ones that speak HTTP/2 without TLS (h2c with
	// prior knowledge, which Traefik's plain entry points accept), ConnShare of them
	// (default 1) on one transport: one connection, its requests multiplexed, as a
	// service's HTTP/2 or gRPC client keeps it. Go's transport dials again, and so
	// resolves, only when the gateway sends GOAWAY or the connection breaks; Go's
	// HTTP/2 server, and so Traefik's keepAliveMaxTime, sends GOAWAY on a response
	// marked Connection: close.
	HTTP2     bool
	ConnShare int
}

// NewFleet makes one client per TTL of cfg.
func NewFleet(cfg Config) *Fleet {
	f := &Fleet{
		stats: &clientStats{byCluster: map[string]int64{}},
		stop:  make(chan struct{}),
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
	}
	share := 1
	if cfg.HTTP2 && cfg.ConnShare > 1 {
		share = cfg.ConnShare
	}
	var shared *http.Client // the transport of the current group of HTTP/2 clients
	for i, ttl := range cfg.TTLs {
		every := cfg.Every
		if i < len(cfg.Everies) {
			every = cfg.Everies[i]
		}
		c := &client{
			id: i + 1, hostname: cfg.Hostname, ttl: ttl, every: every, port: strconv.Itoa(cfg.Port),
			lookup: cfg.Lookup, stats: f.stats, pooled: cfg.Pooled || cfg.HTTP2,
		}
		c.dialer = c
		switch {
		case i%share != 0:
			c.http, c.dialer = shared, f.clients[i-i%share]
		case cfg.HTTP2:
			protocols := new(http.Protocols)
			protocols.SetUnencryptedHTTP2(true)
			c.http = &http.Client{Timeout: RequestTimeout, Transport: &http.Transport{DialContext: c.dialPooled, Protocols: protocols}}
		case c.pooled:
			// Go's own defaults (http.DefaultTransport's), without a proxy.
			c.http = &http.Client{Timeout: RequestTimeout, Transport: &http.Transport{DialContext: c.dialPooled, MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second}}
		default:
			c.http = &http.Client{Timeout: RequestTimeout, Transport: &http.Transport{
				DialContext:         (&net.Dialer{Timeout: RequestTimeout}).DialContext,
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     10 * time.Second,
			}}
		}
		shared = c.http
		f.clients = append(f.clients, c)
	}
	return f
}

// Start resolves every client's first answer, ages it at random, and starts sending.
// A pooled client resolves when its first request dials.
func (f *Fleet) Start() error {
	for _, c := range f.clients {
		if c.pooled {
			continue
		}
		if _, err := c.resolve(true); err != nil {
			return fmt.Errorf("client %d: resolve %s: %w", c.id, c.hostname, err)
		}
		c.age(f.rng)
	}
	for _, c := range f.clients {
		offset := time.Duration(f.rng.Int64N(int64(c.every)))
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			select {
			case <-f.stop:
				return
			case <-time.After(offset):
			}
			tick := time.NewTicker(c.every)
			defer tick.Stop()
			for {
				c.request()
				select {
				case <-f.stop:
					return
				case <-tick.C:
				}
			}
		}()
	}
	return nil
}

// Halt stops the clients once their requests in flight have ended.
func (f *Fleet) Halt() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
	for _, c := range f.clients {
		c.http.CloseIdleConnections()
	}
}

// Counts are what the clients saw so far.
func (f *Fleet) Counts() Counts { return f.stats.counts() }

// Holding counts the clients by the address their cache holds.
func (f *Fleet) Holding() map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for _, c := range f.clients {
		out[c.holding()]++
	}
	return out
}

// TTLs spreads n TTLs evenly over [short.min, short.max], except the last long
// ones, spread over [long.min, long.max]: most clients keep an answer for seconds, a
// few for much longer.
func TTLs(n int, short, long TTLRange, nLong int) []time.Duration {
	out := make([]time.Duration, 0, n)
	spread := func(count int, r TTLRange) {
		for i := range count {
			t := r.Min
			if count > 1 {
				t += time.Duration(int64(r.Max-r.Min) * int64(i) / int64(count-1))
			}
			out = append(out, t)
		}
	}
	spread(n-nLong, short)
	spread(nLong, long)
	return out
}

// Bound counts the clients by the address their next request is bound to whatever
// DNS answers now: a cached answer that has not expired, or a pooled connection's. A
// client whose answer expired asks DNS at its next request, and counts under no
// address: a rare caller's stale cache reaches no cluster.
func (f *Fleet) Bound() map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for _, c := range f.clients {
		if a := c.bound(); a.IsValid() {
			out[a]++
		}
	}
	return out
}

// ZipfEvery returns the request intervals of n light clients whose rates follow
// Zipf's law, as the callers of a public name do: the k-th sends every first × k^s,
// so that a few send often and most rarely (s = 1: the 1,000th sends a thousandth as
// often as the first).
func ZipfEvery(n int, first time.Duration, s float64) []time.Duration {
	out := make([]time.Duration, n)
	for k := range n {
		out[k] = time.Duration(float64(first) * math.Pow(float64(k+1), s))
	}
	return out
}

// TTLRange is a range of client TTLs.
type TTLRange struct{ Min, Max time.Duration }

// String writes the range in seconds, for example "2-20s".
func (r TTLRange) String() string {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	return secs(r.Min) + "-" + secs(r.Max) + "s"
}

// Answer stands for the DNS where a unit test needs one: its Lookup answers the
// addresses last published, and nothing before the first Publish.
type Answer struct{ addrs atomic.Pointer[[]netip.Addr] }

// Publish makes addrs the answer.
func (a *Answer) Publish(addrs ...netip.Addr) { a.addrs.Store(&addrs) }

// Lookup is a LookupFunc: the answer last published.
func (a *Answer) Lookup(context.Context) ([]netip.Addr, error) {
	if p := a.addrs.Load(); p != nil {
		return *p, nil
	}
	return nil, nil
}
