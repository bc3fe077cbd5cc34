// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// errLeadershipLost is returned by Run when this process stops holding the lease
// without being asked to stop.
var errLeadershipLost = errors.New("lost the leader election lease")

// runWithLeaderElection runs start while this process holds the leader Lease. When ctx
// ends, it stops start first and releases the Lease only after start has returned, so
// two leaders never run controllers at once.
func runWithLeaderElection(ctx context.Context, o *Options, cfg *rest.Config, reg prometheus.Registerer, start StartFunc) error {
	logger := klog.FromContext(ctx)
	lock, err := newLeaseLock(o, cfg)
	if err != nil {
		return err
	}

	// client-go releases the Lease as soon as the context of LeaderElector.Run ends,
	// even while the controllers still run. So leader election gets a context of its
	// own, cancelled only once start has returned or was never called.
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()

	var (
		mu       sync.Mutex
		started  bool // start was called
		stopping bool // ctx ended before start was called: never call it
		startErr = make(chan error, 1)
	)
	lease := klog.KRef(o.LeaderElectionNamespace, o.LeaderElectionID)
	leading := func(leaderCtx context.Context) {
		mu.Lock()
		if stopping {
			mu.Unlock()
			return
		}
		started = true
		mu.Unlock()
		defer stopElection()

		logger.Info("Became the leader, starting the hub controllers", "lease", lease, "identity", lock.Identity())
		// The controllers stop when the manager stops or leadership is lost.
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopOnLoss := context.AfterFunc(leaderCtx, cancel)
		defer stopOnLoss()
		err := runControllers(runCtx, cfg, reg, o.Workers, start)
		if ctx.Err() == nil && leaderCtx.Err() != nil {
			err = errors.Join(fmt.Errorf("lease %s: %w", lease, errLeadershipLost), err)
		}
		logger.Info("The hub controllers stopped", "lease", lease)
		startErr <- err
	}
	stopWaiting := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			stopping = true
			stopElection()
		}
	})
	defer stopWaiting()

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.LeaderElectionID,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: leading,
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				logger.Info("Observed a new leader", "identity", identity)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("set up leader election: %w", err)
	}
	logger.Info("Waiting for the leader lease", "lease", lease, "identity", lock.Identity())
	elector.Run(electionCtx)

	// The elector calls OnStartedLeading in a goroutine of its own and may return
	// before that goroutine runs: make sure it never starts the controllers late.
	mu.Lock()
	stopping = true
	wasStarted := started
	mu.Unlock()
	if wasStarted {
		// The elector returns once the lease is released or lost; the controllers
		// may still be stopping.
		return <-startErr
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("lease %s: %w", lease, errLeadershipLost)
}

// newLeaseLock returns the Lease lock of this process, with an identity unique to it.
func newLeaseLock(o *Options, cfg *rest.Config) (*resourcelock.LeaseLock, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("read the hostname for the leader election identity: %w", err)
	}
	// A hung request must not outlast the renew deadline, or a single slow call
	// would cost the leadership; this is client-go's own rule of thumb.
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Timeout = max(time.Second, o.RenewDeadline/2)
	client, err := coordinationv1client.NewForConfig(rest.AddUserAgent(leaseCfg, "leader-election"))
	if err != nil {
		return nil, fmt.Errorf("create the leader election client: %w", err)
	}
	return &resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Namespace: o.LeaderElectionNamespace, Name: o.LeaderElectionID},
		Client:    client,
		LockConfig: resourcelock.ResourceLockConfig{
			Identity: host + "_" + string(uuid.NewUUID()),
		},
	}, nil
}
