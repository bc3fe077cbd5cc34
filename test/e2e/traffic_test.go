// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The metrics pipeline of the tests: each spoke's Traefik counts the requests of its
// web entry point in its own counter, a Prometheus agent on the spoke scrapes it and
// remote-writes it to the hub's Prometheus with the external label cluster=<the
// cluster's metrics label value>. Nothing of ours touches the counter or its labels.
const (
	trafficMetric     = "traefik_entrypoint_requests_total"
	trafficSelector   = `entrypoint="web"`
	trafficClusterKey = "cluster"
)

// trafficClients send requests to the spokes' Traefik, each at the rate the test
// sets, until the test ends: the clients of the story's Gateway, whatever Traefik
// answers.
type trafficClients struct {
	mu    sync.Mutex
	rates map[string]float64 // requests per second, by cluster
}

// startTraffic starts one client per spoke's Traefik, sending nothing until set.
func startTraffic(t *testing.T, traefik map[string]*testbed.Traefik) *trafficClients {
	t.Helper()
	c := &trafficClients{rates: map[string]float64{}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for cluster, tr := range traefik {
		wg.Go(func() { c.send(ctx, cluster, tr) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}

// set sets the request rates, in requests per second, by cluster.
func (c *trafficClients) set(rates map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for cluster, r := range rates {
		c.rates[cluster] = r
	}
}

func (c *trafficClients) rate(cluster string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rates[cluster]
}

// send paces requests to one Traefik at its cluster's rate until ctx ends.
func (c *trafficClients) send(ctx context.Context, cluster string, tr *testbed.Traefik) {
	const idle = 100 * time.Millisecond
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		r := c.rate(cluster)
		if r <= 0 {
			timer.Reset(idle)
			continue
		}
		start := time.Now()
		_, _, _ = getThroughTraefik(ctx, tr) // counted by Traefik whatever it answers
		timer.Reset(max(0, time.Duration(float64(time.Second)/r)-time.Since(start)))
	}
}

// waitRemoteWritten waits until the hub's Prometheus has samples of the spoke's
// Traefik counter, written by the spoke's agent with its cluster label value.
func waitRemoteWritten(t *testing.T, labelValue string) {
	t.Helper()
	client, err := promapi.NewClient(promapi.Config{Address: bed.Prometheus.URL})
	if err != nil {
		t.Fatal(err)
	}
	api := promv1.NewAPI(client)
	query := fmt.Sprintf(`%s{%s=%q,%s}`, trafficMetric, trafficClusterKey, labelValue, trafficSelector)
	eventually(t, "the hub's Prometheus having "+query, func(ctx context.Context) error {
		v, _, err := api.Query(ctx, query, time.Now())
		if err != nil {
			return err
		}
		if vec, ok := v.(model.Vector); !ok || len(vec) == 0 {
			return fmt.Errorf("no series yet: %v", v)
		}
		return nil
	})
}
