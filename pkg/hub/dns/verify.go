// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	mdns "github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// Verification (spec.dns.verify, mode Authoritative): a leaving cluster counts as
// withdrawn from DNS only once every authoritative name server of the zone answers
// each hostname without its addresses. A Verifier asks them (Observe, with the
// network); Confirm, a pure function, says which clusters the answers let go of.

// Bounds of a round of queries.
const (
	// QueryTimeout bounds one query, and the resolution of a name through the
	// manager's resolver.
	QueryTimeout = 2 * time.Second
	// RoundTimeout bounds a whole round; a question not asked by then counts as not
	// answered.
	RoundTimeout = 20 * time.Second
	// MaxServerAddresses bounds the name server addresses a round asks: a zone with
	// more is not verified (fail closed), and its policy must list the servers or use
	// mode ExternalDNS.
	MaxServerAddresses = 40
	// MaxNSNames bounds the NS names of a zone that are resolved.
	MaxNSNames = 10
	// udpSize is the EDNS0 buffer size the queries advertise, and the most a UDP
	// answer may hold (DNS Flag Day 2020's size: no fragmentation). A larger answer
	// comes truncated and is asked again over TCP, where a message is at most 64 KiB.
	udpSize = 1232
	// maxParallelQueries bounds the queries in flight at once over all rounds.
	maxParallelQueries = 32
	// defaultResolvConf is the manager's resolver configuration.
	defaultResolvConf = "/etc/resolv.conf"
	// maxReasons bounds the reasons a cluster's note lists, and the addresses a reason
	// names.
	maxReasons = 3
	// maxNoteBytes bounds a cluster's note.
	maxNoteBytes = 1024
)

// Verifier asks the authoritative name servers of a policy's hostnames what they
// answer. The policy controller calls it apart from its syncs, at most once per
// policy and interval.
type Verifier interface {
	// Observe asks every address of every name server, for each hostname, its A and
	// AAAA records. nameservers are spec.dns.verify.nameservers ("host" or
	// "host:port"); none: each hostname's zone's NS servers.
	Observe(ctx context.Context, hostnames, nameservers []string) Observation
}

// Observation is what one round of queries found.
type Observation struct {
	// Answers are the answers, one for each server address, hostname and type.
	Answers []Answer
	// Problems are what kept the round from asking some server: a zone or a name
	// server that could not be found, too many servers, a malformed nameserver.
	// Any problem keeps every cluster published (fail closed).
	Problems []string
}

// Answer is what one name server address answered to one question.
type Answer struct {
	// Server names the server as a message says it: "192.0.2.53:53", or
	// "ns1.example.com (192.0.2.53:53)".
	Server string
	// Hostname and Type are the question: a hostname of spec.dns, A or AAAA.
	Hostname string
	Type     string
	// Addresses are the addresses of the answer's records of that type for that
	// name, canonical and sorted; none for NXDOMAIN or an empty answer.
	Addresses []string
	// Problem is "" when the server answered with authority (NOERROR or NXDOMAIN);
	// otherwise what it did instead, such as "did not answer" or "answered SERVFAIL".
	Problem string
}

// Confirm says which of the leaving clusters the observation lets go of: those for
// which every name server was asked and answered every question with authority,
// without any of the cluster's addresses (other than addresses the records still
// publish), and with an address for every record set that is published. leaving maps
// each cluster to its addresses; a cluster whose addresses are not known is let go of
// only when no server answers any address that the records do not publish. waiting
// says, for each cluster not let go of, why, naming servers and what they answered.
func Confirm(obs Observation, published Publication, leaving map[string][]string) (confirmed sets.Set[string], waiting map[string]string) {
	confirmed, waiting = sets.New[string](), map[string]string{}
	if len(leaving) == 0 {
		return confirmed, waiting
	}
	records := canonicalRecords(published)
	common := unanswered(obs)
	for _, a := range obs.Answers {
		if a.Problem != "" {
			continue
		}
		key := recordKey{normalizeName(a.Hostname), a.Type}
		if records[key].Len() > 0 && len(a.Addresses) == 0 {
			common = append(common, fmt.Sprintf("name server %s has no %s record for %s, which is published", a.Server, a.Type, a.Hostname))
		}
	}
	for cluster, addresses := range leaving {
		own := sets.New[string]()
		for _, a := range addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				own.Insert(ip.Unmap().String())
			}
		}
		reasons := slices.Clone(common)
		for _, a := range obs.Answers {
			if a.Problem != "" {
				continue
			}
			var stale []string
			for _, addr := range a.Addresses {
				if records[recordKey{normalizeName(a.Hostname), a.Type}].Has(addr) {
					continue // still published, for another cluster
				}
				if own.Len() == 0 || own.Has(addr) {
					stale = append(stale, addr)
				}
			}
			if len(stale) > 0 {
				reasons = append(reasons, fmt.Sprintf("name server %s answers %s for %s %s", a.Server, shortlist.Join(stale, maxReasons), a.Hostname, a.Type))
			}
		}
		if len(reasons) == 0 {
			confirmed.Insert(cluster)
			continue
		}
		waiting[cluster] = Note(reasons)
	}
	return confirmed, waiting
}

// Serves reports whether every name server of obs answers every address that
// published holds, for each of its record sets, and says why not: step 2 of a switch
// withdraws the old addresses only once every server answers the new ones beside
// them, so that none of them, nor a provider that applies changes as delete-then-
// create, is ever left without an answer.
func Serves(obs Observation, published Publication) (served bool, why string) {
	records := canonicalRecords(published)
	reasons := unanswered(obs)
	for _, a := range obs.Answers {
		if a.Problem != "" {
			continue
		}
		want := records[recordKey{normalizeName(a.Hostname), a.Type}]
		if missing := want.Difference(sets.New(a.Addresses...)); missing.Len() > 0 {
			reasons = append(reasons, fmt.Sprintf("name server %s does not answer %s for %s %s yet", a.Server, shortlist.Join(sets.List(missing), maxReasons), a.Hostname, a.Type))
		}
	}
	if len(reasons) == 0 {
		return true, ""
	}
	return false, Note(reasons)
}

// canonicalRecords returns the targets of each of published's record sets, by
// normalized name and type, as addresses in the form the answers use.
func canonicalRecords(published Publication) map[recordKey]sets.Set[string] {
	records := map[recordKey]sets.Set[string]{}
	for k, ts := range targetsByRecord(published) {
		canon := sets.New[string]()
		for t := range ts {
			canon.Insert(canonicalAddr(t))
		}
		records[recordKey{normalizeName(k.name), k.recordType}] = canon
	}
	return records
}

// unanswered lists why obs does not answer for every server: the problems finding the
// servers, no server asked, and each server that did not answer.
func unanswered(obs Observation) []string {
	reasons := slices.Clone(obs.Problems)
	if len(obs.Answers) == 0 && len(obs.Problems) == 0 {
		reasons = append(reasons, "no name server was asked")
	}
	for _, a := range obs.Answers {
		if a.Problem != "" {
			reasons = append(reasons, fmt.Sprintf("name server %s %s", a.Server, a.Problem))
		}
	}
	return reasons
}

// Note joins reasons, sorted and each once, at most maxReasons of them and
// maxNoteBytes in all, for a row's message: without ";" (which separates the parts of
// a message).
func Note(reasons []string) string {
	note := strings.ReplaceAll(shortlist.Join(sortedUnique(reasons), maxReasons), ";", ",")
	if len(note) <= maxNoteBytes {
		return note
	}
	cut := maxNoteBytes - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}

// canonicalAddr is an address in the canonical form the answers use; s itself when it
// is not an address.
func canonicalAddr(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.Unmap().String()
	}
	return s
}

// NameServers is the Verifier of the manager: it asks name servers over the network,
// UDP first and TCP when an answer is truncated, each query without recursion and
// bounded by QueryTimeout, and finds zones and name server addresses through the
// manager's resolver.
type NameServers struct {
	// Resolvers are the recursive resolvers ("host:port") that find zones and resolve
	// name servers' names. Nil: those of ResolvConf, read at each round.
	Resolvers []string
	// ResolvConf is the resolver configuration read when Resolvers is nil; default
	// /etc/resolv.conf.
	ResolvConf string
	// Timeout bounds one query; default QueryTimeout.
	Timeout time.Duration
	// Allow are the name servers that may be asked, named in a policy or found as a
	// zone's NS servers (--dns-nameserver-allowlist); nil: public addresses, port 53.
	// The manager's own resolvers are not checked: the hub admin chose them.
	Allow *NameserverAllowlist

	// nsPort is the port the zones' NS servers are asked on: 53 when empty (tests
	// serve on another).
	nsPort string

	once  sync.Once
	slots chan struct{}
}

// server is one address of a name server, and the hostnames to ask it about.
type server struct {
	label     string
	addr      string
	hostnames []string
}

// Errors of exchange, as a row's message says them.
var (
	// errNoAnswer: a server did not answer in time, or could not be reached.
	errNoAnswer = errors.New("did not answer")
	// errMalformed: what came back is not an answer to the question.
	errMalformed = errors.New("answered a malformed message or another question")
)

// Observe implements Verifier.
func (n *NameServers) Observe(ctx context.Context, hostnames, nameservers []string) Observation {
	n.once.Do(func() { n.slots = make(chan struct{}, maxParallelQueries) })
	ctx, cancel := context.WithTimeout(ctx, RoundTimeout)
	defer cancel()
	hostnames = sortedUnique(hostnames)
	var obs Observation
	if len(hostnames) == 0 {
		obs.Problems = append(obs.Problems, "no hostname to ask about")
		return obs
	}
	servers, problems := n.servers(ctx, hostnames, nameservers)
	obs.Problems = problems
	if len(servers) > MaxServerAddresses {
		obs.Problems = append(obs.Problems, fmt.Sprintf("the name servers have %d addresses, more than the %d a round asks: list the servers to ask in dns.verify.nameservers", len(servers), MaxServerAddresses))
		return obs
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers := n.ask(ctx, s)
			mu.Lock()
			obs.Answers = append(obs.Answers, answers...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.SortFunc(obs.Answers, func(a, b Answer) int {
		return strings.Compare(a.Server+" "+a.Hostname+" "+a.Type, b.Server+" "+b.Hostname+" "+b.Type)
	})
	slices.Sort(obs.Problems)
	return obs
}

// ask asks one server address about each of its hostnames, A then AAAA. After a
// question it did not answer, the rest are not asked: they count as not answered, so
// that a dead server costs one timeout, not one per question.
func (n *NameServers) ask(ctx context.Context, s server) []Answer {
	var out []Answer
	dead := ""
	for _, h := range s.hostnames {
		for _, qtype := range []uint16{mdns.TypeA, mdns.TypeAAAA} {
			a := Answer{Server: s.label, Hostname: h, Type: mdns.TypeToString[qtype]}
			if dead != "" {
				a.Problem = dead
				out = append(out, a)
				continue
			}
			r, err := n.exchange(ctx, s.addr, h, qtype, false)
			switch {
			case errors.Is(err, errMalformed):
				a.Problem = err.Error()
			case err != nil:
				a.Problem = errNoAnswer.Error()
				dead = a.Problem
			case !r.Authoritative:
				a.Problem = "answered without authority for the zone (not one of its authoritative servers)"
			case r.Rcode == mdns.RcodeSuccess || r.Rcode == mdns.RcodeNameError:
				a.Addresses = addressesIn(r, h, qtype)
			default:
				a.Problem = "answered " + rcodeName(r.Rcode)
			}
			out = append(out, a)
		}
	}
	return out
}

// addressesIn returns the addresses of r's answer records of type qtype, canonical,
// sorted: those of the name asked and of the names it is an alias of (CNAME).
func addressesIn(r *mdns.Msg, name string, qtype uint16) []string {
	owners := sets.New(strings.ToLower(mdns.Fqdn(name)))
	for changed := true; changed; {
		changed = false
		for _, rr := range r.Answer {
			if c, ok := rr.(*mdns.CNAME); ok && owners.Has(strings.ToLower(c.Hdr.Name)) && !owners.Has(strings.ToLower(c.Target)) {
				owners.Insert(strings.ToLower(c.Target))
				changed = true
			}
		}
	}
	out := sets.New[string]()
	for _, rr := range r.Answer {
		if !owners.Has(strings.ToLower(rr.Header().Name)) {
			continue
		}
		switch v := rr.(type) {
		case *mdns.A:
			if qtype == mdns.TypeA {
				if ip, ok := netip.AddrFromSlice(v.A); ok {
					out.Insert(ip.Unmap().String())
				}
			}
		case *mdns.AAAA:
			if qtype == mdns.TypeAAAA {
				if ip, ok := netip.AddrFromSlice(v.AAAA); ok {
					out.Insert(ip.String())
				}
			}
		}
	}
	return sets.List(out)
}

func rcodeName(rcode int) string {
	if s, ok := mdns.RcodeToString[rcode]; ok {
		return s
	}
	return "rcode " + strconv.Itoa(rcode)
}

// exchange asks addr one question: UDP, then TCP when the answer is truncated. recurse
// sets the recursion desired flag (for the manager's resolver). It fails when no
// answer came in time or the answer is malformed or to another question.
func (n *NameServers) exchange(ctx context.Context, addr, name string, qtype uint16, recurse bool) (*mdns.Msg, error) {
	select {
	case n.slots <- struct{}{}:
		defer func() { <-n.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = QueryTimeout
	}
	q := new(mdns.Msg)
	q.SetQuestion(mdns.Fqdn(name), qtype)
	q.RecursionDesired = recurse
	q.SetEdns0(udpSize, false)
	client := &mdns.Client{Net: "udp", UDPSize: udpSize, Timeout: timeout}
	r, _, err := client.ExchangeContext(ctx, q, addr)
	if r != nil && r.Truncated {
		// The rest is over TCP, whatever the UDP answer held or failed to unpack.
		client.Net = "tcp"
		r, _, err = client.ExchangeContext(ctx, q, addr)
	}
	var netErr net.Error
	switch {
	case err != nil && r != nil && !errors.As(err, &netErr):
		return nil, errMalformed // it answered, but not a message that unpacks
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errNoAnswer, err)
	case !r.Response || len(r.Question) != 1 || !strings.EqualFold(r.Question[0].Name, q.Question[0].Name) ||
		r.Question[0].Qtype != qtype || r.Opcode != mdns.OpcodeQuery:
		return nil, errMalformed
	}
	return r, nil
}

// resolvers returns the manager's resolvers.
func (n *NameServers) resolvers() ([]string, error) {
	if n.Resolvers != nil {
		return n.Resolvers, nil
	}
	path := n.ResolvConf
	if path == "" {
		path = defaultResolvConf
	}
	cfg, err := mdns.ClientConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("the manager's resolver configuration %s cannot be read", path)
	}
	out := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		out = append(out, net.JoinHostPort(s, cfg.Port))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the manager's resolver configuration %s names no server", path)
	}
	return out, nil
}

// resolve asks the manager's resolvers, in order, with recursion, until one answers
// NOERROR or NXDOMAIN.
func (n *NameServers) resolve(ctx context.Context, resolvers []string, name string, qtype uint16) (*mdns.Msg, error) {
	for _, addr := range resolvers {
		r, err := n.exchange(ctx, addr, name, qtype, true)
		if err == nil && (r.Rcode == mdns.RcodeSuccess || r.Rcode == mdns.RcodeNameError) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("the manager's resolver did not answer the %s query for %s", mdns.TypeToString[qtype], strings.TrimSuffix(name, "."))
}

// servers returns the server addresses to ask, each with its hostnames, and the
// problems that kept some from being found.
func (n *NameServers) servers(ctx context.Context, hostnames, nameservers []string) ([]server, []string) {
	var problems []string
	var resolvers []string
	needResolver := len(nameservers) == 0
	for _, ns := range nameservers {
		if host, _, err := splitNameserver(ns); err == nil {
			if _, err := netip.ParseAddr(host); err != nil {
				needResolver = true
			}
		}
	}
	if needResolver {
		var err error
		if resolvers, err = n.resolvers(); err != nil {
			return nil, []string{err.Error()}
		}
	}
	byAddr := map[string]*server{}
	add := func(label, addr string, names []string) {
		s := byAddr[addr]
		if s == nil {
			s = &server{label: label, addr: addr}
			byAddr[addr] = s
		}
		s.hostnames = sortedUnique(append(s.hostnames, names...))
	}
	if len(nameservers) > 0 {
		for _, ns := range sortedUnique(nameservers) {
			host, port, err := splitNameserver(ns)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if ip, err := netip.ParseAddr(host); err == nil {
				if !n.Allow.AllowsAddr(ip, port) {
					problems = append(problems, n.Allow.refusedNameserver(ns, false))
					continue
				}
				add(ns, net.JoinHostPort(ip.String(), port), hostnames)
				continue
			}
			addrs, err := n.addressesOf(ctx, resolvers, host)
			if err != nil {
				problems = append(problems, fmt.Sprintf("name server %s: %v", ns, err))
				continue
			}
			addrs, refused := n.allowed(host, addrs, port)
			if refused {
				problems = append(problems, n.Allow.refusedNameserver(ns, true))
			}
			for _, ip := range addrs {
				addr := net.JoinHostPort(ip.String(), port)
				add(ns+" ("+addr+")", addr, hostnames)
			}
		}
		return sortServers(byAddr), problems
	}
	byZone := map[string][]string{}
	for _, h := range hostnames {
		zone, err := n.zoneOf(ctx, resolvers, h)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		byZone[zone] = append(byZone[zone], h)
	}
	for _, zone := range slices.Sorted(func(yield func(string) bool) {
		for z := range byZone {
			if !yield(z) {
				return
			}
		}
	}) {
		names, err := n.nameServersOf(ctx, resolvers, zone)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		port := n.nsPort
		if port == "" {
			port = "53"
		}
		for _, name := range names {
			addrs, err := n.addressesOf(ctx, resolvers, name)
			if err != nil {
				problems = append(problems, fmt.Sprintf("name server %s of %s: %v", strings.TrimSuffix(name, "."), strings.TrimSuffix(zone, "."), err))
				continue
			}
			addrs, refused := n.allowed(name, addrs, port)
			if refused {
				problems = append(problems, n.Allow.refusedNameserver(strings.TrimSuffix(name, ".")+" of "+strings.TrimSuffix(zone, "."), true))
			}
			for _, ip := range addrs {
				addr := net.JoinHostPort(ip.String(), port)
				add(strings.TrimSuffix(name, ".")+" ("+addr+")", addr, byZone[zone])
			}
		}
	}
	return sortServers(byAddr), problems
}

// allowed returns the addresses of the name server name that Allow lets the manager
// ask on port, and whether it refused any.
func (n *NameServers) allowed(name string, addrs []netip.Addr, port string) ([]netip.Addr, bool) {
	if n.Allow.AllowsName(name) {
		return addrs, false
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, ip := range addrs {
		if n.Allow.AllowsAddr(ip, port) {
			out = append(out, ip)
		}
	}
	return out, len(out) < len(addrs)
}

func sortServers(byAddr map[string]*server) []server {
	out := make([]server, 0, len(byAddr))
	for _, s := range byAddr {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b server) int { return strings.Compare(a.addr, b.addr) })
	return out
}

// splitNameserver splits "host" or "host:port" (an IPv6 address bare, or in brackets
// with a port), port 53 by default.
func splitNameserver(s string) (host, port string, err error) {
	bad := fmt.Errorf("nameserver %q is not host or host:port", s)
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		return ip.String(), "53", nil
	}
	host, port = s, "53"
	if strings.Contains(s, ":") {
		if host, port, err = net.SplitHostPort(s); err != nil {
			return "", "", bad
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", "", bad
	}
	host = strings.TrimSuffix(host, ".")
	if strings.HasPrefix(s, "[") {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", "", bad // brackets hold an IPv6 address only
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return "", "", bad
		}
		return ip.String(), port, nil
	}
	if host == "" || len(host) > 253 || strings.ContainsAny(host, "[]:/ \t") {
		return "", "", bad
	}
	if _, ok := mdns.IsDomainName(host); !ok {
		return "", "", bad
	}
	return strings.ToLower(host), port, nil
}

// zoneOf finds the zone of hostname: the closest enclosing name (the hostname itself,
// then its parents) that has an SOA record, as the manager's resolver answers.
func (n *NameServers) zoneOf(ctx context.Context, resolvers []string, hostname string) (string, error) {
	name := mdns.Fqdn(strings.ToLower(strings.TrimPrefix(hostname, "*.")))
	for {
		r, err := n.resolve(ctx, resolvers, name, mdns.TypeSOA)
		if err != nil {
			return "", fmt.Errorf("the zone of %s cannot be found: %v", hostname, err)
		}
		for _, rr := range r.Answer {
			if soa, ok := rr.(*mdns.SOA); ok && strings.EqualFold(soa.Hdr.Name, name) {
				if name == "." {
					return "", fmt.Errorf("the zone of %s cannot be found: no SOA record below the root", hostname)
				}
				return name, nil
			}
		}
		if name == "." {
			return "", fmt.Errorf("the zone of %s cannot be found: no SOA record", hostname)
		}
		off, end := mdns.NextLabel(name, 0)
		if end {
			name = "."
		} else {
			name = name[off:]
		}
	}
}

// nameServersOf returns the NS names of zone, sorted, at most MaxNSNames.
func (n *NameServers) nameServersOf(ctx context.Context, resolvers []string, zone string) ([]string, error) {
	r, err := n.resolve(ctx, resolvers, zone, mdns.TypeNS)
	if err != nil {
		return nil, fmt.Errorf("the name servers of %s cannot be found: %v", strings.TrimSuffix(zone, "."), err)
	}
	names := sets.New[string]()
	for _, rr := range r.Answer {
		if ns, ok := rr.(*mdns.NS); ok && strings.EqualFold(ns.Hdr.Name, zone) {
			names.Insert(strings.ToLower(ns.Ns))
		}
	}
	switch {
	case names.Len() == 0:
		return nil, fmt.Errorf("the zone %s has no NS record", strings.TrimSuffix(zone, "."))
	case names.Len() > MaxNSNames:
		return nil, fmt.Errorf("the zone %s has %d name servers, more than the %d a round asks: list the servers to ask in dns.verify.nameservers", strings.TrimSuffix(zone, "."), names.Len(), MaxNSNames)
	}
	return sets.List(names), nil
}

// addressesOf resolves name's A and AAAA records through the manager's resolver.
func (n *NameServers) addressesOf(ctx context.Context, resolvers []string, name string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, qtype := range []uint16{mdns.TypeA, mdns.TypeAAAA} {
		r, err := n.resolve(ctx, resolvers, name, qtype)
		if err != nil {
			return nil, err
		}
		for _, a := range addressesIn(r, name, qtype) {
			out = append(out, netip.MustParseAddr(a))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("it has no address")
	}
	return out, nil
}
