// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
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
	// servedByHeader names the cluster whose backend served a request.
	servedByHeader = "X-Served-By"
	// clientTimeout bounds one HTTP request, connection included: generous, as the
	// machine runs the whole fleet on a few cores.
	clientTimeout = 5 * time.Second
	// resolveTimeout bounds one DNS lookup.
	resolveTimeout = 5 * time.Second
	// maxFailureSamples is how many failures the counts keep to explain them.
	maxFailureSamples = 5
)

// clientCounts are what the clients saw, request by request.
type clientCounts struct {
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
}

// clientStats are the counts, shared by the clients.
type clientStats struct {
	served, retried, failed atomic.Int64
	mu                      sync.Mutex
	byCluster               map[string]int64
	samples                 []string
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

func (s *clientStats) counts() clientCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := clientCounts{
		Served: s.served.Load(), Retried: s.retried.Load(), Failed: s.failed.Load(),
		ByCluster: make(map[string]int64, len(s.byCluster)), FailureSamples: append([]string(nil), s.samples...),
	}
	for k, v := range s.byCluster {
		c.ByCluster[k] = v
	}
	return c
}

// lookupFunc resolves the gateway's name: its A records, as the DNS answers them now.
type lookupFunc func(ctx context.Context) ([]netip.Addr, error)

// client is one application that calls the gateway: it resolves the gateway's name
// through the DNS, keeps the answer for its own TTL whatever the record says, and
// sends a request every interval to the address it holds. When a request fails on a
// connection error it resolves the name again, bypassing its cache, and retries once,
// as many real clients do.
type client struct {
	id     int
	ttl    time.Duration
	every  time.Duration
	port   string
	lookup lookupFunc
	http   *http.Client
	stats  *clientStats

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
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	addrs, err := c.lookup(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("no address for %s", gatewayHostname)
	}
	c.cached, c.expires = addrs[0].Unmap(), time.Now().Add(c.ttl)
	return c.cached, nil
}

// holding is the address the client's cache holds now.
func (c *client) holding() netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
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
func (c *client) get(addr netip.Addr) (string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(addr.String(), c.port)+"/", nil)
	if err != nil {
		return "", err
	}
	req.Host = gatewayHostname
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	servedBy := resp.Header.Get(servedByHeader)
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
	addr, err := c.resolve(false)
	if err != nil {
		c.stats.fail(fmt.Sprintf("client %d: resolve %s: %v", c.id, gatewayHostname, err))
		return
	}
	cluster, err := c.get(addr)
	if err == nil {
		c.stats.served.Add(1)
		c.stats.answered(cluster)
		return
	}
	if _, ok := err.(*statusError); ok {
		c.stats.fail(fmt.Sprintf("client %d: %v", c.id, err))
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

// clientFleet is the demo's clients.
type clientFleet struct {
	clients []*client
	stats   *clientStats
	stop    chan struct{}
	wg      sync.WaitGroup
	rng     *rand.Rand
}

// newClientFleet makes one client per TTL, each sending a request every interval to
// the gateway's port, resolving its name with lookup.
func newClientFleet(ttls []time.Duration, every time.Duration, lookup lookupFunc, port int, seed uint64) *clientFleet {
	f := &clientFleet{
		stats: &clientStats{byCluster: map[string]int64{}},
		stop:  make(chan struct{}),
		rng:   rand.New(rand.NewPCG(seed, seed^0x5eed)),
	}
	for i, ttl := range ttls {
		transport := &http.Transport{
			DialContext:         (&net.Dialer{Timeout: clientTimeout}).DialContext,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     10 * time.Second,
		}
		f.clients = append(f.clients, &client{
			id: i + 1, ttl: ttl, every: every, port: strconv.Itoa(port),
			lookup: lookup, http: &http.Client{Transport: transport, Timeout: clientTimeout}, stats: f.stats,
		})
	}
	return f
}

// start resolves every client's first answer, ages it at random, and starts sending.
func (f *clientFleet) start() error {
	for _, c := range f.clients {
		if _, err := c.resolve(true); err != nil {
			return fmt.Errorf("client %d: resolve %s: %w", c.id, gatewayHostname, err)
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

// halt stops the clients once their requests in flight have ended.
func (f *clientFleet) halt() {
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

// holding counts the clients by the address their cache holds.
func (f *clientFleet) holding() map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for _, c := range f.clients {
		out[c.holding()]++
	}
	return out
}

// clientTTLs spreads n TTLs evenly over [short.min, short.max], except the last long
// ones, spread over [long.min, long.max]: most clients keep an answer for seconds, a
// few for much longer.
func clientTTLs(n int, short, long ttlRange, nLong int) []time.Duration {
	out := make([]time.Duration, 0, n)
	spread := func(count int, r ttlRange) {
		for i := range count {
			t := r.min
			if count > 1 {
				t += time.Duration(int64(r.max-r.min) * int64(i) / int64(count-1))
			}
			out = append(out, t)
		}
	}
	spread(n-nLong, short)
	spread(nLong, long)
	return out
}

// ttlRange is a range of client TTLs.
type ttlRange struct{ min, max time.Duration }

// String writes the range in seconds, for example "2-20s".
func (r ttlRange) String() string {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	return secs(r.min) + "-" + secs(r.max) + "s"
}
