// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package clients

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPCConfig is the gRPC applications of a GRPCFleet.
type GRPCConfig struct {
	// Hostname is the name the applications call, and Port the gateway's port.
	Hostname string
	Port     int
	// Nameserver is the host:port of the DNS server that grpc-go's own DNS resolver
	// asks: the target's authority, dns://<Nameserver>/<Hostname>:<Port>.
	Nameserver string
	// Apps is how many applications run, each with one ClientConn (pick_first: one
	// connection, its calls multiplexed) and Workers goroutines that each call the
	// health service (grpc.health.v1.Health/Check) every Every.
	Apps, Workers int
	Every         time.Duration
	Seed          uint64
}

// GRPCFleet runs gRPC applications as clients: grpc-go's ClientConn with its DNS
// resolver and its pick_first connection, as services call each other. grpc-go
// resolves the name when the ClientConn starts and again only when a connection is
// lost (a GOAWAY, or an error), at most every 30 s by default; a server or gateway
// that never closes the connection (no MAX_CONNECTION_AGE, no keepAliveMaxTime)
// keeps the application on it whatever DNS answers. A call that fails with
// Unavailable, or meets the gateway with no route for it (Unimplemented, from its
// 404), is retried once; they are counted as Fleet counts Go clients.
type GRPCFleet struct {
	cfg   GRPCConfig
	apps  []*grpcApp
	stats *clientStats
	stop  chan struct{}
	wg    sync.WaitGroup
}

// grpcApp is one application: its ClientConn, and the address its connection dialed.
type grpcApp struct {
	conn   *grpc.ClientConn
	health healthpb.HealthClient

	mu     sync.Mutex
	dialed netip.Addr
}

// NewGRPCFleet makes the applications of cfg; Start connects them.
func NewGRPCFleet(cfg GRPCConfig) *GRPCFleet {
	return &GRPCFleet{cfg: cfg, stats: &clientStats{byCluster: map[string]int64{}}, stop: make(chan struct{})}
}

// Start makes each application's ClientConn and starts its workers at random moments
// of their first interval. A ClientConn resolves and connects at its first call.
func (f *GRPCFleet) Start() error {
	target := "dns://" + f.cfg.Nameserver + "/" + net.JoinHostPort(f.cfg.Hostname, strconv.Itoa(f.cfg.Port))
	rng := rand.New(rand.NewPCG(f.cfg.Seed, f.cfg.Seed^0x97c))
	for range f.cfg.Apps {
		app := &grpcApp{}
		conn, err := grpc.NewClient(target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(app.dial))
		if err != nil {
			f.Halt()
			return fmt.Errorf("gRPC client of %s: %w", target, err)
		}
		app.conn, app.health = conn, healthpb.NewHealthClient(conn)
		f.apps = append(f.apps, app)
	}
	for i, app := range f.apps {
		for w := range f.cfg.Workers {
			id := i*f.cfg.Workers + w + 1
			offset := time.Duration(rng.Int64N(int64(f.cfg.Every)))
			f.wg.Go(func() {
				select {
				case <-f.stop:
					return
				case <-time.After(offset):
				}
				tick := time.NewTicker(f.cfg.Every)
				defer tick.Stop()
				for {
					f.call(app, id)
					select {
					case <-f.stop:
						return
					case <-tick.C:
					}
				}
			})
		}
	}
	return nil
}

// dial is the ClientConn's dialer: it connects to the address the resolver gave and
// remembers it.
func (a *grpcApp) dial(ctx context.Context, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{Timeout: RequestTimeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if ap, perr := netip.ParseAddrPort(addr); perr == nil {
		a.mu.Lock()
		a.dialed = ap.Addr().Unmap()
		a.mu.Unlock()
	}
	return conn, nil
}

// bound is the address of the application's connection, while it is ready.
func (a *grpcApp) bound() netip.Addr {
	if a.conn.GetState() != connectivity.Ready {
		return netip.Addr{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dialed
}

// call makes one call of worker id and counts its outcome.
func (f *GRPCFleet) call(app *grpcApp, id int) {
	cluster, err := f.check(app)
	if err == nil {
		f.stats.served.Add(1)
		f.stats.answered(cluster)
		return
	}
	if code := status.Code(err); code != codes.Unavailable && code != codes.Unimplemented {
		f.stats.fail(fmt.Sprintf("client %d: %v", id, err))
		return
	}
	f.stats.firstFailed(fmt.Sprintf("client %d: %v", id, err))
	cluster, rerr := f.check(app)
	if rerr != nil {
		f.stats.fail(fmt.Sprintf("client %d: %v; retried: %v", id, err, rerr))
		return
	}
	f.stats.retried.Add(1)
	f.stats.answered(cluster)
}

// check calls Health/Check and returns the cluster whose backend answered.
func (f *GRPCFleet) check(app *grpcApp) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	return healthCheck(ctx, app.health)
}

// ServedGRPC calls the health service of hostname at the gateway at addr (host:port)
// once, and returns the cluster whose backend answered: whether the gateway routes
// the name's gRPC calls yet.
func ServedGRPC(ctx context.Context, addr, hostname string) (string, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(hostname))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return healthCheck(ctx, healthpb.NewHealthClient(conn))
}

// healthCheck calls Health/Check and returns the cluster of the answer's header.
func healthCheck(ctx context.Context, health healthpb.HealthClient) (string, error) {
	var header metadata.MD
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
		return "", err
	}
	servedBy := header.Get(strings.ToLower(ServedByHeader))
	if len(servedBy) == 0 || servedBy[0] == "" {
		return "", errors.New("answered without " + ServedByHeader)
	}
	return servedBy[0], nil
}

// Halt stops the workers once their calls in flight have ended, and closes the
// ClientConns.
func (f *GRPCFleet) Halt() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
	for _, app := range f.apps {
		_ = app.conn.Close()
	}
}

// Counts are what the applications saw so far.
func (f *GRPCFleet) Counts() Counts { return f.stats.counts() }

// Bound counts the workers by the address of their application's connection, while
// it is ready: their next calls go there whatever DNS answers now.
func (f *GRPCFleet) Bound() map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for _, app := range f.apps {
		if a := app.bound(); a.IsValid() {
			out[a] += f.cfg.Workers
		}
	}
	return out
}
