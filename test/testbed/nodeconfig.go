// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// The ports of a node's kubelet, on the node's address (each node has its own
// network namespace, so every node can use the usual ones).
const (
	kubeletPort        = 10250
	kubeletHealthzPort = 10248
)

// containerdConfig is a node's containerd configuration: everything of its own under
// the node's data directory (root, state, socket, runc's state, the pods' network
// namespaces, the CNI configuration and address leases), so nodes never share state
// and the cleanup finds every mount under one directory.
//
// restrict_oom_score_adj: containerd runs without CAP_SYS_RESOURCE here and cannot
// lower a sandbox's oom_score_adj, and every sandbox fails without it.
// base_runtime_spec: containerd's default spec without process.rlimits, which the
// kernel refuses to let runc set here (see "Nodes on the test bed" in docs/development.md).
const containerdConfig = `version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      base_runtime_spec = %[5]q
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[6]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[7]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[8]q
`

// writeContainerdConfig writes the node's containerd configuration, its base runtime
// spec, its CNI configuration and its registry configuration (config_path: the bed's
// registry, when there is one), and returns the configuration's path.
func (n *Node) writeContainerdConfig(ctx context.Context, pauseImage string, registry *Registry) (string, error) {
	spec, err := baseRuntimeSpec(ctx)
	if err != nil {
		return "", err
	}
	specPath := filepath.Join(n.configDir, "base-runtime-spec.json")
	if err := os.WriteFile(specPath, spec, 0o600); err != nil {
		return "", err
	}
	cniDir := filepath.Join(n.configDir, "cni")
	if err := os.MkdirAll(cniDir, 0o700); err != nil {
		return "", err
	}
	cni, err := json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "testbed",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "cni0",
				"isGateway":   true,
				"ipMasq":      true,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": podCIDR}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": filepath.Join(n.dataDir, "cni-ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cniDir, "10-testbed.conflist"), cni, 0o600); err != nil {
		return "", err
	}
	registries, err := writeRegistryHosts(n.configDir, registry)
	if err != nil {
		return "", err
	}
	config := fmt.Sprintf(containerdConfig,
		filepath.Join(n.dataDir, "containerd", "root"),
		filepath.Join(n.dataDir, "containerd", "state"),
		n.ContainerdSocket,
		pauseImage,
		specPath,
		filepath.Join(n.dataDir, "runc"),
		cniDir,
		registries,
	)
	path := filepath.Join(n.configDir, "containerd.toml")
	return path, os.WriteFile(path, []byte(config), 0o600)
}

// baseRuntimeSpec returns containerd's default OCI spec without process.rlimits.
func baseRuntimeSpec(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "ctr", "oci", "spec").Output()
	if err != nil {
		return nil, fmt.Errorf("read containerd's default runtime spec (ctr oci spec): %w", err)
	}
	var spec map[string]any
	if err := json.Unmarshal(out, &spec); err != nil {
		return nil, fmt.Errorf("read containerd's default runtime spec: %w", err)
	}
	if process, ok := spec["process"].(map[string]any); ok {
		delete(process, "rlimits")
	}
	return json.MarshalIndent(spec, "", "  ")
}

// writeKubeletConfig writes the kubelet's KubeletConfiguration: cgroup v1 allowed
// (1.35 refuses it by default), the cgroupfs driver under the node's own cgroup, no
// swap check, the node's containerd, TLS with a serving certificate of the cluster's
// CA, clients authenticated by the cluster's CA and authorized by the API server, no
// DNS server of the host for pods, and eviction and image collection thresholds that
// a busy shared disk does not reach (the imported images cannot be pulled again).
func (n *Node) writeKubeletConfig(serving *certPair) (string, error) {
	resolv := filepath.Join(n.configDir, "resolv.conf")
	if err := os.WriteFile(resolv, nil, 0o600); err != nil {
		return "", err
	}
	config := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"address":                  n.IP,
		"port":                     kubeletPort,
		"readOnlyPort":             0,
		"healthzBindAddress":       n.IP,
		"healthzPort":              kubeletHealthzPort,
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               n.cgroup,
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix://" + n.ContainerdSocket,
		"tlsCertFile":              serving.CertPath,
		"tlsPrivateKeyFile":        serving.KeyPath,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": n.Cluster.CA.CertPath},
		},
		"authorization":               map[string]any{"mode": "Webhook"},
		"clusterDomain":               "cluster.local",
		"resolvConf":                  resolv,
		"podLogsDir":                  filepath.Join(n.dataDir, "pod-logs"),
		"evictionHard":                map[string]string{"memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"serializeImagePulls":         false,
	}
	return n.writeYAML("kubelet-config.yaml", config)
}

// writeKubeProxyConfig writes kube-proxy's KubeProxyConfiguration: iptables mode, the
// node's name and address, and no conntrack tuning (a network namespace cannot set
// the host's conntrack table size).
func (n *Node) writeKubeProxyConfig(kubeconfig string) (string, error) {
	config := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": kubeconfig},
		"mode":               "iptables",
		"hostnameOverride":   n.Name,
		"bindAddress":        n.IP,
		"clusterCIDR":        podCIDR,
		"conntrack":          map[string]any{"maxPerCore": 0, "min": 0},
		"metricsBindAddress": "127.0.0.1:10249",
		"healthzBindAddress": net.JoinHostPort(n.IP, "10256"),
	}
	return n.writeYAML("kube-proxy-config.yaml", config)
}

func (n *Node) writeYAML(name string, v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	path := filepath.Join(n.configDir, name)
	return path, os.WriteFile(path, data, 0o600)
}

// cgroupMounts lists the mount points of the host's cgroup hierarchies (v1 and, in
// the hybrid layout, the v2 one).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		line := scan.Text()
		pre, post, ok := strings.Cut(line, " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 {
			continue
		}
		if fstype, _, _ := strings.Cut(post, " "); fstype == "cgroup" || fstype == "cgroup2" {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts, scan.Err()
}

// makeNodeCgroup makes the node's cgroup, name, in every hierarchy, and returns its
// path (the same in each, as the kubelet's cgroupRoot must be). It lies under the test
// process's own memory cgroup, so that what accounts for the test's memory accounts for
// its pods' too. Each new cpuset cgroup gets its parent's CPUs and memory nodes, or no
// process could join it.
//
// It also returns the parents it had to make (on this kind of machine the test's memory
// cgroup exists in no other hierarchy), for removeCgroupParents.
func makeNodeCgroup(name string) (path string, madeParents []string, err error) {
	parent := "/"
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", nil, err
	}
	for _, line := range strings.Split(string(self), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",memory,") {
			parent = parts[2]
		}
	}
	path = filepath.Join(parent, name)
	mounts, err := cgroupMounts()
	if err != nil {
		return "", nil, fmt.Errorf("find the cgroup hierarchies: %w", err)
	}
	for _, mount := range mounts {
		dir := mount
		for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
			parentDir := dir
			dir = filepath.Join(dir, part)
			if err := os.Mkdir(dir, 0o755); err != nil {
				if os.IsExist(err) {
					continue
				}
				return "", madeParents, fmt.Errorf("make the node's cgroup %s: %w", dir, err)
			}
			if dir != filepath.Join(mount, path) {
				madeParents = append(madeParents, dir)
			}
			for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
				value, err := os.ReadFile(filepath.Join(parentDir, file))
				if err != nil {
					continue // not the cpuset hierarchy
				}
				if err := os.WriteFile(filepath.Join(dir, file), value, 0o644); err != nil {
					return "", madeParents, fmt.Errorf("make the node's cgroup %s: %w", dir, err)
				}
			}
		}
	}
	return path, madeParents, nil
}

// removeCgroupParents removes the parent cgroups that makeNodeCgroup made for the
// nodes of a bed, deepest first, once the nodes are gone; one that still holds a
// cgroup (another bed's node) stays.
func removeCgroupParents(dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, dir := range dirs {
		_ = os.Remove(dir)
	}
}

// joinNodeCgroup moves a process into the node's cgroup in every hierarchy, so that
// the cleanup finds it and everything it starts (containerd's shims and containers).
func joinNodeCgroup(path string, pid int) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, mount := range mounts {
		procs := filepath.Join(mount, path, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("move process %d into the node's cgroup %s: %w", pid, procs, err)
		}
	}
	return nil
}
