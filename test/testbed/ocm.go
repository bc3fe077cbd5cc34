// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"
)

// ProgramOCMPlacement is OCM's placement controller.
var ProgramOCMPlacement = Program{Name: "placement", EnvVar: "TESTBED_OCM_PLACEMENT"}

// StartPlacementController runs OCM's placement controller against the hub until the
// test bed stops, or until the returned process is stopped.
func (b *Bed) StartPlacementController(ctx context.Context) (*Process, error) {
	return b.startHubController(ctx, "placement controller", ProgramOCMPlacement, "placement", "controller")
}

// startHubController runs an OCM hub controller as OCM's controller command runs
// outside a pod: with the hub's admin kubeconfig, without leader election, and with a
// listen address of its own. It is ready when its health endpoint answers.
func (b *Bed) startHubController(ctx context.Context, name string, prog Program, logName string, args ...string) (*Process, error) {
	return b.startController(ctx, name, prog, b.dir, logName, b.Hub.KubeconfigPath, args...)
}

// controllerReadyTimeout is how long an OCM controller or agent has to answer on its
// health endpoint; generous, as the machine is shared and has two cores.
const controllerReadyTimeout = 90 * time.Second

// startController runs one of OCM's controller commands (library-go's controllercmd,
// used by every hub controller and agent) against the cluster of kubeconfig, with its
// log in dir. It is ready when its health endpoint answers.
func (b *Bed) startController(ctx context.Context, name string, prog Program, dir, logName, kubeconfig string, args ...string) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args = append(args,
		"--kubeconfig="+kubeconfig,
		"--disable-leader-election",
		"--listen="+hostPort(port),
	)
	return b.startTracked(ctx, name, prog, dir, logName, nil, controllerReadyTimeout, healthzReady("https://"+hostPort(port)+"/healthz"), args...)
}

// healthzReady answers whether a health endpoint served over TLS with a self-signed
// certificate answers 200; only the answer matters, not who gives it.
func healthzReady(url string) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // local health probe
	return func(ctx context.Context) error {
		return answersOK(ctx, client, http.MethodGet, url)
	}
}

// This project's own binaries, built by 'make build': traffic-migration, with every
// command, and traffic-migration-agent, the spoke agent alone, which the add-on's agent
// Deployment runs.
var (
	ProgramTrafficMigration      = Program{Name: "traffic-migration", EnvVar: "TESTBED_TRAFFIC_MIGRATION"}
	ProgramTrafficMigrationAgent = Program{Name: "traffic-migration-agent", EnvVar: "TESTBED_TRAFFIC_MIGRATION_AGENT"}
)
