// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// managerProcess is the traffic-migration manager run as the real binary by the test bed.
type managerProcess struct {
	*testbed.Manager
	proc *testbed.Process
}

// notificationsNamespace is where the manager reads its notifications ConfigMap and
// Secret: TestNotifications makes the namespace and them.
const notificationsNamespace = "traffic-migration-notifications"

// statusFlushInterval is the longest the suite's manager keeps a status with only new
// check results in memory.
const statusFlushInterval = 3 * time.Second

// startManager starts the manager against the hub at the highest log verbosity, so
// that tests can search its log for what must never be logged. It may ask the name
// servers the bed runs (their one address, not the loopback's other addresses:
// TestDNSNameserverAllowlist counts on it). Its budget of status writes that carry
// only check results is all but spent (--status-write-qps), so that every test, the
// kill, restart and leader tests included, runs with statuses kept in memory between
// writes, as on a hub with a thousand draining policies; they wait at most
// statusFlushInterval.
func startManager(ctx context.Context) (*managerProcess, error) {
	m, err := bed.StartManager(ctx, testbed.ManagerOptions{Args: []string{"-v=10", "--notifications-namespace=" + notificationsNamespace,
		"--dns-nameserver-allowlist=" + bed.ListenHost(), "--status-write-qps=0.01", "--status-flush-interval=" + statusFlushInterval.String()}})
	if err != nil {
		return nil, err
	}
	return &managerProcess{Manager: m, proc: m.Process}, nil
}

// logContains reports whether any of the manager's logs so far holds s.
func (m *managerProcess) logContains(s string) (bool, error) {
	l, err := m.proc.Log()
	return strings.Contains(l, s), err
}

// logSize is how many bytes the manager has logged so far, for logLinesSince.
func (m *managerProcess) logSize(t *testing.T) int {
	t.Helper()
	l, err := m.proc.Log()
	if err != nil {
		t.Fatalf("read the manager's log: %v", err)
	}
	return len(l)
}

// logLinesSince returns the manager's log lines after the first offset bytes that
// hold any of subs: what a test prints to explain a failure.
func (m *managerProcess) logLinesSince(t *testing.T, offset int, subs ...string) []string {
	t.Helper()
	l, err := m.proc.Log()
	if err != nil || offset > len(l) {
		return []string{fmt.Sprintf("(the manager's log cannot be read from byte %d: %v)", offset, err)}
	}
	var out []string
	for _, line := range strings.Split(l[offset:], "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// metricValue reads the sum of a metric of the manager over the series that match.
func (m *managerProcess) metricValue(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	v, err := m.Metric(name, match)
	if err != nil {
		t.Fatalf("read %s from the manager: %v", name, err)
	}
	return v
}
