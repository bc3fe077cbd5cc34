// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"open-cluster-management.io/traffic-migration/pkg/hub"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// manager is the traffic-migration manager run as the real binary by the test bed.
type manager struct {
	*testbed.Manager
	proc *testbed.Process
}

// memoryLimit is the memory limit the benchmarks run the manager under, in a memory
// cgroup as in a pod: the goal for a hub of 10,000 ManagedClusters and 1,000 policies.
// The manager sets its GOMEMLIMIT from it as it does in the chart's pod
// (--gomemlimit-ratio). It is the goal, not the chart's limit, so that the chart's
// limit can be sized from what the benchmark measures (1.25 times the peak).
const memoryLimit = 256 << 20

// addonManagerLimit is the chart's memory limit of the add-on manager's pod
// (addonManager.resources in its values).
const addonManagerLimit = 256 << 20

// extraManagerArgs are added to every manager's command line (managerArgsEnv).
var extraManagerArgs []string

// startManager starts the manager with its profiles served (--profiling), so that a
// benchmark can read where its memory goes, under memoryLimit, with its notifications
// read from notificationsNamespace; extraManagerArgs, then args, are added to its
// command line.
func startManager(ctx context.Context, args ...string) (*manager, error) {
	m, err := bed.StartManager(ctx, testbed.ManagerOptions{MemoryLimit: memoryLimit,
		Args: slices.Concat([]string{"--profiling", "--notifications-namespace=" + notificationsNamespace}, extraManagerArgs, args)})
	if err != nil {
		return nil, err
	}
	return &manager{Manager: m, proc: m.Process}, nil
}

// startAddonManager starts the add-on manager's process as the chart runs it beside
// the policy controllers' (--controllers=addon-manager), under addonManagerLimit, and
// stops it when the test ends.
func startAddonManager(t testing.TB) *manager {
	t.Helper()
	m, err := bed.StartManager(t.Context(), testbed.ManagerOptions{MemoryLimit: addonManagerLimit,
		Args: []string{"--controllers=" + hub.ControllersAddon}})
	if err != nil {
		t.Fatalf("start the add-on manager: %v", err)
	}
	t.Cleanup(m.Process.Stop)
	return &manager{Manager: m, proc: m.Process}
}

// metrics reads the manager's /metrics and returns, per family, the sum of its
// counters and gauges by the value of one label ("" for all series), plus histogram
// sums and counts as <name>_sum and <name>_count, also by label.
func (m *manager) metrics() (map[string]float64, error) {
	families, err := m.MetricFamilies()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, s := range f.GetMetric() {
			v := s.GetCounter().GetValue() + s.GetGauge().GetValue()
			out[name] += v
			for _, l := range s.GetLabel() {
				out[name+"{"+l.GetName()+"="+l.GetValue()+"}"] += v
			}
			if h := s.GetHistogram(); h != nil {
				out[name+"_sum"] += h.GetSampleSum()
				out[name+"_count"] += float64(h.GetSampleCount())
				for _, l := range s.GetLabel() {
					out[name+"_sum{"+l.GetName()+"="+l.GetValue()+"}"] += h.GetSampleSum()
					out[name+"_count{"+l.GetName()+"="+l.GetValue()+"}"] += float64(h.GetSampleCount())
				}
			}
		}
	}
	return out, nil
}

// heapProfile saves the manager's heap profile as path and returns the top of it by
// memory in use, as go tool pprof prints it.
func (m *manager) heapProfile(ctx context.Context, path string) (string, error) {
	url := strings.TrimSuffix(m.MetricsURL, "/metrics") + "/debug/pprof/heap"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("get the heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get the heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "", fmt.Errorf("save the heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	// The go command on PATH, as the test bed finds it: runtime.GOROOT is empty in a
	// test built with -trimpath, as make bench builds it.
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=25", path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, out)
	}
	return string(out), nil
}

// pid is the manager's process id.
func (m *manager) pid() (int, error) { return m.proc.PID(), nil }

// usage is a process's resident memory, its peak, and CPU time so far; for the
// manager also its memory cgroup's working set, peak and OOM kills, as the kubelet
// would see them in a pod.
type usage struct {
	rssBytes   float64
	hwmBytes   float64 // VmHWM: the peak resident memory
	cpuSeconds float64
	cgroup     testbed.MemoryUsage
}

func (m *manager) usage() (usage, error) {
	pid, err := m.pid()
	if err != nil {
		return usage{}, err
	}
	u, err := usageOf(pid)
	if err != nil || m.Memory == nil {
		return u, err
	}
	u.cgroup, err = m.Memory.Usage()
	return u, err
}

// usageOf reads a process's usage from /proc.
func usageOf(pid int) (usage, error) {
	var u usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			u.rssBytes = kb * 1024
		case "VmHWM:":
			u.hwmBytes = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// Fields after the command name, which ends with the last ')': state is field 3,
	// utime 14 and stime 15.
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 13 {
		return u, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(rest[11], 64)
	stime, _ := strconv.ParseFloat(rest[12], 64)
	u.cpuSeconds = (utime + stime) / 100 // USER_HZ is 100 on Linux
	return u, nil
}
