// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Nodes: a cluster of the test bed can have one real node, as a kind cluster has.
//
// A bed started with Options.Nodes has a bridge on the host with a private address
// (10.213.<n>.1/24, n picked per bed), and every API server and the Prometheus of the
// bed listen on that address, so the pods of every node reach them: a pod reaches its
// own API server through the kubernetes Service with in-cluster configuration, the
// spokes' pods reach the hub's API server at the address OCM puts in their hub
// kubeconfig, and a pod on the hub reaches Prometheus at Bed.Prometheus.URL.
//
// Each node has its own network namespace, tmb<n>-<cluster>, joined to the bridge by a
// veth, with the address 10.213.<n>.(10+k). In it run, each a process of the bed:
// containerd (with runc, and the CNI bridge plugin giving pods addresses in
// 10.88.0.0/24 behind the node's address), the kubelet and kube-proxy (iptables mode,
// so each node's Service rules stay in its namespace). On the host run the cluster's
// kube-scheduler and its kube-controller-manager, with the controllers Deployments,
// ReplicaSets, ServiceAccount tokens and EndpointSlices need. The node's Node object is
// named <cluster>-node.
//
// Each node's containerd imports OCI archives (the pause image as its sandbox image,
// and NodeOptions.Images), which pods run with imagePullPolicy IfNotPresent or Never.
// The only registry it pulls from is the bed's own (Options.Registry), trusted through
// its registry configuration (config_path, registry.go); nothing else is pulled.
//
// Nodes need root and the Debian packages containerd, runc,
// containernetworking-plugins, iptables ('make testbed-nodes' installs them), and the
// programs kubelet, kube-proxy and kube-scheduler ('make testbed-nodes' builds them;
// TESTBED_KUBELET, TESTBED_KUBE_PROXY, TESTBED_KUBE_SCHEDULER).
//
// Stop stops each node's pods' tasks and containers, then its programs, kills what is
// left in its cgroups and namespace, unmounts its volumes, and removes its cgroups,
// network namespace and data, and then the bridge. If the test binary dies instead, a
// guard process does the same; and a new bed first removes what any dead bed left.

// The programs of a node and of a cluster with a node, built from the tools module
// hack/tools/kube.
var (
	// ProgramKubelet runs a node's pods.
	ProgramKubelet = Program{Name: "kubelet", EnvVar: "TESTBED_KUBELET"}
	// ProgramKubeProxy programs a node's Service rules.
	ProgramKubeProxy = Program{Name: "kube-proxy", EnvVar: "TESTBED_KUBE_PROXY"}
	// ProgramKubeScheduler puts a cluster's pods on its node.
	ProgramKubeScheduler = Program{Name: "kube-scheduler", EnvVar: "TESTBED_KUBE_SCHEDULER"}
)

// The environment variables that name the images the Makefile builds ('make image'):
// the directory of their OCI archives, and the references of the product's image and
// of the pause image.
const (
	ImagesDirEnv  = "TESTBED_IMAGES_DIR"
	ImageEnv      = "TESTBED_IMAGE"
	PauseImageEnv = "TESTBED_PAUSE_IMAGE"
)

// podCIDR is the pods' network on every node: each node has its own namespace, so the
// nodes' pod networks never meet, and pods reach the bed through the node's address.
const podCIDR = "10.88.0.0/24"

// nodeReadyTimeout bounds the start of a node, from its network namespace to its Node
// being Ready; nodeStepTimeout bounds each command the start runs.
const (
	nodeReadyTimeout = 3 * time.Minute
	nodeStepTimeout  = time.Minute
)

// NodeOptions says which clusters of the test bed get a node, and what the nodes run.
type NodeOptions struct {
	// Clusters names the clusters ("hub" or spoke names) that get a node when the bed
	// starts.
	Clusters []string
	// PauseImage is the reference of the pods' sandbox image and PauseArchive its OCI
	// archive. Default: $TESTBED_PAUSE_IMAGE and $TESTBED_IMAGES_DIR/pause.tar.
	PauseImage, PauseArchive string
	// Images are more OCI archives that every node imports, e.g. the product's image
	// ($TESTBED_IMAGES_DIR/traffic-migration.tar) or a test's own.
	Images []string
}

// withDefaults fills in the pause image from the environment.
func (o NodeOptions) withDefaults() NodeOptions {
	if o.PauseImage == "" {
		o.PauseImage = Getenv(PauseImageEnv)
	}
	if o.PauseArchive == "" && Getenv(ImagesDirEnv) != "" {
		o.PauseArchive = filepath.Join(Getenv(ImagesDirEnv), "pause.tar")
	}
	return o
}

// Node is a real Kubernetes node of one cluster of the test bed.
type Node struct {
	// Name is the Node object's name, <cluster>-node.
	Name string
	// Cluster is the cluster whose node it is.
	Cluster *Cluster
	// IP is the node's address on the test bed's bridge (its InternalIP).
	IP string
	// NetNS is the node's network namespace (a name for ip netns and nsenter).
	NetNS string
	// ContainerdSocket is the address of the node's containerd, for ctr.
	ContainerdSocket string
	// Containerd, Kubelet and KubeProxy run in the node's network namespace;
	// Scheduler on the host.
	Containerd, Kubelet, KubeProxy, Scheduler *Process

	configDir string // configuration, certificates and logs; kept until the bed's directory goes
	dataDir   string // kubelet root, containerd root and state, runc root: removed on stop
	cgroup    string // the node's cgroup, the same path in every hierarchy
	// cgroupParents are the parents of the node's cgroup that the bed made.
	cgroupParents []string
	vethHost      string
	bedName       string
}

// AddNode starts a node for a cluster of a test bed started with Options.Nodes, and
// returns once the Node is Ready. It must come before anything starts the cluster's
// kube-controller-manager (StartOCMHub for the hub, JoinSpoke for a spoke), which
// then runs the controllers pods need. On error, what the node had started is removed.
func (b *Bed) AddNode(ctx context.Context, cluster string) (_ *Node, err error) {
	b.mu.Lock()
	c := b.clusterLocked(cluster)
	bedNet, stopped, k := b.network, b.stopped, len(b.Nodes)
	switch {
	case bedNet == nil:
		err = errors.New("the test bed has no network for nodes: start it with Options.Nodes")
	case stopped:
		err = errors.New("the test bed is stopped")
	case c == nil:
		err = fmt.Errorf("no cluster %q on the test bed", cluster)
	case c.node != nil:
		err = fmt.Errorf("cluster %s has a node already", cluster)
	case c.controllerManager != nil:
		err = fmt.Errorf("cluster %s: add its node before its kube-controller-manager starts (StartOCMHub, JoinSpoke)", cluster)
	}
	var n *Node
	if err == nil {
		n = &Node{
			Name:      cluster + "-node",
			Cluster:   c,
			IP:        bedNet.nodeIP(k),
			NetNS:     bedNet.name + "-" + cluster,
			configDir: filepath.Join(c.dir, "node"),
			vethHost:  fmt.Sprintf("%sv%d", bedNet.name, k),
			bedName:   bedNet.name,
		}
		n.dataDir = filepath.Join(bedNet.dataDir, n.NetNS)
		n.ContainerdSocket = filepath.Join(n.dataDir, "containerd.sock")
		c.node = n
		b.Nodes[cluster] = n
	}
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("add a node: %w", err)
	}
	defer func() {
		if err != nil {
			n.stop()
			err = fmt.Errorf("start the node of %s: %w", cluster, err)
		}
	}()
	for _, prog := range []Program{ProgramKubelet, ProgramKubeProxy, ProgramKubeScheduler, ProgramKubeControllerManager} {
		if _, err := prog.Path(); err != nil {
			return nil, err
		}
	}
	opts := b.nodeOptions
	if opts.PauseImage == "" || opts.PauseArchive == "" {
		return nil, fmt.Errorf("no pause image: set NodeOptions.PauseImage and PauseArchive, or %s and %s ('make image' builds it)", PauseImageEnv, ImagesDirEnv)
	}
	for _, dir := range []string{n.configDir, n.dataDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, nodeReadyTimeout)
	defer cancel()

	if err := n.makeNetwork(ctx, bedNet); err != nil {
		return nil, err
	}
	if n.cgroup, n.cgroupParents, err = makeNodeCgroup(n.NetNS); err != nil {
		return nil, err
	}
	if err := n.startContainerd(ctx, b, opts.PauseImage); err != nil {
		return nil, err
	}
	for _, archive := range append([]string{opts.PauseArchive}, opts.Images...) {
		if err := n.ImportImage(ctx, archive); err != nil {
			return nil, err
		}
	}
	if _, err := b.startKubeControllerManager(ctx, c, c == b.Hub); err != nil {
		return nil, err
	}
	if n.Scheduler, err = b.startScheduler(ctx, c); err != nil {
		return nil, err
	}
	if err := n.startKubelet(ctx, b); err != nil {
		return nil, err
	}
	if err := n.startKubeProxy(ctx, b); err != nil {
		return nil, err
	}
	if err := n.waitReady(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// clusterLocked returns the hub or the spoke of that name; b.mu is held.
func (b *Bed) clusterLocked(name string) *Cluster {
	if b.Hub != nil && b.Hub.Name == name {
		return b.Hub
	}
	return b.Spokes[name]
}

// nodeList returns the bed's nodes.
func (b *Bed) nodeList() []*Node {
	b.mu.Lock()
	defer b.mu.Unlock()
	nodes := make([]*Node, 0, len(b.Nodes))
	for _, n := range b.Nodes {
		nodes = append(nodes, n)
	}
	return nodes
}

// listenHost is the address the bed's servers listen on: the bridge's with nodes.
func (b *Bed) listenHost() string {
	if b.network != nil {
		return b.network.hostIP
	}
	return "127.0.0.1"
}

// ListenHost is the address the bed's servers (its CoreDNS among them) listen on:
// the bridge's with nodes, else 127.0.0.1. A manager that asks the bed's CoreDNS
// must allow it (--dns-nameserver-allowlist).
func (b *Bed) ListenHost() string { return b.listenHost() }

// makeNetwork makes the node's network namespace and joins it to the bed's bridge.
func (n *Node) makeNetwork(ctx context.Context, bedNet *bedNetwork) error {
	peer := n.vethHost + "p"
	steps := [][]string{
		{"netns", "add", n.NetNS},
		{"link", "add", n.vethHost, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", n.NetNS},
		{"link", "set", n.vethHost, "master", bedNet.name, "up"},
		{"-n", n.NetNS, "link", "set", peer, "name", "eth0"},
		{"-n", n.NetNS, "addr", "add", n.IP + "/24", "dev", "eth0"},
		{"-n", n.NetNS, "link", "set", "eth0", "up"},
		{"-n", n.NetNS, "link", "set", "lo", "up"},
		{"-n", n.NetNS, "route", "add", "default", "via", bedNet.hostIP},
	}
	for _, args := range steps {
		if err := runIP(ctx, args...); err != nil {
			return fmt.Errorf("make the node's network: %w", err)
		}
	}
	// The node routes its pods' traffic, and its bridge's traffic passes iptables
	// (kube-proxy's rules for a pod that reaches a Service that leads back to itself).
	for _, sysctl := range []string{"net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"} {
		if err := n.run(ctx, "sysctl", "-q", "-w", sysctl); err != nil {
			return fmt.Errorf("make the node's network: %w", err)
		}
	}
	return nil
}

// run runs a command in the node's network namespace. nsenter enters the network
// namespace alone: 'ip netns exec' would also mount a /sys of the namespace, where
// the kubelet finds no cgroups.
func (n *Node) run(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, nodeStepTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nsenter", append([]string{"--net=/run/netns/" + n.NetNS, "--", name}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startInNode starts a program of the node in its network namespace and cgroup, as a
// process of the bed.
func (n *Node) startInNode(b *Bed, name, bin, logName string, args ...string) (*Process, error) {
	p, err := startCommand(name+" ("+n.Cluster.Name+")", "nsenter", n.configDir, logName, nil,
		append([]string{"--net=/run/netns/" + n.NetNS, "--", bin}, args...)...)
	if err != nil {
		return nil, err
	}
	b.Track(p)
	if err := joinNodeCgroup(n.cgroup, p.PID()); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// startContainerd writes the node's containerd configuration and starts it; it is
// ready when ctr reaches it.
func (n *Node) startContainerd(ctx context.Context, b *Bed, pauseImage string) error {
	config, err := n.writeContainerdConfig(ctx, pauseImage, b.Registry)
	if err != nil {
		return err
	}
	if n.Containerd, err = n.startInNode(b, "containerd", "/usr/bin/containerd", "containerd", "--config", config); err != nil {
		return err
	}
	return n.Containerd.waitReady(ctx, nodeStepTimeout, func(ctx context.Context) error {
		_, err := n.ctr(ctx, "version")
		return err
	})
}

// ctr runs ctr against the node's containerd, in the namespace of Kubernetes' images
// and containers.
func (n *Node) ctr(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, nodeStepTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", n.ContainerdSocket, "--namespace", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// ImportImage imports an OCI archive (podman save --format oci-archive) into the
// node's containerd, under the reference the archive names.
func (n *Node) ImportImage(ctx context.Context, archive string) error {
	if _, err := os.Stat(archive); err != nil {
		return fmt.Errorf("import image: %w ('make image' builds the test bed's images)", err)
	}
	if _, err := n.ctr(ctx, "images", "import", archive); err != nil {
		return fmt.Errorf("import image %s into the node of %s: %w", archive, n.Cluster.Name, err)
	}
	return nil
}

// startScheduler starts the cluster's kube-scheduler on the host.
func (b *Bed) startScheduler(ctx context.Context, c *Cluster) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.dir, "kube-scheduler")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return b.startTracked(ctx, "kube-scheduler ("+c.Name+")", ProgramKubeScheduler, c.dir, "kube-scheduler",
		nil, controllerReadyTimeout, healthzReady("https://"+hostPort(port)+"/healthz"),
		"--kubeconfig="+c.KubeconfigPath,
		"--authentication-kubeconfig="+c.KubeconfigPath,
		"--authorization-kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+dir,
		"--profiling=false",
	)
}

// startKubelet writes the kubelet's certificates and configuration and starts it.
// It authenticates as system:node:<name>, which the API server's Node authorizer
// limits to its own node and pods.
func (n *Node) startKubelet(ctx context.Context, b *Bed) error {
	bin, err := ProgramKubelet.Path()
	if err != nil {
		return err
	}
	kubeconfig, _, err := n.Cluster.writeKubeconfig("kubelet-"+n.Name, "system:node:"+n.Name, []string{"system:nodes"})
	if err != nil {
		return err
	}
	serving, err := n.Cluster.CA.issue(n.configDir, "kubelet-serving", "system:node:"+n.Name, nil, n.IP, n.Name)
	if err != nil {
		return err
	}
	config, err := n.writeKubeletConfig(serving)
	if err != nil {
		return err
	}
	n.Kubelet, err = n.startInNode(b, "kubelet", bin, "kubelet",
		"--config="+config,
		"--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(n.dataDir, "kubelet"),
		"--node-ip="+n.IP,
		"--hostname-override="+n.Name,
	)
	if err != nil {
		return err
	}
	return n.Kubelet.waitReady(ctx, nodeStepTimeout, healthzReady("http://"+net.JoinHostPort(n.IP, strconv.Itoa(kubeletHealthzPort))+"/healthz"))
}

// startKubeProxy starts kube-proxy in iptables mode as system:kube-proxy, the user
// the API server's default RBAC binds to system:node-proxier.
func (n *Node) startKubeProxy(ctx context.Context, b *Bed) error {
	bin, err := ProgramKubeProxy.Path()
	if err != nil {
		return err
	}
	kubeconfig, _, err := n.Cluster.writeKubeconfig("kube-proxy-"+n.Name, "system:kube-proxy", nil)
	if err != nil {
		return err
	}
	config, err := n.writeKubeProxyConfig(kubeconfig)
	if err != nil {
		return err
	}
	n.KubeProxy, err = n.startInNode(b, "kube-proxy", bin, "kube-proxy", "--config="+config)
	return err
}

// waitReady waits until the Node is Ready.
func (n *Node) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(n.Cluster.Config)
	if err != nil {
		return err
	}
	return n.Kubelet.waitReady(ctx, nodeReadyTimeout, func(ctx context.Context) error {
		node, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				if cond.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("node %s is not Ready: %s: %s", n.Name, cond.Reason, cond.Message)
			}
		}
		return fmt.Errorf("node %s has no Ready condition yet", n.Name)
	})
}

// Processes are the node's programs that run, in start order.
func (n *Node) Processes() []*Process {
	var ps []*Process
	for _, p := range []*Process{n.Containerd, n.Scheduler, n.Kubelet, n.KubeProxy} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// stop stops the node: the kubelet first, so that it starts no pod again, then every
// task and container of its containerd, then its programs; then the cleanup removes
// what is left (shims, mounts, cgroups, the network namespace, the data). It is safe
// to call more than once, also on a node that started only partly.
func (n *Node) stop() {
	if n.Kubelet != nil {
		n.Kubelet.Stop()
	}
	if n.Containerd != nil && !n.Containerd.Exited() {
		n.removeContainers()
	}
	for _, p := range []*Process{n.KubeProxy, n.Containerd} {
		if p != nil {
			p.Stop()
		}
	}
	if err := runNodeCleanup(n.NetNS, n.dataDir, false); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: clean up the node of %s: %v\n", n.Cluster.Name, err)
	}
	// The veth goes with the namespace only once the kernel destroys it, which may be
	// later: delete it now (with its peer), so that its name is free when stop returns.
	ctx, cancel := context.WithTimeout(context.Background(), nodeStepTimeout)
	defer cancel()
	if err := deleteLink(ctx, n.vethHost); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: clean up the node of %s: %v\n", n.Cluster.Name, err)
	}
}

// removeContainers kills every task of the node's containerd and deletes its
// containers. Failures are left to the cleanup, which kills whatever remains.
func (n *Node) removeContainers() {
	ctx, cancel := context.WithTimeout(context.Background(), nodeStepTimeout)
	defer cancel()
	out, err := n.ctr(ctx, "containers", "list", "--quiet")
	if err != nil {
		return
	}
	for _, id := range strings.Fields(out) {
		_, _ = n.ctr(ctx, "tasks", "kill", "--signal", "SIGKILL", id)
		_, _ = n.ctr(ctx, "tasks", "delete", "--force", id)
		_, _ = n.ctr(ctx, "containers", "delete", id)
	}
}

// Cgroup is the node's cgroup, the same path in every cgroup hierarchy: the kubelet's
// cgroupRoot, which also holds containerd, its shims and the node's programs.
func (n *Node) Cgroup() string { return n.cgroup }

// DataDir holds what the node's programs keep and mount: the kubelet's root (the pods'
// volumes), containerd's root and state (snapshots, the pods' network namespaces).
// Stop unmounts and removes it.
func (n *Node) DataDir() string { return n.dataDir }

// NetworkName is the name of the bed's bridge, which also starts the name of every
// network namespace and cgroup of its nodes; empty without nodes.
func (b *Bed) NetworkName() string {
	if b.network == nil {
		return ""
	}
	return b.network.name
}

// deploymentTimeout bounds WaitDeploymentAvailable.
const deploymentTimeout = 3 * time.Minute

// WaitDeploymentAvailable waits until a Deployment of the cluster has all its replicas
// updated and available, as `kubectl rollout status` does, on a cluster with a node.
// On timeout the error says what the Deployment's pods are waiting for.
func (c *Cluster) WaitDeploymentAvailable(ctx context.Context, namespace, name string) error {
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, deploymentTimeout, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err
		case d.Spec.Replicas != nil && d.Status.ObservedGeneration >= d.Generation &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas:
			return true, nil
		default:
			last = fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, ptr.Deref(d.Spec.Replicas, 0))
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("Deployment %s/%s of %s not available after %s: %w; its pods: %s",
			namespace, name, c.Name, deploymentTimeout, errors.Join(last, err), podStates(client, namespace))
	}
	return nil
}

// podStates says, for an error, what each pod of the namespace waits for.
func podStates(client kubernetes.Interface, namespace string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("(cannot list them: %v)", err)
	}
	var states []string
	for _, p := range pods.Items {
		state := string(p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case cs.State.Waiting != nil:
				state += fmt.Sprintf(", %s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
			case cs.State.Terminated != nil:
				state += fmt.Sprintf(", %s terminated: %s (exit %d)", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
			case !cs.Ready:
				state += fmt.Sprintf(", %s not ready (%d restarts)", cs.Name, cs.RestartCount)
			}
		}
		states = append(states, p.Name+": "+state)
	}
	if len(states) == 0 {
		return "none"
	}
	return strings.Join(states, "; ")
}
