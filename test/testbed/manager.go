// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net/http"
	"os"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Manager is the traffic-migration hub manager, the project's own binary, run by the
// test bed against the hub.
type Manager struct {
	// Process is the running manager.
	Process *Process
	// MetricsURL is its /metrics.
	MetricsURL string
	// HealthURL is its /readyz.
	HealthURL string
	// Memory is its memory cgroup, with ManagerOptions.MemoryLimit; else nil.
	Memory *MemoryCgroup
}

// ManagerOptions say how the test bed runs the manager.
type ManagerOptions struct {
	// Kubeconfig is the manager's hub kubeconfig. Default: the hub's admin one; one of
	// the manager's ServiceAccount (Cluster.ServiceAccountKubeconfig) gives it the
	// rights of its install and no more.
	Kubeconfig string
	// Env is added to the manager's environment, for example GOMEMLIMIT as the manager
	// sets it for itself in a container with a memory limit.
	Env []string
	// Args are added to its command line, for example "-v=4".
	Args []string
	// MemoryLimit, when not zero, runs the manager in a memory cgroup of its own with
	// this limit in bytes, as in a pod with a memory limit: the manager sets its
	// GOMEMLIMIT from it, and Manager.Memory reads its working set and peak.
	MemoryLimit int64
}

// StartManager runs 'traffic-migration manager' against the hub, without leader
// election, with its metrics and probes on free loopback ports, and returns once it is
// ready. It runs until the test bed stops, or until its process is stopped.
func (b *Bed) StartManager(ctx context.Context, opts ManagerOptions) (*Manager, error) {
	kubeconfig := opts.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = b.Hub.KubeconfigPath
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &Manager{
		MetricsURL: "http://" + hostPort(metricsPort) + "/metrics",
		HealthURL:  "http://" + hostPort(healthPort) + "/readyz",
	}
	args := append([]string{"manager",
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--health-probe-bind-address=" + hostPort(healthPort),
		"--leader-elect=false",
	}, opts.Args...)
	name, logName := "traffic-migration manager", uniqueLogName(ProgramTrafficMigration)
	if opts.MemoryLimit == 0 {
		m.Process, err = b.startTracked(ctx, name, ProgramTrafficMigration, b.dir, logName, opts.Env, programReadyTimeout, HTTPReady(m.HealthURL), args...)
		return m, err
	}
	bin, err := ProgramTrafficMigration.Path()
	if err != nil {
		return nil, err
	}
	if m.Memory, err = newMemoryCgroup(fmt.Sprintf("testbed-%d-%s", os.Getpid(), logName), opts.MemoryLimit); err != nil {
		return nil, err
	}
	p, err := startCommandThen(func() { _ = m.Memory.remove() }, name, "/bin/sh", b.dir, logName, opts.Env,
		append([]string{"-c", m.Memory.joinCommand(), bin}, args...)...)
	if err != nil {
		_ = m.Memory.remove()
		return nil, err
	}
	m.Process, err = b.trackReady(ctx, p, programReadyTimeout, HTTPReady(m.HealthURL))
	return m, err
}

// MetricFamilies reads the manager's /metrics, by family name.
func (m *Manager) MetricFamilies() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(m.MetricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", m.MetricsURL, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// Metric reads the sum of a counter or gauge of the manager over the series whose
// labels include match (every series when match is empty).
func (m *Manager) Metric(name string, match map[string]string) (float64, error) {
	families, err := m.MetricFamilies()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, metric := range families[name].GetMetric() {
		if labelsInclude(metric, match) {
			sum += metric.GetCounter().GetValue() + metric.GetGauge().GetValue()
		}
	}
	return sum, nil
}

// labelsInclude reports whether a series has every label of match, with its value.
func labelsInclude(metric *dto.Metric, match map[string]string) bool {
	n := 0
	for _, l := range metric.GetLabel() {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(match)
}
