// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

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
func runWithLeaderElection(ctx context.Context, o *Options, env Env, start StartFunc) error {
	logger := klog.FromContext(ctx)
	lock, err := newLeaseLock(o, env.Config)
	if err != nil {
		return err
	}
	lease := klog.KRef(o.LeaderElectionNamespace, o.LeaderElectionID)

	// client-go releases the Lease as soon as the context of LeaderElector.Run ends,
	// even while the controllers still run. So leader election gets a context of its
	// own, cancelled only once the controllers have stopped or were never started. The
	// controllers run here, not in the elector's callback, which only hands over the
	// context that ends when the lease is lost.
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	leading := make(chan context.Context, 1) // the elector calls OnStartedLeading once at most
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.LeaderElectionID,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) { leading <- leaderCtx },
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				logger.Info("Observed a new leader", "identity", identity)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("set up leader election: %w", err)
	}
	electionDone := make(chan struct{})
	logger.Info("Waiting for the leader lease", "lease", lease, "identity", lock.Identity())
	go func() {
		defer close(electionDone)
		elector.Run(electionCtx)
	}()
	// stop ends the election, which releases the lease if this process holds it.
	stop := func() { stopElection(); <-electionDone }

	var leaderCtx context.Context
	select {
	case <-ctx.Done():
		stop()
		return nil
	case <-electionDone:
		return fmt.Errorf("lease %s: %w", lease, errLeadershipLost)
	case leaderCtx = <-leading:
	}
	if ctx.Err() != nil { // both were ready: never start late
		stop()
		return nil
	}

	logger.Info("Became the leader, starting the hub controllers", "lease", lease, "identity", lock.Identity())
	// The controllers stop when the manager stops or leadership is lost.
	runCtx, cancel := context.WithCancel(ctx)
	stopOnLoss := context.AfterFunc(leaderCtx, cancel)
	err = runControllers(runCtx, env, start)
	stopOnLoss()
	cancel()
	if ctx.Err() == nil && leaderCtx.Err() != nil {
		err = errors.Join(fmt.Errorf("lease %s: %w", lease, errLeadershipLost), err)
	}
	logger.Info("The hub controllers stopped", "lease", lease)
	stop()
	return err
}

// newLeaseLock returns the Lease lock of this process, with an identity unique to it,
// ending with o.IdentityTag.
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
			Identity: host + "_" + string(uuid.NewUUID()) + o.IdentityTag,
		},
	}, nil
}
