// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/sets"
)

// testServer is a name server run in the test's process, on UDP and TCP: it answers
// from its records, or misbehaves as told.
type testServer struct {
	t    *testing.T
	addr string

	mu      sync.Mutex
	records map[string][]mdns.RR // by lower-case FQDN and type: "gw.example.test./A"
	names   sets.Set[string]     // the names that have some record
	behave  string               // "", "servfail", "refused", "silent", "truncate", "noaa"
	queries map[string]int       // by network: "udp", "tcp"
	rd      sets.Set[bool]       // the recursion desired flags it was asked with
}

// behaviours of a testServer.
const (
	answerRecords  = ""
	answerSERVFAIL = "servfail"
	answerREFUSED  = "refused"
	answerNothing  = "silent"
	truncateUDP    = "truncate"
	answerNoAA     = "noaa"
)

// startServer starts a server on host (an address of the loopback) and port ("0": any).
func startServer(t *testing.T, host, port string, records ...string) (*testServer, error) {
	t.Helper()
	s := &testServer{t: t, queries: map[string]int{}, rd: sets.New[bool]()}
	s.set(records...)
	// Any port ("0") is the UDP socket's; TCP may have it taken by another socket,
	// then another port is tried.
	var (
		pc  net.PacketConn
		l   net.Listener
		err error
	)
	for attempt := 0; ; attempt++ {
		pc, err = net.ListenPacket("udp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, err
		}
		_, udpPort, _ := net.SplitHostPort(pc.LocalAddr().String())
		l, err = net.Listen("tcp", net.JoinHostPort(host, udpPort))
		if err == nil {
			port = udpPort
			break
		}
		pc.Close()
		if port != "0" || attempt == 9 {
			return nil, err
		}
	}
	s.addr = net.JoinHostPort(host, port)
	for _, srv := range []*mdns.Server{{PacketConn: pc, Handler: s}, {Listener: l, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s, nil
}

// mustStart starts a server on 127.0.0.1, on any port.
func mustStart(t *testing.T, records ...string) *testServer {
	t.Helper()
	s, err := startServer(t, "127.0.0.1", "0", records...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// set replaces the server's records, each in zone file syntax.
func (s *testServer) set(records ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records, s.names = map[string][]mdns.RR{}, sets.New[string]()
	for _, text := range records {
		rr, err := mdns.NewRR(text)
		if err != nil {
			s.t.Fatalf("record %q: %v", text, err)
		}
		name := strings.ToLower(rr.Header().Name)
		key := name + "/" + mdns.TypeToString[rr.Header().Rrtype]
		s.records[key] = append(s.records[key], rr)
		s.names.Insert(name)
	}
}

func (s *testServer) misbehave(how string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behave = how
}

// recursion returns the recursion desired flags the server was asked with.
func (s *testServer) recursion() sets.Set[bool] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rd.Clone()
}

func (s *testServer) asked(network string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[network]
}

// ServeDNS answers one query.
func (s *testServer) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
	network := w.LocalAddr().Network()
	s.mu.Lock()
	s.queries[network]++
	s.rd.Insert(r.RecursionDesired)
	behave := s.behave
	m := new(mdns.Msg)
	m.SetReply(r)
	m.Authoritative = behave != answerNoAA
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	m.Answer = append(m.Answer, s.records[name+"/"+mdns.TypeToString[q.Qtype]]...)
	if !s.names.Has(name) {
		m.Rcode = mdns.RcodeNameError
	}
	s.mu.Unlock()
	switch behave {
	case answerNothing:
		return
	case answerSERVFAIL:
		m.Answer, m.Rcode = nil, mdns.RcodeServerFailure
	case answerREFUSED:
		m.Answer, m.Rcode = nil, mdns.RcodeRefused
	case truncateUDP:
		if network == "udp" {
			m.Answer, m.Truncated = nil, true
		}
	}
	_ = w.WriteMsg(m)
}

const (
	oldA    = "192.0.2.11"
	newA    = "192.0.2.12"
	oldAAAA = "2001:db8::11"
)

// published is what the DNSEndpoint publishes once cluster2 replaced cluster1.
var published = Publication{Clusters: []string{"cluster2"}, Records: []Record{
	{DNSName: "gw.example.test", RecordType: RecordTypeA, TTL: 60, Targets: []string{newA}},
}}

// leaving is cluster1, the cluster that left the records, with its addresses.
var leaving = map[string][]string{"cluster1": {oldA, oldAAAA}}

// verifier is the verifier of the tests, whose queries time out quickly.
func verifier() *NameServers {
	return &NameServers{Allow: allowLoopback, Timeout: 300 * time.Millisecond}
}

// observeAndConfirm observes the servers and confirms cluster1's withdrawal.
func observeAndConfirm(t *testing.T, servers ...*testServer) (bool, string) {
	t.Helper()
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.addr)
	}
	obs := verifier().Observe(context.Background(), []string{"gw.example.test"}, addrs)
	confirmed, waiting := Confirm(obs, published, leaving)
	return confirmed.Has("cluster1"), waiting["cluster1"]
}

// Every server, over real UDP and TCP: a server that still answers the old address,
// fails, refuses, says nothing, answers without authority or has not the new records
// keeps the cluster published, and the note names it and what it answered.
func TestObserveAndConfirm(t *testing.T) {
	current := "gw.example.test. 60 IN A " + newA
	stale := "gw.example.test. 60 IN A " + oldA
	tests := map[string]struct {
		records  []string
		behave   string
		want     bool
		wantNote string
	}{
		"the new address only": {records: []string{current}, want: true},
		"the old address still": {records: []string{current, stale},
			wantNote: "answers " + oldA + " for gw.example.test A"},
		"the old IPv6 address still, in AAAA": {records: []string{current, "gw.example.test. 60 IN AAAA " + oldAAAA},
			wantNote: "answers " + oldAAAA + " for gw.example.test AAAA"},
		"an address no cluster reports, beside the new one": {records: []string{current, "gw.example.test. 60 IN A 198.51.100.7"}, want: true},
		"SERVFAIL":          {records: []string{current}, behave: answerSERVFAIL, wantNote: "answered SERVFAIL"},
		"REFUSED":           {records: []string{current}, behave: answerREFUSED, wantNote: "answered REFUSED"},
		"no answer":         {records: []string{current}, behave: answerNothing, wantNote: "did not answer"},
		"without authority": {records: []string{current}, behave: answerNoAA, wantNote: "answered without authority"},
		"NXDOMAIN for a published name": {records: []string{"other.example.test. 60 IN A " + newA},
			wantNote: "has no A record for gw.example.test, which is published"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := mustStart(t, tc.records...)
			s.misbehave(tc.behave)
			got, note := observeAndConfirm(t, s)
			if got != tc.want || !strings.Contains(note, tc.wantNote) || (!tc.want && !strings.Contains(note, "name server "+s.addr+" ")) {
				t.Errorf("confirmed %v, note %q; want %v, a note naming %s and %q", got, note, tc.want, s.addr, tc.wantNote)
			}
			if s.recursion().Has(true) {
				t.Errorf("an authoritative server was asked with recursion desired")
			}
			if tc.behave == answerNothing && s.asked("udp") != 1 {
				t.Errorf("a server that does not answer was asked %d times, want once (the rest count as not answered)", s.asked("udp"))
			}
		})
	}
}

// A truncated UDP answer is asked again over TCP, whose answer counts: here it holds
// the old address, which the UDP answer left out.
func TestObserveTruncatedOverTCP(t *testing.T) {
	s := mustStart(t, "gw.example.test. 60 IN A "+newA, "gw.example.test. 60 IN A "+oldA)
	s.misbehave(truncateUDP)
	got, note := observeAndConfirm(t, s)
	if got || !strings.Contains(note, "answers "+oldA+" for gw.example.test A") {
		t.Errorf("confirmed %v, note %q; want the old address found over TCP", got, note)
	}
	if s.asked("tcp") != 2 {
		t.Errorf("asked over TCP %d times, want twice (A and AAAA, both truncated over UDP)", s.asked("tcp"))
	}
}

// Two servers, the second lagging: the cluster is let go of only once both answer
// without its address.
func TestObserveLaggingServer(t *testing.T) {
	first := mustStart(t, "gw.example.test. 60 IN A "+newA)
	second := mustStart(t, "gw.example.test. 60 IN A "+newA, "gw.example.test. 60 IN A "+oldA)
	got, note := observeAndConfirm(t, first, second)
	if got || !strings.Contains(note, "name server "+second.addr+" answers "+oldA) || strings.Contains(note, first.addr) {
		t.Fatalf("confirmed %v, note %q; want it waiting on %s alone", got, note, second.addr)
	}
	second.set("gw.example.test. 60 IN A " + newA)
	if got, note := observeAndConfirm(t, first, second); !got {
		t.Errorf("both servers let go: still waiting: %q", note)
	}
}

// With no nameservers listed, the zone is found by walking the hostname up to its SOA
// through the manager's resolver, and each address of each of its NS servers is asked.
func TestObserveFindsTheZone(t *testing.T) {
	var ns1, ns2 *testServer
	for attempt := 0; ; attempt++ {
		ns1 = mustStart(t, "gw.example.test. 60 IN A "+newA)
		_, port, _ := net.SplitHostPort(ns1.addr)
		var err error
		if ns2, err = startServer(t, "127.0.0.2", port, "gw.example.test. 60 IN A "+newA, "gw.example.test. 60 IN A "+oldA); err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatalf("start a second server on the same port: %v", err)
		}
	}
	resolver := mustStart(t,
		"example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. 1 60 60 60 60",
		"example.test. 60 IN NS ns1.example.test.",
		"example.test. 60 IN NS ns2.example.test.",
		"ns1.example.test. 60 IN A 127.0.0.1",
		"ns2.example.test. 60 IN A 127.0.0.2",
		"gw.example.test. 60 IN A "+newA,
		"test. 60 IN SOA a.test. hostmaster.test. 1 60 60 60 60")
	_, port, _ := net.SplitHostPort(ns1.addr)
	v := &NameServers{Allow: allowLoopback, Resolvers: []string{resolver.addr}, Timeout: 300 * time.Millisecond, nsPort: port}
	obs := v.Observe(context.Background(), []string{"gw.example.test"}, nil)
	confirmed, waiting := Confirm(obs, published, leaving)
	want := "name server ns2.example.test (" + ns2.addr + ") answers " + oldA + " for gw.example.test A"
	if confirmed.Len() != 0 || waiting["cluster1"] != want {
		t.Fatalf("confirmed %v, waiting %q; want it waiting on %q", sets.List(confirmed), waiting["cluster1"], want)
	}
	if ns1.asked("udp") == 0 || !resolver.recursion().Equal(sets.New(true)) || ns1.recursion().Has(true) {
		t.Errorf("ns1 asked %d times; the resolver asked with recursion %v, ns1 with %v: want the resolver asked with it, the servers without",
			ns1.asked("udp"), resolver.recursion().UnsortedList(), ns1.recursion().UnsortedList())
	}
	ns2.set("gw.example.test. 60 IN A " + newA)
	if confirmed, waiting := Confirm(v.Observe(context.Background(), []string{"gw.example.test"}, nil), published, leaving); !confirmed.Has("cluster1") {
		t.Errorf("both name servers let go: still waiting: %q", waiting["cluster1"])
	}

	// A zone that cannot be found keeps the cluster published.
	resolver.set("gw.example.test. 60 IN A " + newA)
	obs = v.Observe(context.Background(), []string{"gw.example.test"}, nil)
	if confirmed, waiting := Confirm(obs, published, leaving); confirmed.Len() != 0 || !strings.Contains(waiting["cluster1"], "the zone of gw.example.test cannot be found") {
		t.Errorf("no SOA: confirmed %v, waiting %q", sets.List(confirmed), waiting["cluster1"])
	}
	// So does a resolver that does not answer.
	resolver.misbehave(answerNothing)
	obs = v.Observe(context.Background(), []string{"gw.example.test"}, nil)
	if confirmed, waiting := Confirm(obs, published, leaving); confirmed.Len() != 0 || !strings.Contains(waiting["cluster1"], "the manager's resolver did not answer") {
		t.Errorf("no resolver: confirmed %v, waiting %q", sets.List(confirmed), waiting["cluster1"])
	}
}

// A name server listed by name is resolved, and each of its addresses is asked.
func TestObserveNamedServer(t *testing.T) {
	s := mustStart(t, "gw.example.test. 60 IN A "+newA, "gw.example.test. 60 IN A "+oldA)
	resolver := mustStart(t, "ns.example.test. 60 IN A 127.0.0.1")
	_, port, _ := net.SplitHostPort(s.addr)
	v := &NameServers{Allow: allowLoopback, Resolvers: []string{resolver.addr}, Timeout: 300 * time.Millisecond}
	confirmed, waiting := Confirm(v.Observe(context.Background(), []string{"gw.example.test"}, []string{"ns.example.test:" + port}), published, leaving)
	want := "name server ns.example.test:" + port + " (" + s.addr + ") answers " + oldA + " for gw.example.test A"
	if confirmed.Len() != 0 || waiting["cluster1"] != want {
		t.Errorf("confirmed %v, waiting %q; want %q", sets.List(confirmed), waiting["cluster1"], want)
	}
}

// Confirm's rules on the answers alone.
func TestConfirm(t *testing.T) {
	answer := func(typ string, addrs ...string) Answer {
		return Answer{Server: "192.0.2.53:53", Hostname: "gw.example.test", Type: typ, Addresses: addrs}
	}
	tests := map[string]struct {
		obs     Observation
		leaving map[string][]string
		want    []string
		note    string
	}{
		"nothing asked": {obs: Observation{}, leaving: leaving, note: "no name server was asked"},
		"a problem finding the servers": {obs: Observation{Problems: []string{"the zone of gw.example.test cannot be found"}, Answers: []Answer{answer("A", newA), answer("AAAA")}},
			leaving: leaving, note: "the zone of gw.example.test cannot be found"},
		"an address still published for another cluster is not stale": {obs: Observation{Answers: []Answer{answer("A", newA), answer("AAAA")}},
			leaving: map[string][]string{"cluster1": {newA}}, want: []string{"cluster1"}},
		"a cluster without known addresses waits on any address not published": {obs: Observation{Answers: []Answer{answer("A", newA, "198.51.100.7"), answer("AAAA")}},
			leaving: map[string][]string{"cluster1": nil}, note: "name server 192.0.2.53:53 answers 198.51.100.7 for gw.example.test A"},
		"each cluster waits only on its own addresses": {obs: Observation{Answers: []Answer{answer("A", newA, oldA), answer("AAAA")}},
			leaving: map[string][]string{"cluster1": {oldA}, "cluster3": {"192.0.2.13"}}, want: []string{"cluster3"},
			note: "name server 192.0.2.53:53 answers " + oldA + " for gw.example.test A"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			confirmed, waiting := Confirm(tc.obs, published, tc.leaving)
			if !confirmed.Equal(sets.New(tc.want...)) || (tc.note != "" && waiting["cluster1"] != tc.note) || (tc.note == "" && waiting["cluster1"] != "") {
				t.Errorf("confirmed %v, waiting %q; want %v, cluster1's note %q", sets.List(confirmed), waiting, tc.want, tc.note)
			}
		})
	}
	// A note is bounded, and never holds a ";".
	var reasons []string
	for i := range 20 {
		reasons = append(reasons, strings.Repeat("x", 500)+strconv.Itoa(i)+"; y")
	}
	if n := Note(reasons); len(n) > maxNoteBytes || strings.Contains(n, ";") {
		t.Errorf("Note: %d bytes, with a ';' %v", len(n), strings.Contains(n, ";"))
	}
}

// TestServes: step 2 of a switch waits until every name server answers every address
// of the records that hold both the old and the new ones.
func TestServes(t *testing.T) {
	both := Publication{Records: []Record{{DNSName: "gw.example.test", RecordType: RecordTypeA, Targets: []string{newA, oldA}}}}
	answer := func(server string, addrs ...string) Answer {
		return Answer{Server: server, Hostname: "gw.example.test", Type: "A", Addresses: addrs}
	}
	tests := map[string]struct {
		obs  Observation
		want string // "" when served, else a part of why not
	}{
		"nothing asked":             {Observation{}, "no name server was asked"},
		"every server answers":      {Observation{Answers: []Answer{answer("192.0.2.53:53", oldA, newA), answer("192.0.2.54:53", newA, oldA)}}, ""},
		"a secondary lags":          {Observation{Answers: []Answer{answer("192.0.2.53:53", oldA, newA), answer("192.0.2.54:53", oldA)}}, "name server 192.0.2.54:53 does not answer " + newA + " for gw.example.test A yet"},
		"a server does not answer":  {Observation{Answers: []Answer{answer("192.0.2.53:53", oldA, newA), {Server: "192.0.2.54:53", Hostname: "gw.example.test", Type: "A", Problem: "timed out"}}}, "name server 192.0.2.54:53 timed out"},
		"the servers are not found": {Observation{Problems: []string{"the zone of gw.example.test cannot be found"}}, "cannot be found"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			served, why := Serves(tc.obs, both)
			if served != (tc.want == "") || !strings.Contains(why, tc.want) {
				t.Errorf("Serves = %v, %q; want served %v, %q", served, why, tc.want == "", tc.want)
			}
		})
	}
	if !Shrinks(both, Publication{Records: []Record{{DNSName: "gw.example.test", RecordType: RecordTypeA, Targets: []string{newA}}}}) || Shrinks(both, both) {
		t.Error("Shrinks: withdrawing the old address shrinks the records, and the same records do not")
	}
}

func TestSplitNameserver(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.53":            "192.0.2.53 53",
		"192.0.2.53:5353":       "192.0.2.53 5353",
		"2001:db8::53":          "2001:db8::53 53",
		"[2001:db8::53]:5353":   "2001:db8::53 5353",
		"ns1.example.com":       "ns1.example.com 53",
		"NS1.example.com.:54":   "ns1.example.com 54",
		"ns1.example.com:0":     "",
		"ns1.example.com:70000": "",
		"ns1 example.com":       "",
		"[ns1.example.com]:53":  "",
		"fe80::1%eth0":          "",
		"":                      "",
	} {
		host, port, err := splitNameserver(in)
		got := host + " " + port
		if err != nil {
			got = ""
		}
		if got != want {
			t.Errorf("splitNameserver(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
}
