// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// manager is the traffic-migration manager run as the real binary.
type manager struct {
	proc       *testbed.Process
	metricsURL string
	bindArg    string
}

func startManager(ctx context.Context) (*manager, error) {
	metricsPort, err := testbed.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := testbed.FreePort()
	if err != nil {
		return nil, err
	}
	m := &manager{
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		bindArg:    fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
	}
	args := []string{"manager",
		"--kubeconfig=" + bed.Hub.KubeconfigPath,
		m.bindArg,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healthPort),
		"--leader-elect=false",
	}
	m.proc, err = bed.StartProgram(ctx, "traffic-migration manager (bench)", testbed.ProgramTrafficMigration, args,
		testbed.HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)))
	return m, err
}

// metrics reads the manager's /metrics and returns, per family, the sum of its
// counters and gauges by the value of one label ("" for all series), plus histogram
// sums and counts as <name>_sum and <name>_count.
func (m *manager) metrics() (map[string]float64, error) {
	resp, err := http.Get(m.metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
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
			}
		}
	}
	return out, nil
}

// pid finds the manager's process id by its unique metrics address on its command line.
func (m *manager) pid() (int, error) {
	return pidOf(m.bindArg, func(args []string) bool {
		return len(args) > 1 && args[1] == "manager" && slices.Contains(args, m.bindArg)
	})
}

// pidOf finds the process whose command line (the program first, then its arguments)
// match accepts; what names it in the error.
func pidOf(what string, match func(args []string) bool) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if match(strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process with %s", what)
}

// usage is a process's resident memory, its peak, and CPU time so far.
type usage struct {
	rssBytes   float64
	hwmBytes   float64 // VmHWM: the peak resident memory
	cpuSeconds float64
}

func (m *manager) usage() (usage, error) {
	pid, err := m.pid()
	if err != nil {
		return usage{}, err
	}
	return usageOf(pid)
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
