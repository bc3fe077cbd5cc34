// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The names of a bed with nodes start with bedPrefix and the bed's number n (1 to
// maxBeds): its bridge is tmb<n>, each node's network namespace and cgroup is
// tmb<n>-<cluster>, each node's veth on the host tmb<n>v<k>. The number also picks the
// bed's network, 10.213.<n>.0/24: the bridge has .1 (the host address, where the API
// servers and Prometheus listen), node k has .(10+k).
const (
	bedPrefix = "tmb"
	maxBeds   = 250
	// bedAliasTag starts the alias of a bed's bridge, which names the process that
	// owns the bed and the bed's node directory, so a later bed can tell a dead bed's
	// leftovers from a running bed's.
	bedAliasTag = "traffic-migration-testbed"
)

//go:embed node-cleanup.sh
var nodeCleanupScript string

// nodeCleanupTimeout bounds one run of the cleanup script.
const nodeCleanupTimeout = 2 * time.Minute

// bedNetwork is the host side of a bed's nodes: the bridge, the directory under which
// the nodes keep what they mount, and a guard process that removes everything of the
// bed if the test binary dies.
type bedNetwork struct {
	name    string // tmb<n>
	number  int
	hostIP  string
	dataDir string // every node's runtime data (kubelet root, containerd root and state)

	guard      *exec.Cmd
	guardWrite *os.File // held open by the test binary: the guard acts when it closes
}

// nodeIP returns the address of the bed's k-th node.
func (n *bedNetwork) nodeIP(k int) string {
	return fmt.Sprintf("10.213.%d.%d", n.number, 10+k)
}

// newBedNetwork checks that the host can run nodes, removes what dead beds left, then
// claims a free bed number by creating its bridge (the kernel refuses a second bridge
// of the same name, so two beds starting at once never share one), and starts the
// guard.
func newBedNetwork(ctx context.Context, dir string) (_ *bedNetwork, err error) {
	if err := checkNodeHost(); err != nil {
		return nil, err
	}
	if err := cleanDeadBeds(ctx); err != nil {
		return nil, err
	}
	start := rand.IntN(maxBeds)
	for i := range maxBeds {
		number := 1 + (start+i)%maxBeds
		name := bedPrefix + strconv.Itoa(number)
		out, err := exec.CommandContext(ctx, "ip", "link", "add", name, "type", "bridge").CombinedOutput()
		if err != nil {
			if bytes.Contains(out, []byte("File exists")) {
				continue
			}
			return nil, fmt.Errorf("create the test bed's bridge %s: %w: %s", name, err, bytes.TrimSpace(out))
		}
		n := &bedNetwork{name: name, number: number, hostIP: fmt.Sprintf("10.213.%d.1", number), dataDir: filepath.Join(dir, "nodes")}
		defer func() {
			if err != nil {
				n.remove()
			}
		}()
		// The number is ours now, and so are its veth names: one still there is a dead
		// bed's, whose namespace the kernel has not destroyed yet.
		if err := removeNodeLinks(ctx, name); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(n.dataDir, 0o700); err != nil {
			return nil, err
		}
		start, err := processStartTime(os.Getpid())
		if err != nil {
			return nil, err
		}
		alias := fmt.Sprintf("%s pid=%d start=%s dir=%s", bedAliasTag, os.Getpid(), start, n.dataDir)
		if err := runIP(ctx, "link", "set", "dev", name, "alias", alias); err != nil {
			return nil, err
		}
		if err := runIP(ctx, "addr", "add", n.hostIP+"/24", "dev", name); err != nil {
			return nil, err
		}
		if err := runIP(ctx, "link", "set", name, "up"); err != nil {
			return nil, err
		}
		if err := n.startGuard(); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, fmt.Errorf("no free test bed number: bridges %s1 to %s%d all exist", bedPrefix, bedPrefix, maxBeds)
}

// startGuard starts a shell that waits for the end of a pipe that only the test
// binary holds, and then runs the cleanup script. The pipe ends when the test binary
// exits, however it dies, while the guard, in a process group of its own and without a
// parent-death signal, lives on to remove the nodes' containers, mounts, cgroups,
// network namespaces and bridge.
func (n *bedNetwork) startGuard() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the test bed's guard: %w", err)
	}
	cmd := exec.Command("sh", "-c", "read -r _; "+nodeCleanupScript, "node-cleanup", n.name, n.dataDir, cleanupScope(true))
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("start the test bed's guard: %w", err)
	}
	r.Close()
	n.guard, n.guardWrite = cmd, w
	return nil
}

// remove runs the cleanup script for the bed and stops the guard. Each node has been
// stopped before, so what is left is the bridge, and anything a node failed to remove.
func (n *bedNetwork) remove() {
	if err := runNodeCleanup(n.name, n.dataDir, true); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: clean up the nodes of %s: %v\n", n.name, err)
	}
	if n.guard != nil {
		_ = n.guard.Process.Kill()
		_ = n.guard.Wait()
		n.guardWrite.Close()
		n.guard = nil
	}
}

// runNodeCleanup runs the cleanup script for a bed (bed: the bed's name, whose nodes
// are name-<cluster>) or for one node (!bed: the node's namespace and cgroup are
// name) whose data is under dataDir.
func runNodeCleanup(name, dataDir string, bed bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), nodeCleanupTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", nodeCleanupScript, "node-cleanup", name, dataDir, cleanupScope(bed)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// cleanupScope is the cleanup script's third argument: "bed" for a bed and all its
// nodes, "node" for one node.
func cleanupScope(bed bool) string {
	if bed {
		return "bed"
	}
	return "node"
}

// cleanDeadBeds removes the leftovers of every bed whose owner is gone: a bridge whose
// alias names a process that no longer runs (or a new process with the same id), and
// network namespaces of ours without a bridge.
func cleanDeadBeds(ctx context.Context) error {
	links, err := filepath.Glob("/sys/class/net/" + bedPrefix + "*")
	if err != nil {
		return err
	}
	alive := map[string]bool{}
	for _, link := range links {
		name := filepath.Base(link)
		if _, err := strconv.Atoi(strings.TrimPrefix(name, bedPrefix)); err != nil {
			continue // a node's veth, tmb<n>v<k>: it goes with its namespace
		}
		alias, err := os.ReadFile(filepath.Join(link, "ifalias"))
		if err != nil {
			continue
		}
		owner, dataDir, ok := parseBedAlias(strings.TrimSpace(string(alias)))
		if !ok {
			continue // not one of ours
		}
		if owner() {
			alive[name] = true
			continue
		}
		if err := runNodeCleanup(name, dataDir, true); err != nil {
			return fmt.Errorf("remove what the dead test bed %s left: %w", name, err)
		}
	}
	// Namespaces of a bed whose bridge is gone: a bed that died while it started or
	// stopped. They hold no mounts of their own; their processes and cgroups go too.
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("list network namespaces: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		bed, _, found := strings.Cut(ns, "-")
		if !found || !strings.HasPrefix(bed, bedPrefix) || alive[bed] {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimPrefix(bed, bedPrefix)); err != nil {
			continue
		}
		if _, err := os.Stat("/sys/class/net/" + bed); err == nil {
			continue // a bridge that is not ours, or a bed that is starting
		}
		if err := runNodeCleanup(bed, "", true); err != nil {
			return fmt.Errorf("remove what the dead test bed %s left: %w", bed, err)
		}
	}
	return nil
}

// parseBedAlias reads a bed bridge's alias. owner reports whether the process that
// made the bed still runs.
func parseBedAlias(alias string) (owner func() bool, dataDir string, ok bool) {
	fields := strings.Fields(alias)
	if len(fields) != 4 || fields[0] != bedAliasTag {
		return nil, "", false
	}
	pidText, ok1 := strings.CutPrefix(fields[1], "pid=")
	start, ok2 := strings.CutPrefix(fields[2], "start=")
	dataDir, ok3 := strings.CutPrefix(fields[3], "dir=")
	pid, err := strconv.Atoi(pidText)
	if !ok1 || !ok2 || !ok3 || err != nil {
		return nil, "", false
	}
	return func() bool {
		now, err := processStartTime(pid)
		return err == nil && now == start
	}, dataDir, true
}

// processStartTime returns when a process started, in clock ticks after boot (the
// 22nd field of /proc/<pid>/stat), which tells a process from a later one that got
// the same id.
func processStartTime(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name, in parentheses, may hold spaces: count from its end.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return "", fmt.Errorf("read /proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 20 {
		return "", fmt.Errorf("read /proc/%d/stat: too few fields", pid)
	}
	return fields[19], nil
}

// nodeHostNeeds lists what the nodes run from the host, with the Debian package that
// installs each (hack/node-packages.sh installs the same).
var nodeHostNeeds = []struct{ path, pkg string }{
	{"/usr/bin/containerd", "containerd"},
	{"/usr/bin/ctr", "containerd"},
	{"/usr/sbin/runc", "runc"},
	{"/usr/lib/cni/bridge", "containernetworking-plugins"},
	{"/usr/lib/cni/host-local", "containernetworking-plugins"},
	{"/usr/lib/cni/portmap", "containernetworking-plugins"},
	{"/usr/lib/cni/loopback", "containernetworking-plugins"},
	{"/usr/sbin/iptables", "iptables"},
	{"/usr/bin/nsenter", "util-linux"},
}

// checkNodeHost fails, saying what is missing and how to get it, unless the test
// binary runs as root on a host with the nodes' programs.
func checkNodeHost() error {
	var missing []string
	for _, need := range nodeHostNeeds {
		if _, err := os.Stat(need.path); err != nil && !slices.Contains(missing, need.pkg) {
			missing = append(missing, need.pkg)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		missing = append(missing, "iproute2")
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("the test bed's nodes need the Debian packages %s: 'make testbed-nodes' installs them as root, or run 'apt-get install -y %s'",
			strings.Join(missing, ", "), strings.Join(missing, " ")))
	}
	if os.Geteuid() != 0 {
		errs = append(errs, errors.New("the test bed's nodes need root (they make network namespaces, cgroups and mounts): run the tests as root"))
	}
	return errors.Join(errs...)
}

// removeNodeLinks deletes the host ends of the veths of the bed name, tmb<n>v<k>, and
// with each its peer.
func removeNodeLinks(ctx context.Context, name string) error {
	links, err := filepath.Glob("/sys/class/net/" + name + "v*")
	if err != nil {
		return err
	}
	for _, link := range links {
		link = filepath.Base(link)
		if _, err := strconv.Atoi(strings.TrimPrefix(link, name+"v")); err != nil {
			continue
		}
		if err := deleteLink(ctx, link); err != nil {
			return fmt.Errorf("remove the veth %s that a dead test bed left: %w", link, err)
		}
	}
	return nil
}

// deleteLink deletes a network link; one that is gone already is no error.
func deleteLink(ctx context.Context, name string) error {
	out, err := exec.CommandContext(ctx, "ip", "link", "delete", name).CombinedOutput()
	if err != nil && !bytes.Contains(out, []byte("Cannot find device")) {
		return fmt.Errorf("ip link delete %s: %w: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}

// runIP runs the ip command with args.
func runIP(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
