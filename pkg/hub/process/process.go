// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package process is the process around the hub controllers of traffic-migration: it
// connects to the hub, serves the manager's metrics and health probes, elects a leader
// among replicas and runs the controllers on the leader only.
package process

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	promversion "github.com/prometheus/common/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"open-cluster-management.io/traffic-migration/pkg/probe"
	"open-cluster-management.io/traffic-migration/pkg/version"
)

// userAgent names the manager in the hub's audit log and API server metrics.
const userAgent = "traffic-migration-manager"

// StartFunc starts the hub controllers. Run calls it once this process leads (at once
// without leader election). It must block until ctx is done, then return nil once its
// controllers have stopped; an error, or returning before ctx is done, stops the manager.
type StartFunc func(ctx context.Context, env Env) error

// Env is what Run gives a StartFunc.
type Env struct {
	// Config reaches the hub with the configured QPS, burst and User-Agent.
	Config *rest.Config
	// Registry is the registry served on /metrics.
	Registry prometheus.Registerer
	// Workers is the number of workers each controller runs.
	Workers int
	// Ready marks the controllers ready, typically once their informer caches have
	// synced: without leader election, /readyz answers 503 until it is called. Calling
	// it again is harmless.
	Ready func()
}

// Addresses are the addresses the manager's HTTP servers are bound to.
type Addresses struct {
	// Health serves /healthz and /readyz.
	Health string
	// Metrics serves /metrics; empty when metrics are disabled.
	Metrics string
}

// Run runs the manager until ctx is done: it validates o, serves the health probes and
// metrics, and calls start once this process leads. It returns nil after a shutdown
// asked for through ctx, and an error when something fails, including the loss of the
// leader lease: the process should then exit and be restarted.
func Run(ctx context.Context, o *Options, start StartFunc) error {
	logger := klog.FromContext(ctx)
	if err := o.Validate(); err != nil {
		return fmt.Errorf("invalid options: %w", err)
	}
	setMemoryLimit(ctx, o.MemoryLimitRatio, memlimit.FromCgroup)
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	leading := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "traffic_migration_manager_leader",
		Help: "1 while this process runs the hub controllers (it holds the leader lease or runs without leader election), else 0.",
	})
	if err := reg.Register(leading); err != nil {
		return fmt.Errorf("register the leader metric: %w", err)
	}

	ready := &atomic.Bool{}
	// With leader election, a replica waiting for the lease is ready: it is a healthy
	// candidate. Were it not, a rolling update could never finish: its new pod cannot
	// lead while the old one holds the lease, and the old one is not stopped until the
	// new one is ready.
	ready.Store(o.LeaderElect)
	env := Env{Config: cfg, Registry: reg, Workers: o.Workers, Ready: func() { ready.Store(true) }}

	srv, err := listen(ctx, o, reg, ready)
	if err != nil {
		return err
	}
	if o.OnListening != nil {
		o.OnListening(srv.addresses())
	}
	// A server that fails stops the controllers too: a manager without probes or
	// metrics is not one to keep running.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	running := probe.Serve(ctx, cancel, srv.endpoints()...)

	start = withLeaderGauge(start, leading)
	if o.LeaderElect {
		err = runWithLeaderElection(ctx, o, env, start)
	} else {
		logger.Info("Leader election is off, starting the hub controllers")
		err = runControllers(ctx, env, start)
	}
	return errors.Join(err, running.Shutdown(ctx))
}

// runControllers calls start and checks that it kept to the StartFunc contract.
func runControllers(ctx context.Context, env Env, start StartFunc) error {
	if err := start(ctx, env); err != nil {
		return fmt.Errorf("run the hub controllers: %w", err)
	}
	if ctx.Err() == nil {
		return errors.New("the hub controllers stopped before the manager was asked to stop")
	}
	return nil
}

// withLeaderGauge sets the leader gauge while start runs.
func withLeaderGauge(start StartFunc, leading prometheus.Gauge) StartFunc {
	return func(ctx context.Context, env Env) error {
		leading.Set(1)
		defer leading.Set(0)
		return start(ctx, env)
	}
}

// restConfig loads the hub's client configuration the usual client-go way.
func (o *Options) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load the hub kubeconfig: %w", err)
	}
	cfg.QPS = o.KubeAPIQPS
	cfg.Burst = o.KubeAPIBurst
	cfg.UserAgent = version.UserAgent(userAgent)
	return cfg, nil
}

// newRegistry returns the registry served on /metrics, with the Go runtime and
// process collectors, the build's information and the work queues' metrics.
func newRegistry() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfoCollector(),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register the runtime metrics: %w", err)
		}
	}
	if err := registerWorkqueueMetrics(reg); err != nil {
		return nil, fmt.Errorf("register the work queue metrics: %w", err)
	}
	return reg, nil
}

// BuildInfoMetric is the metric of the build's information: 1, labelled with the
// version, revision, branch, goversion, goos, goarch and tags of the build.
const BuildInfoMetric = "traffic_migration_build_info"

// buildInfoCollector is client_golang's version collector of BuildInfoMetric. Its
// labels are the variables of github.com/prometheus/common/version, which make's
// builds set with -ldflags (VERSION and the commit; build.mk); a build without them
// (go build, go test) reports this build's version (pkg/version, "dev") and the
// revision Go recorded, if any.
func buildInfoCollector() prometheus.Collector {
	if promversion.Version == "" {
		promversion.Version = version.Version
	}
	return versioncollector.NewCollector("traffic_migration")
}
