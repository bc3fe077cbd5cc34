// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
)

// StartRoleAggregation runs kube-controller-manager's clusterrole-aggregation
// controller, and only it, against a cluster, once: a later call returns the one
// already running. It fills the rules of every ClusterRole with an aggregationRule
// (the default view, edit and admin among them) from the ClusterRoles its selectors
// match, as it does on a real cluster; without it those roles grant nothing. It is a
// process of its own, apart from the cluster's other kube-controller-manager
// (startKubeControllerManager), so that a test bed that never ran one, as the
// integration tests' hub, gains no garbage collector or namespace controller.
func (b *Bed) StartRoleAggregation(ctx context.Context, c *Cluster) (*Process, error) {
	b.mu.Lock()
	running := c.roleAggregation
	b.mu.Unlock()
	if running != nil {
		return running, nil
	}
	dir := filepath.Join(c.dir, "role-aggregation")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// /healthz is always allowed, without credentials.
	p, err := b.startTracked(ctx, "clusterrole-aggregation ("+c.Name+")", ProgramKubeControllerManager, c.dir, "role-aggregation",
		nil, controllerReadyTimeout, healthzReady("https://"+hostPort(port)+"/healthz"),
		"--kubeconfig="+c.KubeconfigPath,
		"--controllers=clusterrole-aggregation-controller",
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+dir,
		"--profiling=false",
	)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	c.roleAggregation = p
	b.mu.Unlock()
	return p, nil
}
