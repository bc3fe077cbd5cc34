// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// query builds a DNS query for name and type, as a stub resolver sends it.
func query(id uint16, name string, qtype uint16) []byte {
	msg := make([]byte, dnsHeaderLen)
	binary.BigEndian.PutUint16(msg[0:2], id)
	binary.BigEndian.PutUint16(msg[2:4], dnsFlagRD)
	binary.BigEndian.PutUint16(msg[4:6], 1)
	for _, label := range splitLabels(name) {
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	msg = append(msg, 0, byte(qtype>>8), byte(qtype), 0, dnsClassIN)
	return msg
}

func splitLabels(name string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '.' {
			if i > start {
				out = append(out, name[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func TestAnswerQuery(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("::1")}
	tests := map[string]struct {
		query       []byte
		wantErr     bool
		wantRcode   uint16
		wantAnswers int
	}{
		"A of the name":             {query: query(7, "gateway.demo.example.", dnsTypeA), wantAnswers: 1},
		"A of the name, upper case": {query: query(7, "Gateway.Demo.Example.", dnsTypeA), wantAnswers: 1},
		"AAAA of the name: no data": {query: query(7, "gateway.demo.example.", 28)},
		"another name":              {query: query(7, "other.example.", dnsTypeA), wantRcode: dnsRcodeNXName},
		"truncated question":        {query: query(7, "gateway.demo.example.", dnsTypeA)[:20], wantRcode: dnsRcodeFormat},
		"too short":                 {query: []byte{1, 2, 3}, wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := answerQuery(tt.query, "gateway.demo.example.", addrs, 5)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %x", resp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			flags := binary.BigEndian.Uint16(resp[2:4])
			if binary.BigEndian.Uint16(resp[0:2]) != 7 || flags&dnsFlagQR == 0 || flags&dnsFlagAA == 0 || flags&dnsFlagRD == 0 {
				t.Errorf("header %x: want the query's ID, QR, AA and RD", resp[:4])
			}
			if rcode := flags & 0xF; rcode != tt.wantRcode {
				t.Errorf("rcode %d, want %d", rcode, tt.wantRcode)
			}
			if n := int(binary.BigEndian.Uint16(resp[6:8])); n != tt.wantAnswers {
				t.Errorf("%d answers, want %d", n, tt.wantAnswers)
			}
		})
	}
}

// TestDNSServerWithGoResolver resolves through the server with Go's own DNS client, as
// the demo's clients do, and sees a new answer once it is published.
func TestDNSServerWithGoResolver(t *testing.T) {
	s, err := newDNSServer(gatewayHostname)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.addr())
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if got, err := r.LookupNetIP(ctx, "ip4", gatewayHostname+"."); err == nil {
		t.Errorf("before anything is published: got %v, want no address", got)
	}
	for _, want := range []string{"127.0.0.2", "127.0.0.3"} {
		s.publish([]netip.Addr{netip.MustParseAddr(want)})
		got, err := r.LookupNetIP(ctx, "ip4", gatewayHostname+".")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []netip.Addr{netip.MustParseAddr(want)}) {
			t.Errorf("got %v, want %s", got, want)
		}
	}
	// LookupHost asks for A and AAAA: the empty AAAA answer must not fail it.
	if got, err := r.LookupHost(ctx, gatewayHostname+"."); err != nil || !slices.Equal(got, []string{"127.0.0.3"}) {
		t.Errorf("LookupHost: %v, %v", got, err)
	}
	var dnsErr *net.DNSError
	if _, err := r.LookupNetIP(ctx, "ip4", "other.example."); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("another name: %v, want not found", err)
	}
}
