// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

const (
	// gatewayHostname is the name the clients resolve.
	gatewayHostname = "gateway.demo.example"
	// dnsRecordTTL is the TTL the DNS puts in its answers. The clients, like many real
	// ones (stub resolvers, JVMs, apps with their own caches), keep an answer for a TTL
	// of their own.
	dnsRecordTTL = 5
	// dnsPublishEvery is how often the DNS controller reads the Placement and Gateways.
	dnsPublishEvery = 200 * time.Millisecond
)

// DNS message constants (RFC 1035).
const (
	dnsHeaderLen   = 12
	dnsTypeA       = 1
	dnsClassIN     = 1
	dnsFlagQR      = 1 << 15
	dnsFlagAA      = 1 << 10
	dnsFlagRD      = 1 << 8
	dnsOpcodeMask  = 0xF << 11
	dnsRcodeFormat = 1
	dnsRcodeNXName = 3
	dnsRcodeNotImp = 4
	dnsNamePointer = 0xC000 | dnsHeaderLen // the question's name, right after the header
)

// dnsServer is an authoritative DNS server, over UDP, for one name: it answers A
// queries for it with the addresses last published, and nothing for other types.
type dnsServer struct {
	name    string // lower case, fully qualified, with the final dot
	conn    net.PacketConn
	mu      sync.RWMutex
	answer  []netip.Addr
	queries atomic.Int64
	done    chan struct{}
}

func newDNSServer(name string) (*dnsServer, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for DNS: %w", err)
	}
	s := &dnsServer{name: strings.ToLower(strings.TrimSuffix(name, ".")) + ".", conn: conn, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

// addr is the server's host:port.
func (s *dnsServer) addr() string { return s.conn.LocalAddr().String() }

// publish sets the addresses of the name.
func (s *dnsServer) publish(addrs []netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = slices.Clone(addrs)
}

// published is what the server answers now.
func (s *dnsServer) published() []netip.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.answer)
}

func (s *dnsServer) serve() {
	defer close(s.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		s.queries.Add(1)
		resp, err := answerQuery(buf[:n], s.name, s.published(), dnsRecordTTL)
		if err != nil {
			continue // not a DNS query: no answer, as servers do
		}
		_, _ = s.conn.WriteTo(resp, from)
	}
}

// close stops the server; it is safe to call more than once.
func (s *dnsServer) close() {
	s.conn.Close()
	<-s.done
}

// answerQuery builds the answer to a DNS query for name: the addresses for an A query
// of name, no records for another type of name (NODATA), NXDOMAIN for another name.
// The answer is authoritative, so resolvers take an empty answer as final.
func answerQuery(query []byte, name string, addrs []netip.Addr, ttl uint32) ([]byte, error) {
	if len(query) < dnsHeaderLen {
		return nil, errors.New("short DNS message")
	}
	flags := binary.BigEndian.Uint16(query[2:4])
	if flags&dnsFlagQR != 0 {
		return nil, errors.New("not a query")
	}
	header := func(rcode uint16, questions, answers int) []byte {
		h := make([]byte, dnsHeaderLen)
		copy(h[0:2], query[0:2]) // ID
		binary.BigEndian.PutUint16(h[2:4], dnsFlagQR|flags&dnsOpcodeMask|dnsFlagAA|flags&dnsFlagRD|rcode)
		binary.BigEndian.PutUint16(h[4:6], uint16(questions))
		binary.BigEndian.PutUint16(h[6:8], uint16(answers))
		return h
	}
	if flags&dnsOpcodeMask != 0 {
		return header(dnsRcodeNotImp, 0, 0), nil
	}
	if binary.BigEndian.Uint16(query[4:6]) != 1 {
		return header(dnsRcodeFormat, 0, 0), nil
	}
	qname, end, err := readName(query, dnsHeaderLen)
	if err != nil || len(query) < end+4 {
		return header(dnsRcodeFormat, 0, 0), nil
	}
	question := query[dnsHeaderLen : end+4]
	qtype := binary.BigEndian.Uint16(query[end : end+2])
	qclass := binary.BigEndian.Uint16(query[end+2 : end+4])

	if !strings.EqualFold(qname, name) {
		return append(header(dnsRcodeNXName, 1, 0), question...), nil
	}
	var records []netip.Addr
	if qtype == dnsTypeA && qclass == dnsClassIN {
		for _, a := range addrs {
			if a.Is4() {
				records = append(records, a)
			}
		}
	}
	msg := append(header(0, 1, len(records)), question...)
	for _, a := range records {
		rr := make([]byte, 16)
		binary.BigEndian.PutUint16(rr[0:2], dnsNamePointer)
		binary.BigEndian.PutUint16(rr[2:4], dnsTypeA)
		binary.BigEndian.PutUint16(rr[4:6], dnsClassIN)
		binary.BigEndian.PutUint32(rr[6:10], ttl)
		binary.BigEndian.PutUint16(rr[10:12], 4)
		ip := a.As4()
		copy(rr[12:16], ip[:])
		msg = append(msg, rr...)
	}
	return msg, nil
}

// readName reads an uncompressed domain name at off, as queries carry it, and returns
// it with a final dot and the offset after it.
func readName(msg []byte, off int) (string, int, error) {
	var labels []string
	for {
		if off >= len(msg) {
			return "", 0, errors.New("name runs past the message")
		}
		n := int(msg[off])
		off++
		switch {
		case n == 0:
			return strings.Join(labels, ".") + ".", off, nil
		case n > 63:
			return "", 0, errors.New("compressed or invalid label in a question")
		case off+n > len(msg):
			return "", 0, errors.New("label runs past the message")
		}
		labels = append(labels, string(msg[off:off+n]))
		off += n
	}
}

// dnsController publishes the name as the fleet's DNS controller does: the addresses
// of the Gateway on the clusters that the REAL Placement selects, read from the
// Gateways' status once they are Programmed and pass a health check, as health-checked
// DNS records do (Traefik writes Programmed a moment before it serves the route). When none of those clusters has a
// Programmed Gateway yet (the few seconds after the Placement moved, before the new
// cluster's Gateway is up), it keeps the record it has: a DNS controller updates a
// record only when it has an address to put in it.
type dnsController struct {
	server           *dnsServer
	hub              clusterclient.Interface
	namespace        string // of the real Placement
	placement        string
	gatewayNamespace string
	gatewayName      string
	spokes           map[string]gatewayclient.Interface
	clusterOf        map[netip.Addr]string
	// healthy checks that an address serves the name; nil: every address does.
	healthy func(ctx context.Context, addr netip.Addr) error
	log     func(format string, args ...any)
}

// run publishes until ctx ends.
func (c *dnsController) run(ctx context.Context) {
	tick := time.NewTicker(dnsPublishEvery)
	defer tick.Stop()
	for {
		if err := c.publishOnce(ctx); err != nil && ctx.Err() == nil {
			c.log("DNS controller: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (c *dnsController) publishOnce(ctx context.Context) error {
	clusters, err := decidedClusters(ctx, c.hub, c.namespace, c.placement)
	if err != nil {
		return err
	}
	var addrs []netip.Addr
	for _, cluster := range clusters {
		spoke, ok := c.spokes[cluster]
		if !ok {
			continue
		}
		gw, err := spoke.GatewayV1().Gateways(c.gatewayNamespace).Get(ctx, c.gatewayName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read the Gateway on %s: %w", cluster, err)
		}
		for _, a := range programmedAddresses(gw) {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				continue
			}
			if c.healthy != nil && c.healthy(ctx, ip) != nil {
				continue
			}
			addrs = append(addrs, ip)
		}
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	old := c.server.published()
	if len(addrs) == 0 || slices.Equal(addrs, old) {
		return nil
	}
	c.server.publish(addrs)
	c.log("DNS: %s now answers %s (was %s)", gatewayHostname, c.describe(addrs), c.describe(old))
	return nil
}

// describe names addresses with their clusters.
func (c *dnsController) describe(addrs []netip.Addr) string {
	if len(addrs) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(addrs))
	for _, a := range addrs {
		parts = append(parts, fmt.Sprintf("%s (%s)", a, c.clusterOf[a]))
	}
	return strings.Join(parts, ", ")
}

// decidedClusters lists the clusters in a Placement's decisions, sorted, as a consumer
// reads them: every PlacementDecision labelled with the Placement's name.
func decidedClusters(ctx context.Context, hub clusterclient.Interface, namespace, placement string) ([]string, error) {
	list, err := hub.ClusterV1beta1().PlacementDecisions(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement,
	})
	if err != nil {
		return nil, fmt.Errorf("read the decisions of Placement %s/%s: %w", namespace, placement, err)
	}
	var clusters []string
	for _, d := range list.Items {
		for _, cd := range d.Status.Decisions {
			clusters = append(clusters, cd.ClusterName)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters), nil
}

// programmedAddresses are the addresses of a Gateway that is Programmed for its
// current generation, as a DNS controller (external-dns, for one) reads them from its
// status.
func programmedAddresses(gw *gatewayv1.Gateway) []string {
	c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	if gw.DeletionTimestamp != nil || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
		return nil
	}
	out := make([]string, 0, len(gw.Status.Addresses))
	for _, a := range gw.Status.Addresses {
		out = append(out, a.Value)
	}
	return out
}
