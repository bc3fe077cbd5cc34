// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// fleetChildEnv makes the test binary run as 'make fleet' (see TestFleetChild).
const fleetChildEnv = "TRAFFIC_MIGRATION_FLEET_CHILD"

// TestFleetChild is not a test of its own: TestFleet runs the test binary again with
// fleetChildEnv set, and then this is the fleet's program, as main runs it with -fleet.
func TestFleetChild(t *testing.T) {
	if os.Getenv(fleetChildEnv) != "1" {
		t.Skip("run by TestFleet as its child process")
	}
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runFleet(ctx, shortConfig(), os.Stdout, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// TestFleet starts the fleet as a process of its own, as 'make fleet' does, reaches
// the hub through the KUBECONFIG it prints, and interrupts it: it exits cleanly and no
// process it started is left.
func TestFleet(t *testing.T) {
	if os.Getenv(fleetChildEnv) == "1" {
		t.Skip("the child runs TestFleetChild only")
	}
	if msg := testbed.Unconfigured(); msg != "" {
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetChild$", "-test.v")
	cmd.Env = append(os.Environ(), fleetChildEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	kubeconfigs := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		exportLine := regexp.MustCompile(`^\s*export KUBECONFIG=(\S+)$`)
		var kubeconfig string
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			out.WriteString(line + "\n")
			if m := exportLine.FindStringSubmatch(line); m != nil {
				kubeconfig = m[1]
			}
			if strings.HasPrefix(line, "Press Ctrl-C") && kubeconfig != "" {
				kubeconfigs <- kubeconfig // the instructions are all printed
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("the fleet's output:\n%s\nits errors:\n%s", out.String(), errOut.String())
		}
	})

	var kubeconfig string
	select {
	case kubeconfig = <-kubeconfigs:
	case <-copied:
		t.Fatal("the fleet ended before it printed its KUBECONFIG")
	case <-ctx.Done():
		t.Fatal("the fleet printed no KUBECONFIG in time")
	}
	for _, want := range []string{"traffic-migration check " + policyName + " -n " + namespace, "kubectl -n " + namespace + " patch placement " + placementName, "--watch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the fleet's instructions lack %q", want)
		}
	}
	// CoreDNS answers the Gateway's name where the printed dig asks it.
	if m := regexp.MustCompile(`(?m)^\s*dig @(\S+) -p (\d+) ` + regexp.QuoteMeta(gatewayHostname) + ` `).FindStringSubmatch(out.String()); m == nil {
		t.Errorf("the fleet's instructions lack how to query CoreDNS for %s", gatewayHostname)
	} else {
		resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(m[1], m[2]))
		}}
		if addrs, err := resolver.LookupNetIP(ctx, "ip4", gatewayHostname+"."); err != nil || len(addrs) != 1 {
			t.Errorf("CoreDNS at %s:%s answers %s with %v, %v; want cluster1's address", m[1], m[2], gatewayHostname, addrs, err)
		}
	}

	// The hub answers through the printed kubeconfig, with both clusters joined.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hub, err := clusterclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := hub.ClusterV1().ManagedClusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("reach the hub through %s: %v", kubeconfig, err)
	}
	var names []string
	for _, c := range clusters.Items {
		names = append(names, c.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{cluster1, cluster2}) {
		t.Errorf("ManagedClusters %v, want %s and %s", names, cluster1, cluster2)
	}

	// A command it suggests works through that kubeconfig.
	bin, err := testbed.ProgramTrafficMigration.Path()
	if err != nil {
		t.Fatal(err)
	}
	check := exec.CommandContext(ctx, bin, "check", policyName, "-n", namespace)
	check.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if b, err := check.CombinedOutput(); err != nil || !strings.Contains(string(b), cluster1) {
		t.Errorf("traffic-migration check on the fleet: %v\n%s", err, b)
	}

	// Every process the fleet started, before the interrupt.
	started := descendants(t, cmd.Process.Pid)
	if len(started) < 5 {
		t.Fatalf("the fleet runs only %d processes: %v", len(started), started)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-copied
	err = cmd.Wait()
	stopped = true
	if err != nil {
		t.Fatalf("the fleet did not exit cleanly after SIGINT: %v", err)
	}
	if !strings.Contains(out.String(), "Stopped everything the fleet started") {
		t.Errorf("the fleet did not say it stopped everything")
	}
	// Its data went with it: the directory that holds the printed kubeconfig.
	dir := kubeconfig
	for dir != "/" && !strings.HasPrefix(filepath.Base(dir), "traffic-migration-demo-") {
		dir = filepath.Dir(dir)
	}
	if _, err := os.Stat(dir); dir == "/" || !os.IsNotExist(err) {
		t.Errorf("the fleet's directory %s is left behind (%v)", dir, err)
	}
	for pid, start := range started {
		if s, ok := startTime(pid); ok && s == start {
			t.Errorf("process %d (%s) is still running after the fleet stopped", pid, commandOf(pid))
		}
	}
}

// descendants returns the processes below pid, with their start times (to tell a
// process from a later one with the same pid).
func descendants(t *testing.T, pid int) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	out := map[int]string{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if s, ok := startTime(c); ok {
				out[c] = s
			}
			queue = append(queue, c)
		}
	}
	return out
}

// statFields returns the fields of /proc/<pid>/stat after the command name.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

func parentOf(pid int) (int, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// startTime is field 22 of /proc/<pid>/stat, the 20th after the command name. A
// zombie still has its entry: it counts as gone.
func startTime(pid int) (string, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 20 || f[0] == "Z" {
		return "", false
	}
	return f[19], true
}

func commandOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// lockedBuffer is a strings.Builder safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
