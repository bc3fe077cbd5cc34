// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package clients

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// testHostname is the gateway's name in the clients' unit tests.
const testHostname = "app.example.com"

func TestClientTTLs(t *testing.T) {
	got := TTLs(6, TTLRange{Min: 2 * time.Second, Max: 10 * time.Second}, TTLRange{Min: 40 * time.Second, Max: 60 * time.Second}, 2)
	want := []time.Duration{2 * time.Second, 4666666666, 7333333333, 10 * time.Second, 40 * time.Second, 60 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Round(time.Millisecond) != want[i].Round(time.Millisecond) {
			t.Errorf("TTL %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

func TestZipfEvery(t *testing.T) {
	got := ZipfEvery(4, time.Second, 1)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("client %d: every %s, want %s", i+1, got[i], want[i])
		}
	}
	if got := ZipfEvery(3, time.Second, 0.5); got[2].Round(time.Millisecond) != 1732*time.Millisecond {
		t.Errorf("ZipfEvery(3, 1s, 0.5): the third every %s, want 1.732s", got[2])
	}
}

// TestBoundIgnoresExpiredAnswers: a rare caller keeps its answer in its cache after
// the answer's TTL, but its next request asks DNS: it is bound to no address.
func TestBoundIgnoresExpiredAnswers(t *testing.T) {
	g := startGateways(t, "one")
	ip1, answer, port := g.ips[0], g.answer, g.port
	// The first client's answer expires within 50ms; the second's in an hour. Neither
	// sends a request within the test (every hour, from a random moment of it).
	f := NewFleet(Config{Hostname: testHostname, TTLs: []time.Duration{50 * time.Millisecond, time.Hour},
		Everies: []time.Duration{time.Hour, time.Hour}, Lookup: answer.Lookup, Port: port, Seed: 1})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	defer f.Halt()
	eventually(t, "the short-TTL answer expiring", func() bool { return f.Bound()[ip1] == 1 })
	if h := f.Holding(); h[ip1] != 2 {
		t.Errorf("both clients' caches hold %s: got %v", ip1, h)
	}
}

// TestClientsFollowDNSAndRetry runs the clients against two gateways without a hub:
// the DNS answer moves from the first to the second, the clients follow as their TTLs end,
// and once the first gateway has no route for the name any more (as Traefik once the
// Gateway is gone from its cluster) those still holding its address resolve again and
// retry. No request may fail.
func TestClientsFollowDNSAndRetry(t *testing.T) {
	g := startGateways(t, "one", "two")
	ip1, ip2, gw1, answer, port := g.ips[0], g.ips[1], g.gateways[0], g.answer, g.port

	// Three clients that follow within a second, one that holds on for an hour.
	ttls := []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Hour}
	f := NewFleet(Config{Hostname: testHostname, TTLs: ttls, Every: 50 * time.Millisecond, Lookup: answer.Lookup, Port: port, Seed: 1})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	defer f.Halt()
	eventually(t, "every client holding "+ip1.String(), func() bool { return f.Holding()[ip1] == 4 })
	answer.Publish(ip2)
	eventually(t, "the short-TTL clients moving to "+ip2.String(), func() bool { return f.Holding()[ip2] == 3 })
	if h := f.Holding(); h[ip1] != 1 || h[ip2] != 3 {
		t.Errorf("clients holding: %v, want one on %s and three on %s", h, ip1, ip2)
	}
	gw1.routed.Store(false)
	eventually(t, "the long-TTL client retrying on "+ip2.String(), func() bool {
		return f.Counts().Retried >= 1 && f.Holding()[ip2] == 4
	})
	f.Halt()

	c := f.Counts()
	if c.Failed != 0 {
		t.Errorf("%d requests failed: %v", c.Failed, c.FailureSamples)
	}
	if c.Retried < 1 {
		t.Errorf("the long-TTL client should have retried once its gateway had no route: %+v", c)
	}
	if c.ByCluster["one"] == 0 || c.ByCluster["two"] == 0 || c.Served+c.Retried != c.ByCluster["one"]+c.ByCluster["two"] {
		t.Errorf("answers by cluster do not add up: %+v", c)
	}
	if h := f.Holding(); h[ip2] != 4 {
		t.Errorf("after the retry every client should hold %s: %v", ip2, h)
	}
}

// TestPooledClientsStayOnTheirConnections: pooled clients (Go's net/http with the
// hostname in the URL and default keep-alive, over HTTP/1.1, or over HTTP/2 with
// three clients on one connection) resolve only when they dial, so when DNS moves
// they keep sending to the gateway of their connections, request after request, until
// it closes them (keepAliveMaxTime: Connection: close, which Go's HTTP/2 server sends
// as GOAWAY): then they dial again, resolve, and move, without a failed request.
func TestPooledClientsStayOnTheirConnections(t *testing.T) {
	for _, http2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[http2], func(t *testing.T) {
			g := startGateways(t, "one", "two")
			ip1, ip2, gw1, answer, port := g.ips[0], g.ips[1], g.gateways[0], g.answer, g.port
			// Their TTLs, shorter than a request's interval, would move caching clients at once.
			ttls := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
			f := NewFleet(Config{Hostname: testHostname, TTLs: ttls, Every: 20 * time.Millisecond, Lookup: answer.Lookup, Port: port, Seed: 1,
				Pooled: !http2, HTTP2: http2, ConnShare: 3})
			if err := f.Start(); err != nil {
				t.Fatal(err)
			}
			defer f.Halt()
			eventually(t, "every client holding "+ip1.String(), func() bool { return f.Holding()[ip1] == 3 })
			answer.Publish(ip2)
			before := f.Counts().ByCluster["one"]
			eventually(t, "the clients sending 60 more requests", func() bool { return f.Counts().ByCluster["one"] >= before+60 })
			if c := f.Counts(); c.ByCluster["two"] != 0 || f.Holding()[ip1] != 3 || f.Bound()[ip1] != 3 {
				t.Fatalf("pooled clients moved while their connections lived: %+v, holding %v", c, f.Holding())
			}
			gw1.closing.Store(true)
			eventually(t, "every client on "+ip2.String()+" once gateway one closes its connections", func() bool {
				return f.Holding()[ip2] == 3 && f.Counts().ByCluster["two"] > 0
			})
			f.Halt()
			if c := f.Counts(); c.Failed != 0 {
				t.Errorf("%d requests failed: %v", c.Failed, c.FailureSamples)
			}
			conns, h2 := gw1.conns.Load(), gw1.http2.Load()
			switch {
			// Go's transport may dial twice for the first requests of its clients
			// that come at the same moment, and keeps both connections.
			case http2 && (conns >= 3 || h2 == 0):
				t.Errorf("gateway one: %d connections, %d HTTP/2 requests; want fewer connections than clients, of HTTP/2", conns, h2)
			case !http2 && (conns != 3 || h2 != 0):
				t.Errorf("gateway one: %d connections, %d HTTP/2 requests; want one connection of HTTP/1.1 a client", conns, h2)
			}
		})
	}
}

// TestClientsFailOnBackendError: an error status from the backend (it carries the
// backend's header) is a failed request, not retried.
func TestClientsFailOnBackendError(t *testing.T) {
	g := startGateways(t, "one")
	g.gateways[0].backendStatus.Store(http.StatusInternalServerError)
	answer, port := g.answer, g.port
	f := NewFleet(Config{Hostname: testHostname, TTLs: []time.Duration{time.Hour}, Every: 50 * time.Millisecond, Lookup: answer.Lookup, Port: port, Seed: 1})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	defer f.Halt()
	eventually(t, "a failed request", func() bool { return f.Counts().Failed >= 1 })
	f.Halt()
	if c := f.Counts(); c.Retried != 0 || c.Served != 0 {
		t.Errorf("backend errors were retried or counted served: %+v", c)
	}
}

// fakeGateway is a unit test's gateway with a backend behind it: while routed, it
// answers as the backend of its cluster does (with the backend's header); otherwise it
// answers 404 itself, as Traefik does for a name it has no route for.
type fakeGateway struct {
	routed        atomic.Bool
	backendStatus atomic.Int64
	// closing closes each connection after its next answer, as Traefik does to a
	// connection older than its entry point's keepAliveMaxTime.
	closing atomic.Bool
	// conns counts the connections accepted before closing was set, and http2 the
	// requests served over HTTP/2.
	conns, http2 atomic.Int64
}

// testGateways are fake gateways on one port, the DNS answer the clients read, and
// its addresses.
type testGateways struct {
	ips      []netip.Addr
	port     int
	gateways []*fakeGateway
	answer   *Answer
}

// startGateways starts a fake gateway of each cluster, the i-th on 127.0.0.<i+2>, all
// on a port free on every one of those addresses, and publishes the first address.
func startGateways(t *testing.T, clusters ...string) *testGateways {
	t.Helper()
	g := &testGateways{answer: &Answer{}}
	for i := range clusters {
		g.ips = append(g.ips, netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 2)}))
	}
	var err error
	if g.port, err = commonFreePort(g.ips...); err != nil {
		t.Fatal(err)
	}
	for i, cluster := range clusters {
		g.gateways = append(g.gateways, startFakeGateway(t, cluster, net.JoinHostPort(g.ips[i].String(), strconv.Itoa(g.port))))
	}
	g.answer.Publish(g.ips[0])
	return g
}

func startFakeGateway(t *testing.T, cluster, addr string) *fakeGateway {
	t.Helper()
	g := &fakeGateway{}
	g.routed.Store(true)
	g.backendStatus.Store(http.StatusOK)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// HTTP/1.1 and HTTP/2 without TLS, as Traefik's plain entry points serve.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Protocols: protocols, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew && !g.closing.Load() {
			g.conns.Add(1)
		}
	}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			g.http2.Add(1)
		}
		if !g.routed.Load() {
			http.NotFound(w, nil)
			return
		}
		if g.closing.Load() {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set(ServedByHeader, cluster)
		w.WriteHeader(int(g.backendStatus.Load()))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return g
}

// commonFreePort finds a TCP port free on every one of the addresses.
func commonFreePort(addrs ...netip.Addr) (int, error) {
	for range 50 {
		first, err := net.Listen("tcp", net.JoinHostPort(addrs[0].String(), "0"))
		if err != nil {
			return 0, err
		}
		port := first.Addr().(*net.TCPAddr).Port
		listeners := []net.Listener{first}
		free := true
		for _, a := range addrs[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(a.String(), strconv.Itoa(port)))
			if err != nil {
				free = false
				break
			}
			listeners = append(listeners, l)
		}
		for _, l := range listeners {
			l.Close()
		}
		if free {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no port free on all of %v", addrs)
}

// eventually polls cond until it holds, and fails the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testbed.EventuallyTrue(t, 10*time.Second, what, cond)
}
