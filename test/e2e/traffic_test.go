// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// trafficMetric is the request counter that the Gateways of the tests serve.
const trafficMetric = "e2e_gateway_requests_total"

// trafficSource plays the Gateways' metrics: a counter of requests served, labelled
// with the cluster's value of the label clusterLabel, which grows at a rate the test
// sets per cluster. The test bed's Prometheus scrapes it under its own job.
type trafficSource struct {
	*testbed.TrafficSource
	job string
}

// newTrafficSource serves the counter on a local port and makes the test bed's
// Prometheus scrape it until the test ends.
func newTrafficSource(t *testing.T, clusterLabel string) *trafficSource {
	t.Helper()
	s := bed.Prometheus.NewTrafficSource(t, testbed.TrafficOptions{
		Metric: trafficMetric,
		Labels: []string{clusterLabel},
		Job:    "e2e-gateways",
	})
	return &trafficSource{TrafficSource: s, job: s.Job}
}

// set sets the request rates, in requests per second, by the cluster label's value.
func (s *trafficSource) set(rates map[string]float64) { s.SetByValue(rates) }
