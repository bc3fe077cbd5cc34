// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

// startEtcd starts one etcd that serves every API server of the test bed, each under
// its own prefix. It does not fsync: the data only has to outlive a test.
func startEtcd(ctx context.Context, dir string) (*Process, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	clientURL := "http://" + hostPort(clientPort)
	peerURL := "http://" + hostPort(peerPort)
	p, err := startProcess("etcd", ProgramEtcd, dir, "etcd", nil,
		"--name=testbed",
		"--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=testbed="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
		"--quota-backend-bytes="+strconv.Itoa(4<<30),
	)
	if err != nil {
		return nil, "", err
	}
	err = p.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var health struct {
			Health string `json:"health"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
			return err
		}
		if health.Health != "true" {
			return fmt.Errorf("etcd health is %q", health.Health)
		}
		return nil
	})
	if err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, clientURL, nil
}
