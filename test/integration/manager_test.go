// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// managerProcess is the traffic-migration manager run as the real binary.
type managerProcess struct {
	proc       *testbed.Process
	metricsURL string
	healthURL  string
}

// startManager starts the manager against the hub at the highest log verbosity, so
// that tests can search its log for what must never be logged.
func startManager(ctx context.Context) (*managerProcess, error) {
	metricsPort, err := testbed.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := testbed.FreePort()
	if err != nil {
		return nil, err
	}
	m := &managerProcess{
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		healthURL:  fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort),
	}
	args := []string{"manager",
		"--kubeconfig=" + bed.Hub.KubeconfigPath,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healthPort),
		"--leader-elect=false",
		"-v=10",
	}
	m.proc, err = bed.StartProgram(ctx, "traffic-migration manager", testbed.ProgramTrafficMigration, args, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.healthURL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz answered %s", resp.Status)
		}
		return nil
	})
	return m, err
}

// metric reads the sum of a counter or gauge over the series whose labels include
// match, from the manager's /metrics.
func (m *managerProcess) metric(name string, match map[string]string) (float64, error) {
	resp, err := http.Get(m.metricsURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, metric := range families[name].GetMetric() {
		if labelsMatch(metric, match) {
			sum += metric.GetCounter().GetValue() + metric.GetGauge().GetValue()
		}
	}
	return sum, nil
}

func labelsMatch(metric *dto.Metric, match map[string]string) bool {
	n := 0
	for _, l := range metric.GetLabel() {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(match)
}

// log returns everything the manager has logged so far.
func (m *managerProcess) log() (string, error) {
	b, err := os.ReadFile(m.proc.LogPath)
	return string(b), err
}

// contains reports whether any of the manager's logs so far holds s.
func (m *managerProcess) logContains(s string) (bool, error) {
	l, err := m.log()
	return strings.Contains(l, s), err
}
