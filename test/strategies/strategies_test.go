// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package strategies

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/benchreport"
	"open-cluster-management.io/traffic-migration/test/clients"
	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// fullEnv selects the full size and the report under bench/results/<date>-<commit>,
// as in test/bench; seedEnv, when set, seeds the clients (make bench gives each run its
// number, so that a series is over seeds).
const (
	fullEnv = "TRAFFIC_MIGRATION_BENCH"
	seedEnv = "TRAFFIC_MIGRATION_BENCH_SEED"
)

// What the benchmark creates, on the hub and on the spokes.
const (
	namespace      = "strategies"
	clusterSetName = "strategies"
	regionLabel    = "region"
	backendName    = "backend"
	secretName     = "prometheus"
	dnsZone        = "strategies.example."
	// The Gateways' traffic as Traefik counts it, by entry point (one per row), with
	// the cluster label of the metrics pipeline.
	requestsMetric = "traefik_entrypoint_requests_total"
	clusterLabel   = "cluster"
	// The manager's install, from manifests/.
	managerNamespace  = "open-cluster-management-addon"
	managerDeployment = "traffic-migration-manager"
	agentDeployment   = "traffic-migration-agent"
)

// regions are the clusters' regions, the label the real Placements select on.
var regions = map[string]string{cluster1: "us-east", cluster2: "us-west"}

// sizes are the knobs of one run: the clients, the same for every row, and the
// timings of the policies and of the fixed timers.
type sizes struct {
	Mode                string     `json:"mode"`
	Clients             int        `json:"clients"`
	RequestEverySeconds float64    `json:"requestEverySeconds"`
	ShortTTLSeconds     [2]float64 `json:"shortTTLSeconds"`
	LongTTLSeconds      [2]float64 `json:"longTTLSeconds"`
	LongClients         int        `json:"longClients"`
	Seed                uint64     `json:"seed"`
	// RecordTTLSeconds is the DNS records' TTL, which the clients do not honour: each
	// keeps an answer for a TTL of its own.
	RecordTTLSeconds float64 `json:"recordTTLSeconds"`
	Window           string  `json:"window"`
	IntervalSeconds  float64 `json:"intervalSeconds"`
	Successes        int32   `json:"consecutiveSuccesses"`
	MinDrainSeconds  float64 `json:"minDrainSeconds"`
	// The fixed timers: one shorter than the longest client TTL, one longer; an
	// oracle's, the longest client TTL plus the time DNS takes to let go, which only
	// someone who knows every client could set; twice the record's TTL, a common
	// default; and a fixed 600s (full size only: zero leaves the row out).
	ShortTimerSeconds  float64 `json:"shortTimerSeconds"`
	LongTimerSeconds   float64 `json:"longTimerSeconds"`
	OracleTimerSeconds float64 `json:"oracleTimerSeconds"`
	FixedTimerSeconds  float64 `json:"fixedTimerSeconds"`
	// WarmUpSeconds is how long the clients send to cluster1 before the move.
	WarmUpSeconds float64 `json:"warmUpSeconds"`
	// KeepAliveMaxTimeSeconds is Traefik's keepAliveMaxTime on the entry point of the
	// row whose pooled clients are to move; the other entry points have none.
	KeepAliveMaxTimeSeconds float64 `json:"keepAliveMaxTimeSeconds"`
	// ResolverMinTTLSeconds is the cache-min-ttl of the Unbound that the resolver
	// rows' clients ask: it keeps every answer at least that long, whatever its TTL.
	ResolverMinTTLSeconds float64 `json:"resolverMinTTLSeconds"`
	// DNSLagSeconds is how late the zone's second authoritative server serves each
	// change of the first, as a secondary whose zone transfers come late.
	DNSLagSeconds float64 `json:"dnsLagSeconds"`
	// RefuseSeconds is how long the DNS engine holds back its first withdrawal of a
	// lagging row's address, which it refuses once while it marks the DNSEndpoint
	// read (external-dns tries again at its next interval, a minute by default).
	RefuseSeconds float64 `json:"refuseSeconds"`
	// LightClients are the light rows' further clients beside the heavy ones, whose
	// rates follow Zipf's law: the k-th sends every LightEverySeconds × k (so that
	// 1% of the traffic is somebody: the rare callers), with TTLs spread as the heavy
	// ones'.
	LightClients      int     `json:"lightClients"`
	LightEverySeconds float64 `json:"lightEverySeconds"`
	// JVMCacheSeconds is the JVM rows' address cache (networkaddress.cache.ttl): the
	// JVM's default, 30s, at full size.
	JVMCacheSeconds int `json:"jvmCacheSeconds"`
	// EngineIntervalSeconds is the interval of the slow engine row's external-dns
	// engine, which runs its passes only then (no --events): external-dns's default
	// of one minute at full size.
	EngineIntervalSeconds float64 `json:"engineIntervalSeconds"`
	// Production are the production-cadence rows' pipelines and policies: agents that
	// scrape every 15s or 30s and send within 5s, windows of four scrapes, checks every
	// 30s; and the README's own policy.
	Production []cadence `json:"production"`
}

// cadence is a row's own metrics pipeline and policy timings.
type cadence struct {
	Name                string  `json:"name"`
	ScrapeSeconds       float64 `json:"scrapeSeconds"`
	SendDeadlineSeconds float64 `json:"sendDeadlineSeconds"`
	Window              string  `json:"window"`
	IntervalSeconds     float64 `json:"intervalSeconds"`
	Successes           int32   `json:"consecutiveSuccesses"`
	MinDrainSeconds     float64 `json:"minDrainSeconds"`
	MaxPercent          float64 `json:"maxPercent"`
}

// pipelineDelay is what the pipeline and the policy take by themselves to see a
// drain done: a window of four scrapes, then consecutiveSuccesses checks.
func (c cadence) pipelineDelay() time.Duration {
	window, err := time.ParseDuration(c.Window)
	if err != nil {
		panic(err)
	}
	return window + time.Duration(c.Successes)*seconds(c.IntervalSeconds)
}

var (
	short = sizes{Mode: "short", Clients: 8, RequestEverySeconds: 0.5, ShortTTLSeconds: [2]float64{1, 3}, LongTTLSeconds: [2]float64{6, 6},
		LongClients: 1, Seed: 1, RecordTTLSeconds: 1, Window: "4s", IntervalSeconds: 1, Successes: 2, MinDrainSeconds: 3,
		ShortTimerSeconds: 3, LongTimerSeconds: 12, OracleTimerSeconds: 10, WarmUpSeconds: 5, KeepAliveMaxTimeSeconds: 3, ResolverMinTTLSeconds: 6, DNSLagSeconds: 5, RefuseSeconds: 5, LightClients: 100, LightEverySeconds: 0.5, JVMCacheSeconds: 3, EngineIntervalSeconds: 10,
		Production: []cadence{{Name: "tm1dns-scrape3", ScrapeSeconds: 3, SendDeadlineSeconds: 2, Window: "12s", IntervalSeconds: 3, Successes: 2, MinDrainSeconds: 3, MaxPercent: 1}}}
	// full is the demo's migration: 40 clients, TTLs of 2-20s and four of 40-60s, a 5s
	// window checked every 2s, 3 checks in a row, 30s minimum drain. Each client sends
	// a request a second (the demo's send five), as sixteen migrations run at once.
	// Traefik closes a pooled client's connection after 30s where the row bounds it;
	// Unbound keeps answers for at least 60s, as resolvers that raise short TTLs do.
	full = sizes{Mode: "full", Clients: 40, RequestEverySeconds: 1, ShortTTLSeconds: [2]float64{2, 20}, LongTTLSeconds: [2]float64{40, 60},
		LongClients: 4, Seed: 1, RecordTTLSeconds: 5, Window: "5s", IntervalSeconds: 2, Successes: 3, MinDrainSeconds: 30,
		ShortTimerSeconds: 30, LongTimerSeconds: 90, OracleTimerSeconds: 65, FixedTimerSeconds: 600, WarmUpSeconds: 10, KeepAliveMaxTimeSeconds: 30, ResolverMinTTLSeconds: 60, DNSLagSeconds: 45, RefuseSeconds: 60, LightClients: 1000, LightEverySeconds: 2, JVMCacheSeconds: 30, EngineIntervalSeconds: 60,
		Production: []cadence{
			{Name: "tm1dns-scrape15", ScrapeSeconds: 15, SendDeadlineSeconds: 5, Window: "60s", IntervalSeconds: 30, Successes: 3, MinDrainSeconds: 30, MaxPercent: 1},
			{Name: "tm1dns-scrape30", ScrapeSeconds: 30, SendDeadlineSeconds: 5, Window: "120s", IntervalSeconds: 30, Successes: 3, MinDrainSeconds: 30, MaxPercent: 1},
			// The README's first policy, on a pipeline that scrapes every 30s.
			{Name: "readme-scrape30", ScrapeSeconds: 30, SendDeadlineSeconds: 5, Window: "5m", IntervalSeconds: 30, Successes: 3, MinDrainSeconds: 120, MaxPercent: 5},
		}}
)

// FullSize reports whether these are the sizes of make bench.
func (sz sizes) FullSize() bool { return sz.Mode == full.Mode }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// follows says what the Gateway of a row follows.
type follows int

const (
	followsReal  follows = iota // the real Placement: the old Gateway goes at the move
	followsTimer                // a Placement that keeps cluster1 for a fixed time after the move
	followsProxy                // the policy's proxy Placement
)

// row is one way of moving a Gateway from cluster1 to cluster2, with its own Gateway,
// entry point, hostname, Placements and clients.
type row struct {
	name, setup string
	follows     follows
	port        int
	timer       time.Duration // followsTimer
	percent     float64       // followsProxy: the policy's maxPercent
	specDNS     bool          // followsProxy: the policy publishes DNS itself
	// The clients' world: pooled clients are Go's net/http clients, which resolve
	// only when they dial (clients.Config.Pooled), and keepAlive is Traefik's
	// keepAliveMaxTime on the row's entry point (zero: none, Traefik's default);
	// with a resolver, the clients ask that caching resolver in front of CoreDNS.
	// http2 pooled clients speak HTTP/2 (h2c), as many to a connection as a JVM
	// row's JVM has threads (clients.Config.HTTP2).
	// grpc clients are grpc-go applications (clients.GRPCFleet) on the row's
	// GRPCRoute, their DNS resolver asking CoreDNS.
	pooled    bool
	http2     bool
	grpc      bool
	keepAlive time.Duration
	resolver  *testbed.ResolverOptions
	// slowEngine: the row's DNSEndpoint is applied by an engine of its own that runs
	// its passes only every EngineIntervalSeconds, as external-dns does by default.
	slowEngine bool
	// light rows have LightClients more clients, of Zipf-spread rates.
	light bool
	// cadence, when set, is the row's own metrics pipeline (a job of the spokes'
	// agents at a production cadence) and its policy's timings.
	cadence *cadence
	// lagging: the zone has a second authoritative server that serves every change
	// DNSLagSeconds late, which the clients ask for every other lookup, and the policy
	// verifies withdrawals against both (or, with verifyMode ExternalDNS, against
	// neither).
	// The DNS engine also refuses its first withdrawal of a lagging row's address
	// for RefuseSeconds, while it marks the DNSEndpoint read.
	lagging    bool
	verifyMode trafficv1alpha1.DNSVerificationMode
	// jvm: the clients are JVMs (OpenJDK 17's HttpClient, its pool kept alive) whose
	// address cache keeps an answer jvmCache seconds (-1: for ever).
	jvm      bool
	jvmCache int
	// the clients, and what was seen of the row during the run
	clients                       population
	moved, withdrawn, under, gone time.Time
	// stalled is when the policy's row of cluster1 was first seen Stalled.
	stalled time.Time
	// lagging rows: when the lagging server let go of cluster1, and the policy's
	// dnsWithdrawalTime of cluster1, its drain clock's start.
	secondaryWithdrawn, clock time.Time
}

// honoursTTL reports whether the row's clients leave cluster1 as the TTL of the DNS
// its drain clock follows says: not pinned, behind no resolver that keeps answers
// longer than their TTL, and with the clock not started by external-dns's word while
// a server lags.
func (r *row) honoursTTL() bool {
	keeps := r.resolver != nil && (r.resolver.MinTTL > 0 || r.resolver.ServeExpired) || r.jvm
	return !r.pinned() && !keeps && !(r.lagging && r.verifyMode == trafficv1alpha1.DNSVerifyExternalDNS)
}

// job is the row's scrape job on the spokes' agents: its own at a production
// cadence, or the bed's every second.
func (r *row) job() string {
	if r.cadence != nil {
		return "gateway-" + r.name
	}
	return "gateway"
}

// clientsPerApp is how many clients make one application, sharing its JVM or its
// HTTP/2 connection: ten (four in the small case).
func clientsPerApp(sz sizes) int { return min(10, max(1, sz.Clients/2)) }

// population is a row's clients: Go's (clients.Fleet) or JVMs (clients.JVMFleet).
type population interface {
	Start() error
	Halt()
	Counts() clients.Counts
	Bound() map[netip.Addr]int
}

// pinned reports whether the row's clients never leave cluster1: pooled, on an entry
// point that keeps connections for ever, or JVMs that cache an answer for ever. Their
// share of cluster1 never falls; a timer's removal fails them, and a policy's drain
// stalls.
func (r *row) pinned() bool {
	return (r.pooled || r.grpc) && r.keepAlive == 0 || r.jvm && r.jvmCache < 0
}

// done reports whether the run saw all it waits for of the row: DNS's withdrawal of
// cluster1 and the old Gateway's removal, and the clients off cluster1; for pinned
// clients, the timer's removal, or the policy's report that the drain stalled.
func (r *row) done() bool {
	switch {
	case r.pinned() && r.follows == followsProxy:
		return !r.withdrawn.IsZero() && !r.stalled.IsZero()
	case r.pinned():
		return !r.withdrawn.IsZero() && !r.gone.IsZero()
	case r.lagging && (r.secondaryWithdrawn.IsZero() || r.clock.IsZero()):
		return false
	}
	return !r.withdrawn.IsZero() && !r.under.IsZero() && !r.gone.IsZero()
}

func (r *row) hostname() string { return r.name + "." + strings.TrimSuffix(dnsZone, ".") }
func (r *row) gateway() string  { return "gw-" + r.name }

// workloadPlacement is the Placement the row's ManifestWorkReplicaSet follows.
func (r *row) workloadPlacement() string {
	switch r.follows {
	case followsTimer:
		return r.name + "-timer"
	case followsProxy:
		return r.name + "-proxy"
	}
	return r.name
}

// rows are the strategies, each on an entry point of its own: Traefik counts each
// row's requests apart.
func rows(sz sizes) []*row {
	minTTL := seconds(sz.ResolverMinTTLSeconds)
	unboundDefaults := testbed.ResolverOptions{Kind: testbed.Unbound}
	unboundMinTTL := testbed.ResolverOptions{Kind: testbed.Unbound, MinTTL: minTTL}
	unboundStale := testbed.ResolverOptions{Kind: testbed.Unbound, ServeExpired: true}
	dnsmasqMinTTL := testbed.ResolverOptions{Kind: testbed.Dnsmasq, MinTTL: minTTL}
	policy := fmt.Sprintf("trafficShare under %%g%%%% on a %s window, checked every %gs, %d checks in a row, minDrainDuration %gs",
		sz.Window, sz.IntervalSeconds, sz.Successes, sz.MinDrainSeconds)
	rs := []*row{
		{name: "noproxy", follows: followsReal, setup: "no proxy: the Gateway follows the real Placement, and goes at the move"},
		{name: "timershort", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds),
			setup: fmt.Sprintf("fixed timer: the old Gateway goes %gs after the move (shorter than the longest client TTL)", sz.ShortTimerSeconds)},
		{name: "timerlong", follows: followsTimer, timer: seconds(sz.LongTimerSeconds),
			setup: fmt.Sprintf("fixed timer: the old Gateway goes %gs after the move (longer than the longest client TTL)", sz.LongTimerSeconds)},
		{name: "timer-oracle", follows: followsTimer, timer: seconds(sz.OracleTimerSeconds),
			setup: fmt.Sprintf("oracle timer: %gs, the longest client TTL plus the time DNS takes to let go", sz.OracleTimerSeconds)},
		{name: "timer-2ttl", follows: followsTimer, timer: seconds(2 * sz.RecordTTLSeconds),
			setup: fmt.Sprintf("timer of twice the record's TTL (%gs), a common default", 2*sz.RecordTTLSeconds)},
		{name: "tm5", follows: followsProxy, percent: 5, setup: "traffic-migration: the proxy keeps cluster1 until " + fmt.Sprintf(policy, 5.0)},
		{name: "tm1", follows: followsProxy, percent: 1, setup: "traffic-migration: the proxy keeps cluster1 until " + fmt.Sprintf(policy, 1.0)},
		{name: "tm1dns", follows: followsProxy, percent: 1, specDNS: true,
			setup: "traffic-migration with spec.dns: the manager publishes DNS, and minDrainDuration counts from DNS's withdrawal; " + fmt.Sprintf(policy, 1.0)},
		// The worlds of users' clients: pooled connections, caching resolvers
		// (Unbound and dnsmasq, as Debian packages them).
		{name: "tm1dns-pinned", follows: followsProxy, percent: 1, specDNS: true, pooled: true,
			setup: "traffic-migration with spec.dns, pooled clients (Go net/http, default keep-alive: they resolve only when they dial), Traefik without keepAliveMaxTime: the drain is to be reported stalled; " + fmt.Sprintf(policy, 1.0)},
		{name: "tm1dns-pooled", follows: followsProxy, percent: 1, specDNS: true, pooled: true, keepAlive: seconds(sz.KeepAliveMaxTimeSeconds),
			setup: fmt.Sprintf("traffic-migration with spec.dns, pooled clients, Traefik keepAliveMaxTime %gs on the entry point; ", sz.KeepAliveMaxTimeSeconds) + fmt.Sprintf(policy, 1.0)},
		{name: "timer-pinned", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds), pooled: true,
			setup: fmt.Sprintf("fixed timer (%gs) with pooled clients, Traefik without keepAliveMaxTime", sz.ShortTimerSeconds)},
		{name: "tm1dns-h2-ka", follows: followsProxy, percent: 1, specDNS: true, pooled: true, http2: true, keepAlive: seconds(sz.KeepAliveMaxTimeSeconds),
			setup: fmt.Sprintf("traffic-migration with spec.dns, HTTP/2 clients (Go, h2c, several on one connection), Traefik keepAliveMaxTime %gs on the entry point (a GOAWAY); ", sz.KeepAliveMaxTimeSeconds) + fmt.Sprintf(policy, 1.0)},
		{name: "tm1dns-unbound", follows: followsProxy, percent: 1, specDNS: true, resolver: &unboundMinTTL,
			setup: fmt.Sprintf("traffic-migration with spec.dns, the clients asking %s in front of CoreDNS; ", unboundMinTTL) + fmt.Sprintf(policy, 1.0)},
		{name: "timer-unbound", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds), resolver: &unboundMinTTL,
			setup: fmt.Sprintf("fixed timer (%gs), the clients asking %s", sz.ShortTimerSeconds, unboundMinTTL)},
		{name: "tm1dns-ub-stale", follows: followsProxy, percent: 1, specDNS: true, resolver: &unboundStale,
			setup: fmt.Sprintf("traffic-migration with spec.dns, the clients asking %s (it answers from its cache after the TTL, and refreshes behind); ", unboundStale) + fmt.Sprintf(policy, 1.0)},
		{name: "tm1dns-dnsmasq", follows: followsProxy, percent: 1, specDNS: true, resolver: &dnsmasqMinTTL,
			setup: fmt.Sprintf("traffic-migration with spec.dns, the clients asking %s in front of CoreDNS; ", dnsmasqMinTTL) + fmt.Sprintf(policy, 1.0)},
		// DNS that lags: its drain clock starts when the last authoritative server let
		// go, or, by external-dns's word alone, before.
		{name: "tm1dns-lag", follows: followsProxy, percent: 1, specDNS: true, lagging: true,
			setup: fmt.Sprintf("traffic-migration with spec.dns, the DNS engine refusing the withdrawal once (applied %gs later, the DNSEndpoint marked read at once), the zone's second authoritative server %gs late (verify: Authoritative, both servers); ",
				sz.RefuseSeconds, sz.DNSLagSeconds) + fmt.Sprintf(policy, 1.0)},
		{name: "tm1dns-lag-edns", follows: followsProxy, percent: 1, specDNS: true, lagging: true, verifyMode: trafficv1alpha1.DNSVerifyExternalDNS,
			setup: "the same, with verify mode ExternalDNS: the drain clock starts when external-dns has read the change; " + fmt.Sprintf(policy, 1.0)},
	}
	// gRPC applications: grpc-go resolves again only when it loses its connection.
	rs = append(rs, &row{name: "tm1dns-grpc-ka", follows: followsProxy, percent: 1, specDNS: true, grpc: true, keepAlive: seconds(sz.KeepAliveMaxTimeSeconds),
		setup: fmt.Sprintf("traffic-migration with spec.dns, gRPC applications (grpc-go, its DNS resolver and pick_first; the backend without MAX_CONNECTION_AGE), Traefik keepAliveMaxTime %gs on the entry point (a GOAWAY); ", sz.KeepAliveMaxTimeSeconds) + fmt.Sprintf(policy, 1.0)})
	if sz.FullSize() {
		rs = append(rs, &row{name: "tm1dns-grpc", follows: followsProxy, percent: 1, specDNS: true, grpc: true,
			setup: "traffic-migration with spec.dns, gRPC applications (grpc-go), neither the backend nor Traefik bounding a connection: the drain is to be reported stalled; " + fmt.Sprintf(policy, 1.0)})
		// HTTP/2 on connections kept for ever: stalled, and a timer's removal fails them.
		rs = append(rs,
			&row{name: "tm1dns-h2", follows: followsProxy, percent: 1, specDNS: true, pooled: true, http2: true,
				setup: "traffic-migration with spec.dns, HTTP/2 clients (Go, h2c, several on one connection), Traefik without keepAliveMaxTime: the drain is to be reported stalled; " + fmt.Sprintf(policy, 1.0)},
			&row{name: "timer-h2", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds), pooled: true, http2: true,
				setup: fmt.Sprintf("fixed timer (%gs) with HTTP/2 clients, Traefik without keepAliveMaxTime", sz.ShortTimerSeconds)})
	}
	// DNS written by an engine that runs once a minute: each step of the switch
	// waits for its next pass.
	rs = append(rs, &row{name: "tm1dns-slowedns", follows: followsProxy, percent: 1, specDNS: true, slowEngine: true,
		setup: fmt.Sprintf("traffic-migration with spec.dns, its DNSEndpoint applied by an external-dns engine that runs every %gs and not on changes (external-dns's defaults); ", sz.EngineIntervalSeconds) + fmt.Sprintf(policy, 1.0)})
	// JVM applications: OpenJDK's HttpClient keeps its connections, and the JVM its
	// answers, whatever the record's TTL; on an entry point that closes connections
	// after keepAliveMaxTime, they move as their cache lets them.
	keepAlive := seconds(sz.KeepAliveMaxTimeSeconds)
	rs = append(rs,
		&row{name: "tm1dns-jvm", follows: followsProxy, percent: 1, specDNS: true, jvm: true, jvmCache: sz.JVMCacheSeconds, keepAlive: keepAlive,
			setup: fmt.Sprintf("traffic-migration with spec.dns, OpenJDK 17 clients (HttpClient, address cache %ds, the JVM's default), Traefik keepAliveMaxTime %gs; ", sz.JVMCacheSeconds, sz.KeepAliveMaxTimeSeconds) + fmt.Sprintf(policy, 1.0)},
		&row{name: "tm1dns-jvm-inf", follows: followsProxy, percent: 1, specDNS: true, jvm: true, jvmCache: -1, keepAlive: keepAlive,
			setup: fmt.Sprintf("traffic-migration with spec.dns, OpenJDK 17 clients caching answers for ever (networkaddress.cache.ttl=-1), Traefik keepAliveMaxTime %gs: the drain is to be reported stalled; ", sz.KeepAliveMaxTimeSeconds) + fmt.Sprintf(policy, 1.0)})
	if sz.FullSize() {
		rs = append(rs, &row{name: "timer-jvm", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds), jvm: true, jvmCache: sz.JVMCacheSeconds, keepAlive: keepAlive,
			setup: fmt.Sprintf("fixed timer (%gs), OpenJDK 17 clients (address cache %ds), Traefik keepAliveMaxTime %gs", sz.ShortTimerSeconds, sz.JVMCacheSeconds, sz.KeepAliveMaxTimeSeconds)})
	}
	// Beside the heavy clients, a thousand light ones: the traffic's last 1% is
	// somebody's.
	rs = append(rs, &row{name: "tm1dns-zipf", follows: followsProxy, percent: 1, specDNS: true, light: true,
		setup: fmt.Sprintf("traffic-migration with spec.dns, and %d light clients beside the heavy ones, the k-th sending every %gs × k; ", sz.LightClients, sz.LightEverySeconds) + fmt.Sprintf(policy, 1.0)})
	if sz.FullSize() {
		rs = append(rs, &row{name: "tm5dns-zipf", follows: followsProxy, percent: 5, specDNS: true, light: true,
			setup: fmt.Sprintf("the same at 5%%: traffic-migration with spec.dns, and %d light clients; ", sz.LightClients) + fmt.Sprintf(policy, 5.0)})
	}
	for _, c := range sz.Production {
		rs = append(rs, &row{name: c.Name, follows: followsProxy, percent: c.MaxPercent, specDNS: true, cadence: &c,
			setup: fmt.Sprintf("traffic-migration with spec.dns at a production cadence: the agents scrape every %gs and send within %gs; trafficShare under %g%% on a %s window, checked every %gs, %d checks in a row, minDrainDuration %gs",
				c.ScrapeSeconds, c.SendDeadlineSeconds, c.MaxPercent, c.Window, c.IntervalSeconds, c.Successes, c.MinDrainSeconds)})
	}
	if sz.FullSize() {
		// At full size only: the resolvers' defaults, and a timer behind dnsmasq.
		rs = append(rs,
			&row{name: "tm1dns-ub-dflt", follows: followsProxy, percent: 1, specDNS: true, resolver: &unboundDefaults,
				setup: fmt.Sprintf("traffic-migration with spec.dns, the clients asking %s in front of CoreDNS; ", unboundDefaults) + fmt.Sprintf(policy, 1.0)},
			&row{name: "timer-dnsmasq", follows: followsTimer, timer: seconds(sz.ShortTimerSeconds), resolver: &dnsmasqMinTTL,
				setup: fmt.Sprintf("fixed timer (%gs), the clients asking %s", sz.ShortTimerSeconds, dnsmasqMinTTL)})
	}
	if sz.FixedTimerSeconds > 0 {
		rs = append(rs, &row{name: "timer-600", follows: followsTimer, timer: seconds(sz.FixedTimerSeconds),
			setup: fmt.Sprintf("fixed timer of %gs, long enough for nearly any client", sz.FixedTimerSeconds)})
	}
	return rs
}

// TestStrategies moves a Gateway per row (rows) from cluster1 to cluster2, all at the
// same moment, each a different way or in a different world (caching clients, pooled
// ones with and without a bound on their connections' lifetime, clients behind
// caching resolvers, DNS that lags and refuses, metrics pipelines at a production
// cadence), each with the same seeded clients, and counts what they saw.
// Every row's DNS follows its real Placement on the same DNS software: the manager
// publishes it for the row with spec.dns, and for the others a follower does what a
// user's DNS automation does (see dnsFollower). The benchmark fails only when the
// harness cannot measure, when traffic-migration with spec.dns at 1% failed a
// request (that is the product's promise), when it removed cluster1 under pinned
// clients or did not report their drain stalled in time, or reported stalled a drain
// whose clients honour the TTL of the DNS its clock follows.
func TestStrategies(t *testing.T) {
	sz, outDir := short, t.TempDir()
	if os.Getenv(fullEnv) == "full" {
		sz, outDir = full, benchreport.RunDir(filepath.Join("..", "..", "bench", "results"), time.Now())
	}
	if v := os.Getenv(seedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
		sz.Seed = seed
	}
	// The report starts now, so that it records the machine's load before the run.
	rep := benchreport.New("traffic-migration strategies, "+sz.Mode+" mode",
		"Test bed: a real OCM hub and two klusterlets, a node per cluster (kubelet, containerd), Traefik programming the Gateways and serving every request, "+
			"a Prometheus agent per spoke remote-writing to the hub's Prometheus, traffic-migration's manager and agents as pods, CoreDNS written by external-dns's engine "+
			"and a second CoreDNS that serves its changes late, and Unbound in front of them for some clients.",
		sz, outDir)
	ctx := t.Context()
	rs := rows(sz)
	for i, r := range rs {
		r.port = testbed.TraefikWebPort + 1 + i
	}
	// The benchmark's own clients read often (every row, a few times a second): not
	// paced at client-go's default of 5 requests a second.
	hubCluster := *bed.Hub
	hubCluster.Config = fastConfig(bed.Hub.Config)
	h, err := fixture.NewFleet(&hubCluster)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			logPolicies(t, h, rs)
		}
	}()
	traefik := prepareSpokes(t, rs)
	dns, secondary := prepareHub(t, h, sz, rs)
	defer dns.Stop()
	defer secondary.Stop()
	// The resolver rows' clients ask a caching resolver in front of CoreDNS: one of
	// each kind and setting, shared by the rows that have it.
	resolvers := map[testbed.ResolverOptions]*testbed.Resolver{}
	for _, r := range rs {
		if r.resolver == nil || resolvers[*r.resolver] != nil {
			continue
		}
		res, err := bed.StartResolver(ctx, dns, *r.resolver)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Stop()
		resolvers[*r.resolver] = res
	}
	follower := startDNSFollower(t, h, traefik, seconds(sz.RecordTTLSeconds), rs)

	// Every row's name answers cluster1's Gateway before its clients start.
	cluster1IP := netip.MustParseAddr(traefik[cluster1].Address)
	cluster2IP := netip.MustParseAddr(traefik[cluster2].Address)
	for _, r := range rs {
		servers := []interface {
			Lookup(context.Context, string) ([]netip.Addr, error)
		}{dns}
		if r.lagging {
			servers = append(servers, secondary) // its clients ask it too
		}
		testbed.Eventually(t, 3*time.Minute, "CoreDNS answering "+r.hostname()+" with cluster1's Gateway", func(ctx context.Context) error {
			for _, server := range servers {
				got, err := server.Lookup(ctx, r.hostname())
				if err != nil {
					return err
				}
				if !slices.Equal(got, []netip.Addr{cluster1IP}) {
					return fmt.Errorf("CoreDNS answers %v", got)
				}
			}
			return nil
		})
	}
	// And Traefik on cluster1 routes it to the backend: the Gateway can be Programmed
	// a moment before its HTTPRoute is served.
	for _, r := range rs {
		url := "http://" + net.JoinHostPort(cluster1IP.String(), strconv.Itoa(r.port)) + "/"
		testbed.Eventually(t, time.Minute, "cluster1's Traefik serving "+r.hostname(), func(ctx context.Context) error {
			if r.grpc {
				_, err := clients.ServedGRPC(ctx, net.JoinHostPort(cluster1IP.String(), strconv.Itoa(r.port)), r.hostname())
				return err
			}
			return served(ctx, url, r.hostname())
		})
	}
	ttls := clients.TTLs(sz.Clients,
		clients.TTLRange{Min: seconds(sz.ShortTTLSeconds[0]), Max: seconds(sz.ShortTTLSeconds[1])},
		clients.TTLRange{Min: seconds(sz.LongTTLSeconds[0]), Max: seconds(sz.LongTTLSeconds[1])}, sz.LongClients)
	// The light clients' TTLs are spread as the heavy ones', with as large a share of
	// long ones.
	lightTTLs := clients.TTLs(sz.LightClients,
		clients.TTLRange{Min: seconds(sz.ShortTTLSeconds[0]), Max: seconds(sz.ShortTTLSeconds[1])},
		clients.TTLRange{Min: seconds(sz.LongTTLSeconds[0]), Max: seconds(sz.LongTTLSeconds[1])}, sz.LightClients*sz.LongClients/sz.Clients)
	for _, r := range rs {
		hostname := r.hostname() + "."
		asked := []*net.Resolver{dns.Resolver()}
		switch {
		case r.resolver != nil:
			asked = []*net.Resolver{resolvers[*r.resolver].Resolver()}
		case r.lagging:
			// Each lookup asks one of the zone's two servers, in turn, as a recursive
			// resolver spreads its queries over a zone's name servers.
			asked = append(asked, secondary.Resolver())
		}
		var lookups atomic.Uint64
		rowTTLs, everies := ttls, []time.Duration(nil)
		if r.light {
			rowTTLs, everies = append(slices.Clone(ttls), lightTTLs...), slices.Repeat([]time.Duration{seconds(sz.RequestEverySeconds)}, len(ttls))
			everies = append(everies, clients.ZipfEvery(sz.LightClients, seconds(sz.LightEverySeconds), 1)...)
		}
		lookup := func(ctx context.Context) ([]netip.Addr, error) {
			resolver := asked[int(lookups.Add(1)%uint64(len(asked)))]
			addrs, err := resolver.LookupNetIP(ctx, "ip4", hostname)
			for i := range addrs {
				addrs[i] = addrs[i].Unmap()
			}
			return addrs, err
		}
		if r.grpc {
			workers := clientsPerApp(sz)
			r.clients = clients.NewGRPCFleet(clients.GRPCConfig{Hostname: r.hostname(), Port: r.port, Nameserver: dns.Addr(),
				Apps: sz.Clients / workers, Workers: workers, Every: seconds(sz.RequestEverySeconds), Seed: sz.Seed})
			continue
		}
		if r.jvm {
			// As many threads as clients, in JVMs of ten (four in the small case).
			workers := clientsPerApp(sz)
			r.clients = clients.NewJVMFleet(clients.JVMConfig{Hostname: r.hostname(), Port: r.port, JVMs: sz.Clients / workers, Workers: workers,
				Every: seconds(sz.RequestEverySeconds), CacheTTL: r.jvmCache, Lookup: lookup,
				Clusters: map[string]netip.Addr{cluster1: cluster1IP, cluster2: cluster2IP}, Dir: t.TempDir(), Seed: sz.Seed})
			continue
		}
		r.clients = clients.NewFleet(clients.Config{Hostname: r.hostname(), TTLs: rowTTLs, Every: seconds(sz.RequestEverySeconds), Everies: everies, Port: r.port, Seed: sz.Seed,
			Pooled: r.pooled, HTTP2: r.http2, ConnShare: clientsPerApp(sz), Lookup: lookup})
	}
	for _, r := range rs {
		if err := r.clients.Start(); err != nil {
			t.Fatal(err)
		}
		defer r.clients.Halt()
	}
	warmedUp := time.Now().Add(seconds(sz.WarmUpSeconds))
	waitSteady(t, h, rs)
	testbed.EventuallyTrue(t, time.Until(warmedUp)+time.Minute, "the warm-up", func() bool { return time.Now().After(warmedUp) })
	for _, r := range rs {
		if c := r.clients.Counts(); c.ByCluster[cluster1] == 0 || c.Failed+c.Retried > 0 {
			t.Fatalf("%s before the move: %d served by cluster1, %d retried, %d failed: %v", r.name, c.ByCluster[cluster1], c.Retried, c.Failed, c.FailureSamples)
		}
	}

	// The removal estimates of the traffic-migration rows, through their drains.
	est := recordEstimates(ctx, h, rs)
	defer est.halt()

	// The move: every real Placement selects cluster2's region; a timer's Placement
	// selects both regions until its timer ends.
	for _, r := range rs {
		if r.follows == followsTimer {
			if err := h.SelectClusters(ctx, namespace, r.workloadPlacement(), nil, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.SelectClusters(ctx, namespace, r.name, map[string]string{regionLabel: regions[cluster2]}, time.Minute); err != nil {
			t.Fatal(err)
		}
		r.moved = time.Now()
	}
	timersCtx, stopTimers := context.WithCancel(ctx)
	var timers sync.WaitGroup
	defer func() {
		stopTimers()
		timers.Wait()
	}()
	for _, r := range rs {
		if r.follows != followsTimer {
			continue
		}
		timers.Go(func() {
			select {
			case <-timersCtx.Done():
				return
			case <-time.After(time.Until(r.moved.Add(r.timer))):
			}
			if err := h.SelectClusters(timersCtx, namespace, r.workloadPlacement(), map[string]string{regionLabel: regions[cluster2]}, time.Minute); err != nil {
				t.Errorf("%s: the timer's end: %v", r.name, err)
			}
		})
	}

	// Until every row's old Gateway is gone and no client holds cluster1's address:
	// when DNS let go of cluster1, when no client's next request was bound to it, and
	// when its Gateway went; for pinned clients, until the timer removed it or the
	// policy reported the drain stalled (see row.done).
	spoke1, err := gatewayclient.NewForConfig(fastConfig(bed.Spokes[cluster1].Config))
	if err != nil {
		t.Fatal(err)
	}
	longest := seconds(max(sz.LongTTLSeconds[1], sz.ShortTTLSeconds[1]))
	timeout := seconds(max(sz.LongTimerSeconds, sz.FixedTimerSeconds)) + 2*longest + 3*time.Minute
	lastLog := time.Now()
	// slowestRead is the longest pass of the harness over the rows. A moment is stamped
	// with the start of the pass that saw it: up to a pass before it happened (seen late
	// in that pass), or up to a pass and a poll after it.
	var slowestRead time.Duration
	testbed.Eventually(t, timeout, "every old Gateway gone and every client off cluster1", func(ctx context.Context) error {
		gws, err := spoke1.GatewayV1().Gateways(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		now := time.Now()
		defer func() { slowestRead = max(slowestRead, time.Since(now)) }()
		var waiting []string
		for _, r := range rs {
			if r.withdrawn.IsZero() {
				if got, err := dns.Lookup(ctx, r.hostname()); err == nil && !slices.Contains(got, cluster1IP) && slices.Contains(got, cluster2IP) {
					r.withdrawn = now
				}
			}
			// No client's next request is bound to cluster1 any more: none holds its
			// address in an answer that has not expired, or in a connection.
			holding := r.clients.Bound()[cluster1IP]
			if r.under.IsZero() && holding == 0 {
				r.under = now
			}
			if r.gone.IsZero() && !slices.ContainsFunc(gws.Items, func(g gatewayv1.Gateway) bool { return g.Name == r.gateway() }) {
				r.gone = now
			}
			if r.lagging && r.secondaryWithdrawn.IsZero() {
				if got, err := secondary.Lookup(ctx, r.hostname()); err == nil && !slices.Contains(got, cluster1IP) && slices.Contains(got, cluster2IP) {
					r.secondaryWithdrawn = now
				}
			}
			if r.follows == followsProxy && r.specDNS && (r.stalled.IsZero() || r.lagging && r.clock.IsZero()) {
				p, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, r.name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if row := fixture.PolicyRow(p, cluster1); row != nil {
					if row.Stalled && r.stalled.IsZero() {
						r.stalled = now
					}
					if row.DNSWithdrawalTime != nil && r.clock.IsZero() {
						r.clock = row.DNSWithdrawalTime.Time
					}
				}
			}
			if !r.done() {
				state := fmt.Sprintf("DNS withdrawn %t, %d clients on cluster1, Gateway gone %t", !r.withdrawn.IsZero(), holding, !r.gone.IsZero())
				if r.pinned() && r.follows == followsProxy {
					state += fmt.Sprintf(", stalled %t", !r.stalled.IsZero())
				}
				if r.lagging {
					state += fmt.Sprintf(", lagging server withdrawn %t, clock started %t", !r.secondaryWithdrawn.IsZero(), !r.clock.IsZero())
				}
				waiting = append(waiting, r.name+" ("+state+")")
			}
		}
		if len(waiting) > 0 {
			err := fmt.Errorf("waiting for %s", strings.Join(waiting, "; "))
			if time.Since(lastLog) > 10*time.Second {
				t.Logf("%.0fs after the move: %v", time.Since(rs[0].moved).Seconds(), err)
				lastLog = time.Now()
			}
			return err
		}
		return nil
	})
	// A moment more, so that requests in flight at the end are counted.
	settled := time.Now().Add(seconds(2 * sz.RequestEverySeconds))
	testbed.EventuallyTrue(t, time.Minute, "the settling", func() bool { return time.Now().After(settled) })
	for _, r := range rs {
		r.clients.Halt()
	}
	follower.stop()
	est.halt()

	tbl := report(rep, sz, rs, longest)
	t.Log("\n" + tbl.Markdown())
	t.Log("\n" + reportEstimates(rep, rs, est).Markdown())
	for _, r := range rs {
		if c := r.clients.Counts(); len(c.FailureSamples) > 0 {
			t.Logf("%s: the first failures: %s", r.name, strings.Join(c.FailureSamples, "; "))
		}
		if c := r.clients.Counts(); len(c.RetrySamples) > 0 {
			t.Logf("%s: the first retried first attempts: %s", r.name, strings.Join(c.RetrySamples, "; "))
		}
	}
	if err := rep.Write("strategies.json", "strategies.md"); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		// Its promise is to the heavy clients' worlds; beside light clients, 1% of the
		// traffic may be some rare callers', and what they met is only reported.
		if c := r.clients.Counts(); r.specDNS && r.percent == 1 && !r.light && c.Retried+c.Failed > 0 {
			t.Errorf("%s: %d requests failed at the first attempt (%d after a retry): %v; retried: %v", r.name, c.Retried+c.Failed, c.Failed, c.FailureSamples, c.RetrySamples)
		}
		// A drain that does not move says so; one that moves never does.
		if r.pinned() && r.follows == followsProxy && !r.gone.IsZero() {
			t.Errorf("%s: cluster1 was removed although its pinned clients never left it", r.name)
		}
		// The authoritative clock never starts before the last server let go.
		if d := r.clock.Sub(r.secondaryWithdrawn); r.lagging && r.verifyMode != trafficv1alpha1.DNSVerifyExternalDNS && d < -clockSlack {
			t.Errorf("%s: cluster1's drain clock started %.1fs before the lagging server let go of it", r.name, -d.Seconds())
		}
		// Pinned clients' traffic never falls: their drain is reported stalled as soon
		// as the rule allows. Clients that honour the TTL, asking DNS that the drain
		// clock follows, move in time: theirs never is. Behind a resolver that raises
		// the TTL, or with the clock started by external-dns's word while a server
		// lags, a stall is the rule seeing what it is there for, and only reported.
		// The harness stamped both moments: the gap between them may be up to two of its
		// passes longer than it was (the poll is in stallBound's 5 s).
		if d := r.stalled.Sub(r.withdrawn); r.pinned() && !r.stalled.IsZero() && d > stallBound(sz)+2*slowestRead {
			t.Errorf("%s: the drain was reported stalled %.1fs after DNS's withdrawal, later than %s and two of the harness's slowest passes over the rows (%s each)",
				r.name, d.Seconds(), stallBound(sz), slowestRead.Round(time.Millisecond))
		}
		if r.honoursTTL() && !r.stalled.IsZero() {
			t.Errorf("%s: the drain was reported stalled %.0fs after DNS's withdrawal although its clients moved", r.name, r.stalled.Sub(r.withdrawn).Seconds())
		}
	}
}

// stallBound is how soon after DNS's withdrawal a drain whose traffic does not fall
// is to be reported stalled: the manager's rule (the record's TTL plus 60s, or four
// windows, whichever is longer), then a check and its status write, and the harness's
// own reading of DNS and of the status.
func stallBound(sz sizes) time.Duration {
	window, err := time.ParseDuration(sz.Window)
	if err != nil {
		panic(err)
	}
	return max(seconds(sz.RecordTTLSeconds)+time.Minute, 4*window) + 2*seconds(sz.IntervalSeconds) + 5*time.Second
}

// clockSlack is how early dnsWithdrawalTime may seem against the moment the harness
// saw the lagging server let go, with neither early: the status keeps whole seconds
// (up to 1s earlier than the manager's moment), and the harness sees the server's
// answer up to a poll (200ms) and a lookup late.
const clockSlack = 2 * time.Second

// fastConfig is a copy of cfg whose client is not rate-limited.
func fastConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	return c
}

// logPolicies logs the traffic-migration rows' policies' status, to explain a failure.
func logPolicies(t *testing.T, h *fixture.Fleet, rs []*row) {
	for _, r := range rs {
		if r.follows != followsProxy {
			continue
		}
		p, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(context.Background(), r.name, metav1.GetOptions{})
		if err != nil {
			t.Logf("policy %s: %v", r.name, err)
			continue
		}
		t.Logf("policy %s:\n%s", r.name, fixture.PolicyStatus(p))
	}
}

// served sends a request for hostname to url and checks that a backend answered it.
func served(ctx context.Context, url, hostname string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Host = hostname
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(clients.ServedByHeader) == "" {
		return fmt.Errorf("%s answered %s, %s %q", url, resp.Status, clients.ServedByHeader, resp.Header.Get(clients.ServedByHeader))
	}
	return nil
}

// report adds each row's figures to the report, and the table of them side by side.
func report(rep *benchreport.Report, sz sizes, rs []*row, longest time.Duration) benchreport.Table {
	const b = "0. Strategies"
	tbl := benchreport.Table{
		Title: fmt.Sprintf("Moving a Gateway from cluster1 to cluster2, %d ways, on real clients", len(rs)),
		Intro: fmt.Sprintf("Each row: its own Gateway, hostname and %d clients, the same for every row (seed %d): a request every %gs each, "+
			"each keeping its DNS answer for a TTL of its own whatever the record's (%gs): %s, and %s for %d of them. "+
			"A client whose request fails on a connection error, or meets Traefik with no route for its name, resolves again and retries once. "+
			"Pooled clients are Go's net/http clients with default keep-alive: they resolve only when they dial, and retry on the connection they have. "+
			"The -zipf rows add %d light clients, the k-th sending every %gs × k, TTLs spread alike. "+
			"Every row's DNS follows its real Placement. Moved at the same moment; measured on %s.",
			sz.Clients, sz.Seed, sz.RequestEverySeconds, sz.RecordTTLSeconds,
			clients.TTLRange{Min: seconds(sz.ShortTTLSeconds[0]), Max: seconds(sz.ShortTTLSeconds[1])},
			clients.TTLRange{Min: seconds(sz.LongTTLSeconds[0]), Max: seconds(sz.LongTTLSeconds[1])}, sz.LongClients,
			sz.LightClients, sz.LightEverySeconds, rep.Machine),
		Header: []string{"strategy", "setup", "move to DNS withdrawal (s)", "move to removal (s)", "(removal − withdrawal) / longest TTL",
			"(removal − withdrawal) / realized floor", "requests: served / retried / failed", "failed at the first attempt", "idle after the last client left (s)",
			"reported stalled, after DNS withdrawal (s)", "drain clock − the last server's withdrawal (s)"},
	}
	end := time.Now()
	for _, r := range rs {
		c := r.clients.Counts()
		withdrawal := r.withdrawn.Sub(r.moved)
		first := c.Retried + c.Failed
		rep.Add(b, r.name, "time from the move to DNS's withdrawal of cluster1", withdrawal.Seconds(), "s", "")
		removal, floor, realized, idle, stalled, clock := fmt.Sprintf("not within %.0f", end.Sub(r.moved).Seconds()), "-", "-", "-", "-", "-"
		if !r.gone.IsZero() {
			d := r.gone.Sub(r.moved)
			f := (d - withdrawal).Seconds() / longest.Seconds()
			removal, floor = fmt.Sprintf("%.1f", d.Seconds()), fmt.Sprintf("%.2f", f)
			rep.Add(b, r.name, "time from the move to the removal of the old Gateway", d.Seconds(), "s", "")
			rep.Add(b, r.name, "(removal − DNS withdrawal) / longest client TTL", f, "", "")
		}
		if !r.gone.IsZero() && !r.under.IsZero() {
			d := max(0, r.gone.Sub(r.under))
			idle = fmt.Sprintf("%.1f", d.Seconds())
			rep.Add(b, r.name, "idle time: old Gateway kept after no client's next request was bound to it", d.Seconds(), "s", "")
			// The floor this run reached: from DNS's withdrawal to the moment no client
			// held cluster1's address any more, which the harness knows and no
			// strategy does.
			// A removal before the withdrawal (no proxy) has no such ratio.
			if f := r.under.Sub(r.withdrawn); f > 0 && r.gone.After(r.withdrawn) {
				ratio := r.gone.Sub(r.withdrawn).Seconds() / f.Seconds()
				realized = fmt.Sprintf("%.2f", ratio)
				rep.Add(b, r.name, "(removal − DNS withdrawal) / (clients off cluster1 − DNS withdrawal)", ratio, "", "")
				// At a production cadence the pipeline and the policy take time of
				// their own to see any drain done; the goal is on the rest.
				if c := r.cadence; c != nil {
					net := (r.gone.Sub(r.withdrawn) - c.pipelineDelay()).Seconds() / f.Seconds()
					realized += fmt.Sprintf(" (%.2f less the pipeline's %.0fs)", net, c.pipelineDelay().Seconds())
					rep.Add(b, r.name, "(removal − DNS withdrawal − the pipeline's delay: a window and consecutiveSuccesses intervals) / (clients off cluster1 − DNS withdrawal)", net, "", "≤ 1.5")
				}
			}
		}
		if !r.stalled.IsZero() {
			d := r.stalled.Sub(r.withdrawn)
			stalled = fmt.Sprintf("%.1f", d.Seconds())
			goal := ""
			if r.pinned() {
				goal = fmt.Sprintf("≤ %g s", stallBound(sz).Seconds())
			}
			rep.Add(b, r.name, "time from DNS's withdrawal to the drain reported stalled", d.Seconds(), "s", goal)
		}
		if r.lagging && !r.clock.IsZero() && !r.secondaryWithdrawn.IsZero() {
			d := r.clock.Sub(r.secondaryWithdrawn)
			clock = fmt.Sprintf("%+.1f", d.Seconds())
			goal := fmt.Sprintf("≤ %g s (an interval and 2s; ≥ %g s, see clockSlack)", sz.IntervalSeconds+2, -clockSlack.Seconds())
			if r.verifyMode == trafficv1alpha1.DNSVerifyExternalDNS {
				goal = "" // today's rule, for comparison
			}
			rep.Add(b, r.name, "dnsWithdrawalTime − the moment the last authoritative server let go", d.Seconds(), "s", goal)
		}
		rep.Add(b, r.name, "requests served at the first attempt", float64(c.Served), "", "")
		rep.Add(b, r.name, "requests served after a retry", float64(c.Retried), "", "")
		rep.Add(b, r.name, "requests failed after a retry", float64(c.Failed), "", "")
		rep.Add(b, r.name, "requests failed at the first attempt", float64(first), "", "0 for traffic-migration at 1%")
		tbl.Rows = append(tbl.Rows, []string{r.name, r.setup, fmt.Sprintf("%.1f", withdrawal.Seconds()), removal,
			floor, realized, fmt.Sprintf("%d / %d / %d", c.Served, c.Retried, c.Failed), fmt.Sprint(first), idle, stalled, clock})
	}
	var zero, some []string
	for _, r := range rs {
		if c := r.clients.Counts(); c.Retried+c.Failed == 0 {
			zero = append(zero, r.name)
		} else {
			some = append(some, r.name)
		}
	}
	tbl.Intro += fmt.Sprintf("\n\nNo request failed at the first attempt: %s. Some did: %s.", orNone(zero), orNone(some))
	rep.Tables = append(rep.Tables, tbl)
	return tbl
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// prepareSpokes does what each spoke's platform team does: Traefik with an entry point
// per row, the rows' namespace and backend, and the metrics pipeline. It returns
// Traefik by cluster.
func prepareSpokes(t *testing.T, rs []*row) map[string]*testbed.Traefik {
	ctx := t.Context()
	entryPoints, keepAlive := map[string]int{}, map[string]time.Duration{}
	var jobs []testbed.MetricsJob
	for _, r := range rs {
		entryPoints[r.name] = r.port
		if r.keepAlive > 0 {
			keepAlive[r.name] = r.keepAlive
		}
		if r.cadence != nil {
			jobs = append(jobs, testbed.MetricsJob{Name: r.job(), ScrapeInterval: seconds(r.cadence.ScrapeSeconds),
				BatchSendDeadline: seconds(r.cadence.SendDeadlineSeconds), KeepLabel: "entrypoint", KeepRegex: regexp.QuoteMeta(r.name)})
		}
	}
	traefik := map[string]*testbed.Traefik{}
	for _, c := range []string{cluster1, cluster2} {
		tr, err := bed.PrepareGatewaySpoke(ctx, c, testbed.GatewaySpokeOptions{Traefik: testbed.TraefikOptions{EntryPoints: entryPoints, KeepAliveMaxTime: keepAlive},
			Namespace: namespace, Backend: backendName, ClusterLabels: map[string]string{clusterLabel: c}, MetricsJobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		traefik[c] = tr
	}
	return traefik
}

// prepareHub installs traffic-migration from manifests/ and enables it with
// clusteradm, and creates what the fleet administrator has before the move: a
// ManagedClusterSet of both clusters bound to the namespace, each row's real
// Placement on cluster1's region (and a timer row's own Placement), the policies of
// the traffic-migration rows, and each row's ManifestWorkReplicaSet of its Gateway
// and HTTPRoute.
func prepareHub(t *testing.T, h *fixture.Fleet, sz sizes, rs []*row) (*testbed.DNS, *testbed.SecondaryDNS) {
	ctx := t.Context()
	if err := testbed.InstallDNSEndpointCRD(ctx, bed.Hub.Config); err != nil {
		t.Fatal(err)
	}
	// The zone's DNS first: the policies with spec.dns ask its CoreDNS whether it let
	// go of a cluster (spec.dns.verify.nameservers).
	// Its engine refuses its first withdrawal of a lagging row's address for a while,
	// and marks the DNSEndpoint read all the same.
	// The slow engine rows' DNSEndpoints (the manager labels each with its policy)
	// are another engine's, which shares the zone.
	var lagging, slow []string
	for _, r := range rs {
		if r.lagging {
			lagging = append(lagging, regexp.QuoteMeta(r.hostname()))
		}
		if r.slowEngine {
			slow = append(slow, r.name)
		}
	}
	var notSlow, onlySlow string
	if len(slow) > 0 {
		notSlow = fmt.Sprintf("%s notin (%s)", trafficv1alpha1.PolicyLabel, strings.Join(slow, ","))
		onlySlow = fmt.Sprintf("%s in (%s)", trafficv1alpha1.PolicyLabel, strings.Join(slow, ","))
	}
	dns, err := bed.StartDNS(ctx, testbed.DNSOptions{Zones: []string{dnsZone}, Namespace: namespace, OwnerID: "strategies", LabelFilter: notSlow,
		RefuseWithdrawalOnce: "^(" + strings.Join(lagging, "|") + ")$", RefuseFor: seconds(sz.RefuseSeconds)})
	if err != nil {
		t.Fatal(err)
	}
	if len(slow) > 0 {
		if err := dns.StartEngine(ctx, bed, testbed.DNSOptions{Namespace: namespace, OwnerID: "strategies-slow", LabelFilter: onlySlow,
			Interval: seconds(sz.EngineIntervalSeconds), NoEvents: true}); err != nil {
			t.Fatal(err)
		}
	}
	// And its second authoritative server, which serves every change DNSLagSeconds
	// late, for the lagging rows.
	secondary, err := bed.StartSecondaryDNS(ctx, dns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secondary.Follow(ctx, seconds(sz.DNSLagSeconds)))
	manifests, err := testbed.ManifestsDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testbed.ApplyKustomization(ctx, bed.Hub.Config, manifests,
		// The manager may ask the bed's CoreDNS, at a private address.
		testbed.ManagerArgs("--dns-nameserver-allowlist="+bed.ListenHost())); err != nil {
		t.Fatalf("install traffic-migration: %v", err)
	}
	for _, name := range []string{managerDeployment, "traffic-migration-addon-manager"} {
		if err := bed.Hub.WaitDeploymentAvailable(ctx, managerNamespace, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bed.Clusteradm(ctx, "addon", "enable", "--names", trafficv1alpha1.AddonName, "--clusters", cluster1+","+cluster2); err != nil {
		t.Fatal(err)
	}
	for cluster, region := range regions {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := h.Cluster.ClusterV1().ManagedClusters().Patch(ctx, cluster, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	withRegion := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: regionLabel, Operator: metav1.LabelSelectorOpExists}}}
	if err := fixture.CreateClusterSet(ctx, h.Cluster, clusterSetName, withRegion); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := fixture.BindClusterSet(ctx, h.Cluster, namespace, clusterSetName); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}, StringData: map[string]string{"url": bed.Prometheus.URL}}
	if _, err := h.Kube.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	onCluster1 := map[string]string{regionLabel: regions[cluster1]}
	for _, r := range rs {
		if err := h.CreatePlacement(ctx, namespace, r.name, onCluster1); err != nil {
			t.Fatal(err)
		}
		if r.follows == followsTimer {
			if err := h.CreatePlacement(ctx, namespace, r.workloadPlacement(), onCluster1); err != nil {
				t.Fatal(err)
			}
		}
		if r.follows == followsProxy {
			nameservers := []string{dns.Addr()}
			if r.lagging {
				nameservers = append(nameservers, secondary.Addr())
			}
			if _, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Create(ctx, policy(sz, r, nameservers), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		objects := []runtime.Object{fixture.TraefikGatewayOnPort(namespace, r.gateway(), r.hostname(), r.port),
			fixture.BackendRouteObject(namespace, "route-"+r.name, r.gateway(), r.hostname(), backendName)}
		if r.grpc {
			objects = append(objects, fixture.BackendGRPCRouteObject(namespace, "grpc-"+r.name, r.gateway(), r.hostname(), backendName))
		}
		mwrs, err := fixture.ManifestWorkReplicaSetOf(namespace, r.name, r.workloadPlacement(), objects...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Work.WorkV1alpha1().ManifestWorkReplicaSets(namespace).Create(ctx, mwrs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return dns, secondary
}

// policy is the TrafficMigrationPolicy of a traffic-migration row: trafficShare on
// Traefik's counter of the row's entry point, from the row's scrape job, with the
// run's timings or the row's cadence; and with spec.dns, nameservers (the bed's
// CoreDNS, and for a lagging row its secondary) the zone's authoritative servers that
// confirm a withdrawal.
func policy(sz sizes, r *row, nameservers []string) *trafficv1alpha1.TrafficMigrationPolicy {
	window, interval, successes, minDrain := sz.Window, sz.IntervalSeconds, sz.Successes, sz.MinDrainSeconds
	if c := r.cadence; c != nil {
		window, interval, successes, minDrain = c.Window, c.IntervalSeconds, c.Successes, c.MinDrainSeconds
	}
	p := &trafficv1alpha1.TrafficMigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: namespace},
		Spec: trafficv1alpha1.TrafficMigrationPolicySpec{
			PlacementRef:     trafficv1alpha1.PlacementReference{Name: r.name},
			TargetRef:        trafficv1alpha1.GatewayReference{Group: gatewayv1.GroupName, Kind: "Gateway", Name: r.gateway(), Namespace: namespace},
			PrometheusSecret: trafficv1alpha1.SecretReference{Name: secretName},
			TrafficShare: &trafficv1alpha1.TrafficShare{
				Metric: requestsMetric, Selector: fmt.Sprintf("entrypoint=%q,job=%q", r.name, r.job()), ClusterLabel: clusterLabel,
				Window: window, MaxPercent: r.percent,
			},
			Interval:             &metav1.Duration{Duration: seconds(interval)},
			ConsecutiveSuccesses: successes,
			MinDrainDuration:     &metav1.Duration{Duration: seconds(minDrain)},
		},
	}
	if r.specDNS {
		p.Spec.DNS = &trafficv1alpha1.DNSPublishing{
			Hostnames: []trafficv1alpha1.Hostname{trafficv1alpha1.Hostname(r.hostname())},
			TTL:       &metav1.Duration{Duration: seconds(sz.RecordTTLSeconds)},
			Verify:    &trafficv1alpha1.DNSVerification{Mode: r.verifyMode},
		}
		for _, ns := range nameservers {
			if r.verifyMode == trafficv1alpha1.DNSVerifyExternalDNS {
				break // asks no name server
			}
			p.Spec.DNS.Verify.Nameservers = append(p.Spec.DNS.Verify.Nameservers, trafficv1alpha1.Nameserver(ns))
		}
	}
	return p
}

// waitSteady waits until the traffic-migration rows' policies are Ready with cluster1
// Active, which needs the agents' reports.
func waitSteady(t *testing.T, h *fixture.Fleet, rs []*row) {
	for _, r := range rs {
		if r.follows != followsProxy {
			continue
		}
		testbed.Eventually(t, 3*time.Minute, "policy "+r.name+" Ready with cluster1 Active", func(ctx context.Context) error {
			p, err := h.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, r.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if row := fixture.PolicyRow(p, cluster1); row == nil || row.Phase != trafficv1alpha1.ClusterActive || len(p.Status.Clusters) != 1 {
				return fmt.Errorf("status:\n%s", fixture.PolicyStatus(p))
			}
			return nil
		})
	}
}
