// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package clients

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	grpcdns "google.golang.org/grpc/resolver/dns"
)

// TestGRPCClientsStayUntilGOAWAY runs gRPC applications (grpc-go's ClientConn and DNS
// resolver, asking a real DNS server in the test) against two gRPC servers: when DNS
// moves from the first to the second, they keep calling the first while their
// connection lives; a first server with MAX_CONNECTION_AGE sends GOAWAY, and they
// resolve again and move, without a failed call.
func TestGRPCClientsStayUntilGOAWAY(t *testing.T) {
	// grpc-go re-resolves at most every 30 s by default; the test would wait that long.
	grpcdns.SetMinResolutionInterval(50 * time.Millisecond)
	for _, maxAge := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run("MAX_CONNECTION_AGE="+maxAge.String(), func(t *testing.T) {
			ip1, ip2 := netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")
			port, err := commonFreePort(ip1, ip2)
			if err != nil {
				t.Fatal(err)
			}
			startGRPCServer(t, "one", netip.AddrPortFrom(ip1, uint16(port)), maxAge)
			startGRPCServer(t, "two", netip.AddrPortFrom(ip2, uint16(port)), 0)
			answer := &Answer{}
			answer.Publish(ip1)
			f := NewGRPCFleet(GRPCConfig{Hostname: testHostname, Port: port, Nameserver: startTestDNS(t, answer),
				Apps: 2, Workers: 3, Every: 20 * time.Millisecond, Seed: 1})
			if err := f.Start(); err != nil {
				t.Fatal(err)
			}
			defer f.Halt()
			eventually(t, "every worker bound to "+ip1.String(), func() bool { return f.Bound()[ip1] == 6 })
			answer.Publish(ip2)
			if maxAge == 0 {
				before := f.Counts().ByCluster["one"]
				eventually(t, "60 more calls", func() bool { return f.Counts().ByCluster["one"] >= before+60 })
				if c := f.Counts(); c.ByCluster["two"] != 0 || f.Bound()[ip1] != 6 {
					t.Fatalf("gRPC clients moved while their connections lived: %+v, bound %v", c, f.Bound())
				}
			} else {
				eventually(t, "every worker on "+ip2.String()+" after GOAWAY", func() bool {
					return f.Bound()[ip2] == 6 && f.Counts().ByCluster["two"] > 0
				})
			}
			f.Halt()
			if c := f.Counts(); c.Failed != 0 || c.Served == 0 {
				t.Errorf("%d calls served, %d failed: %v", c.Served, c.Failed, c.FailureSamples)
			}
		})
	}
}

// startGRPCServer serves the health service at addr, answering with cluster in the
// header as the bed's backend does; maxAge, when set, is its MAX_CONNECTION_AGE.
func startGRPCServer(t *testing.T, cluster string, addr netip.AddrPort, maxAge time.Duration) {
	t.Helper()
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs(ServedByHeader, cluster)); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	})}
	if maxAge > 0 {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: maxAge, MaxConnectionAgeGrace: time.Second}))
	}
	s := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
}

// startTestDNS serves answer's addresses as the A records of testHostname, over UDP
// on a free port of 127.0.0.1, until the test ends, and returns its address.
func startTestDNS(t *testing.T, answer *Answer) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := dns.NewServeMux()
	mux.HandleFunc(dns.Fqdn(testHostname), func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		if len(req.Question) == 1 && req.Question[0].Qtype == dns.TypeA {
			addrs, _ := answer.Lookup(context.Background())
			for _, a := range addrs {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: a.AsSlice()})
			}
		}
		_ = w.WriteMsg(m)
	})
	server := &dns.Server{PacketConn: pc, Handler: mux}
	started := make(chan struct{})
	server.NotifyStartedFunc = func() { close(started) }
	go func() { _ = server.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = server.Shutdown() })
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port))
}
