// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
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
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args = append(args,
		"--kubeconfig="+b.Hub.KubeconfigPath,
		"--disable-leader-election",
		"--listen="+hostPort(port),
	)
	p, err := startProcess(name, prog, b.dir, logName, args...)
	if err != nil {
		return nil, err
	}
	b.Track(p)
	// The controller serves its health endpoint over TLS with a self-signed
	// certificate; only its answer matters here.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // local health probe
	err = p.waitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+hostPort(port)+"/healthz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz answered %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// ProgramTrafficMigration is this project's own binary, built by 'make build'.
var ProgramTrafficMigration = Program{Name: "traffic-migration", EnvVar: "TESTBED_TRAFFIC_MIGRATION"}
