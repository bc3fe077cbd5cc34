// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MemoryCgroup is a memory cgroup with a limit that the test bed runs a program in, as
// a container with a memory limit runs: the program reads its limit from its cgroup
// (the manager sets its GOMEMLIMIT from it), the kernel reclaims and kills at it, and
// the cgroup tells the program's working set and peak as the kubelet sees them. It lies
// under the test process's own memory cgroup, in the cgroup v1 memory hierarchy or in
// cgroup v2, and is removed when the program has exited.
type MemoryCgroup struct {
	dir string
	v2  bool
}

// MemoryUsage is what a memory cgroup says of its processes' memory.
type MemoryUsage struct {
	// WorkingSet is the usage less the inactive file cache, as the kubelet computes
	// a container's working set (what its memory limit is held against).
	WorkingSet int64
	// Peak is the highest usage since the cgroup was made.
	Peak int64
	// OOMKills counts the processes the kernel killed at the limit.
	OOMKills int64
}

// newMemoryCgroup makes the memory cgroup name, limited to limit bytes.
func newMemoryCgroup(name string, limit int64) (*MemoryCgroup, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := memoryMounts()
	if err != nil {
		return nil, err
	}
	// hierarchy-ID:controllers:path, the v1 memory hierarchy first.
	var c *MemoryCgroup
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if strings.Contains(","+parts[1]+",", ",memory,") && mounts.v1 != "" {
			c = &MemoryCgroup{dir: filepath.Join(mounts.v1, parts[2], name)}
			break
		}
		if parts[0] == "0" && parts[1] == "" && mounts.v2 != "" {
			c = &MemoryCgroup{dir: filepath.Join(mounts.v2, parts[2], name), v2: true}
		}
	}
	if c == nil {
		return nil, errors.New("this machine has no memory cgroup to run a program with a memory limit in")
	}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the memory cgroup %s: %w", c.dir, err)
	}
	limitFile := "memory.limit_in_bytes"
	if c.v2 {
		limitFile = "memory.max"
	}
	if err := os.WriteFile(filepath.Join(c.dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		_ = os.Remove(c.dir)
		return nil, fmt.Errorf("limit the memory cgroup %s: %w", c.dir, err)
	}
	return c, nil
}

// memoryMounts finds where the cgroup v1 memory hierarchy and cgroup v2 are mounted.
func memoryMounts() (mounts struct{ v1, v2 string }, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mounts, err
	}
	defer f.Close()
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(scan.Text(), " - ")
		fields, after := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(after) < 3 {
			continue
		}
		switch {
		case after[0] == "cgroup" && strings.Contains(","+after[2]+",", ",memory,"):
			mounts.v1 = fields[4]
		case after[0] == "cgroup2":
			mounts.v2 = fields[4]
		}
	}
	return mounts, scan.Err()
}

// joinCommand is a shell command line that moves the shell into the cgroup and then
// runs its arguments in its place ("$0" and "$@").
func (c *MemoryCgroup) joinCommand() string {
	return fmt.Sprintf(`echo $$ > %q && exec "$0" "$@"`, filepath.Join(c.dir, "cgroup.procs"))
}

// Usage reads the cgroup's memory usage.
func (c *MemoryCgroup) Usage() (MemoryUsage, error) {
	var u MemoryUsage
	usageFile, peakFile, inactiveKey, eventsFile := "memory.usage_in_bytes", "memory.max_usage_in_bytes", "total_inactive_file", "memory.oom_control"
	if c.v2 {
		usageFile, peakFile, inactiveKey, eventsFile = "memory.current", "memory.peak", "inactive_file", "memory.events"
	}
	usage, err := c.readInt(usageFile)
	if err != nil {
		return u, err
	}
	if u.Peak, err = c.readInt(peakFile); err != nil {
		return u, err
	}
	stat, err := c.readKeys("memory.stat")
	if err != nil {
		return u, err
	}
	u.WorkingSet = max(0, usage-stat[inactiveKey])
	events, err := c.readKeys(eventsFile)
	if err != nil {
		return u, err
	}
	u.OOMKills = events["oom_kill"]
	return u, nil
}

func (c *MemoryCgroup) readInt(file string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readKeys reads a file of "key value" lines.
func (c *MemoryCgroup) readKeys(file string) (map[string]int64, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out, nil
}

// remove removes the cgroup, once its processes have exited.
func (c *MemoryCgroup) remove() error { return os.Remove(c.dir) }
