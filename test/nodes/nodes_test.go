// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package nodes tests the test bed's nodes themselves: that a Deployment runs as real
// pods from an image built here, that a pod reaches its own API server through the
// kubernetes Service with in-cluster configuration, that its log can be read through
// the API server, and that a bed leaves nothing behind, whether it stops or its test
// binary is killed.
package nodes

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// podTimeout bounds the wait for a Deployment's pod to be Ready.
const podTimeout = 3 * time.Minute

// inclusterImage returns the test image's reference and archive.
func inclusterImage(t testing.TB) (ref, archive string) {
	t.Helper()
	ref = testbed.Getenv(testbed.InclusterImageEnv)
	archive = filepath.Join(testbed.Getenv(testbed.ImagesDirEnv), "incluster.tar")
	if ref == "" || testbed.Getenv(testbed.ImagesDirEnv) == "" {
		t.Fatalf("%s and %s are not set: run the tests through 'make test', which builds the test image ('make testbed-node-images')", testbed.InclusterImageEnv, testbed.ImagesDirEnv)
	}
	return ref, archive
}

// TestNodeRunsInClusterClient runs the test image as a Deployment on the hub's node:
// its pod becomes Ready only once it has read its API server's version and its own
// identity through the kubernetes Service with its ServiceAccount token, and its log,
// read through the API server from the kubelet, says so.
func TestNodeRunsInClusterClient(t *testing.T) {
	ref, archive := inclusterImage(t)
	start := time.Now()
	bed := testbed.Start(t, testbed.Options{Nodes: &testbed.NodeOptions{Clusters: []string{"hub"}, Images: []string{archive}}})
	t.Logf("test bed with a node on the hub started in %s", time.Since(start).Round(time.Millisecond))

	ns := bed.Hub.Namespace(t, "incluster")
	client, err := kubernetes.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), podTimeout)
	defer cancel()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, inclusterDeployment(ref), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the Deployment: %v", err)
	}
	pod := waitDeploymentPodReady(ctx, t, client, ns, "incluster")
	if pod.Spec.NodeName != bed.Nodes["hub"].Name {
		t.Errorf("the pod runs on node %q, want %q", pod.Spec.NodeName, bed.Nodes["hub"].Name)
	}

	// The log, as kubectl logs reads it: the API server asks the node's kubelet.
	logs, err := client.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("read the pod's log through the API server: %v", err)
	}
	for _, want := range []string{
		"reached the API server at https://10.96.0.1:443 ",
		fmt.Sprintf(" as system:serviceaccount:%s:default\n", ns),
	} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("the pod's log lacks %q; it is:\n%s", want, logs)
		}
	}
}

// TestNodesOfTwoClusters gives the hub and a spoke a node each, one after the other
// with AddNode, and runs the test image on both: each pod reaches its own API server
// through its own cluster's kubernetes Service (a ServiceAccount token of one cluster
// means nothing to the other, whose signing key differs), so the two nodes' Services,
// pod networks and kubelets do not mix.
func TestNodesOfTwoClusters(t *testing.T) {
	ref, archive := inclusterImage(t)
	bed := testbed.Start(t, testbed.Options{Spokes: []string{"cluster1"}, Nodes: &testbed.NodeOptions{Images: []string{archive}}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*podTimeout)
	defer cancel()
	clusters := map[string]*testbed.Cluster{"hub": bed.Hub, "cluster1": bed.Spokes["cluster1"]}
	for _, name := range []string{"hub", "cluster1"} {
		start := time.Now()
		if _, err := bed.AddNode(ctx, name); err != nil {
			t.Fatal(err)
		}
		t.Logf("the node of %s was Ready in %s", name, time.Since(start).Round(time.Millisecond))
	}
	if _, err := bed.AddNode(ctx, "hub"); err == nil {
		t.Errorf("a second node for the hub started; want an error")
	}
	// Both Deployments first, so both nodes start their pods at once.
	namespaces := map[string]string{}
	for name, c := range clusters {
		ns := c.Namespace(t, "incluster")
		if _, err := clientOf(t, c).AppsV1().Deployments(ns).Create(ctx, inclusterDeployment(ref), metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: create the Deployment: %v", name, err)
		}
		namespaces[name] = ns
	}
	for name, c := range clusters {
		client, ns := clientOf(t, c), namespaces[name]
		pod := waitDeploymentPodReady(ctx, t, client, ns, "incluster")
		if want := bed.Nodes[name].Name; pod.Spec.NodeName != want {
			t.Errorf("%s: the pod runs on node %q, want %q", name, pod.Spec.NodeName, want)
		}
		logs, err := client.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("%s: read the pod's log: %v", name, err)
		}
		if want := fmt.Sprintf(" as system:serviceaccount:%s:default\n", ns); !strings.Contains(string(logs), want) {
			t.Errorf("%s: the pod's log lacks %q; it is:\n%s", name, want, logs)
		}
	}
}

// clientOf returns an admin client of a cluster.
func clientOf(t *testing.T, c *testbed.Cluster) kubernetes.Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// inclusterDeployment is one replica of the test image, ready when its in-cluster
// requests succeeded, as a non-root user with nothing to pull.
func inclusterDeployment(ref string) *appsv1.Deployment {
	labels := map[string]string{"app": "incluster"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "incluster"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:            "incluster",
						Image:           ref,
						ImagePullPolicy: corev1.PullNever,
						ReadinessProbe:  testbed.HTTPReadiness("/readyz", intstr.FromInt32(8080)),
						SecurityContext: testbed.RestrictedSecurityContext(),
					}},
				},
			},
		},
	}
}

// waitDeploymentPodReady waits until the Deployment has a Ready pod and returns it;
// on timeout it fails with the pods' states and the namespace's events.
func waitDeploymentPodReady(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string) *corev1.Pod {
	t.Helper()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err == nil {
			for i := range pods.Items {
				for _, cond := range pods.Items[i].Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						return &pods.Items[i]
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no Ready pod of Deployment %s/%s: %v\n%s", ns, name, ctx.Err(), describe(client, ns))
		case <-tick.C:
		}
	}
}

// describe lists the namespace's pods and events, for a failure's message.
func describe(client kubernetes.Interface, ns string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sb strings.Builder
	if pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			status, _ := json.Marshal(p.Status)
			fmt.Fprintf(&sb, "pod %s on %q: %s\n", p.Name, p.Spec.NodeName, status)
			logs, err := client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](20)}).DoRaw(ctx)
			fmt.Fprintf(&sb, "its log (%v):\n%s\n", err, logs)
		}
	}
	if events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&sb, "event %s %s: %s %s\n", e.InvolvedObject.Name, e.Type, e.Reason, e.Message)
		}
	}
	return sb.String()
}

// bedTraces is what identifies a bed's nodes on the host, noted while they run.
type bedTraces struct {
	Network  string   // the bridge, and the prefix of every namespace and cgroup
	DataDirs []string // what the nodes mount under
	Cgroups  []string // the nodes' cgroups
	PIDs     []int    // every process in the nodes' cgroups and the node programs
	// HostFiles are what containerd and the CNI plugins keep outside the data
	// directories for the nodes' pod sandboxes: shim sockets and CNI results.
	HostFiles []string
}

// traces notes a running bed's nodes' traces, and checks that they are there.
func traces(t *testing.T, bed *testbed.Bed) bedTraces {
	t.Helper()
	tr := bedTraces{Network: bed.NetworkName()}
	for _, n := range bed.Nodes {
		tr.DataDirs = append(tr.DataDirs, n.DataDir())
		tr.Cgroups = append(tr.Cgroups, n.Cgroup())
		for _, p := range n.Processes() {
			tr.PIDs = append(tr.PIDs, p.PID())
		}
		tr.PIDs = append(tr.PIDs, cgroupPIDs(t, n.Cgroup())...)
		tr.HostFiles = append(tr.HostFiles, sandboxHostFiles(t, n)...)
	}
	if left := tr.leftovers(); len(left) == 0 {
		t.Fatalf("found no trace of the running nodes; the check of leftovers would pass for nothing")
	}
	return tr
}

// sandboxHostFiles lists, for each pod sandbox of the node, its shim's socket and its
// CNI results, which live on the host outside the node's data directory.
func sandboxHostFiles(t *testing.T, n *testbed.Node) []string {
	t.Helper()
	sandboxes, err := os.ReadDir(filepath.Join(n.DataDir(), "containerd", "state", "io.containerd.grpc.v1.cri", "sandboxes"))
	if err != nil {
		t.Fatalf("list the pod sandboxes of %s: %v", n.Name, err)
	}
	var files []string
	for _, sb := range sandboxes {
		socket := sha256.Sum256([]byte(filepath.Join(n.ContainerdSocket, "k8s.io", sb.Name())))
		results, _ := filepath.Glob("/var/lib/cni/results/*-" + sb.Name() + "-*")
		files = append(append(files, fmt.Sprintf("/run/containerd/s/%x", socket)), results...)
	}
	return files
}

// cgroupPIDs lists the processes in a cgroup and its descendants, in the pids
// hierarchy.
func cgroupPIDs(t *testing.T, cgroup string) []int {
	t.Helper()
	var pids []int
	root := filepath.Join("/sys/fs/cgroup/pids", cgroup)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "cgroup.procs" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list the processes of cgroup %s: %v", cgroup, err)
	}
	return pids
}

// leftovers lists what of the bed is still on the host: network namespaces, links,
// mounts, cgroups, data and processes.
func (tr bedTraces) leftovers() []string {
	var left []string
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, tr.Network+"-") {
				left = append(left, "network namespace "+strings.Fields(line)[0])
			}
		}
	} else {
		left = append(left, fmt.Sprintf("ip netns list: %v", err))
	}
	if links, _ := filepath.Glob("/sys/class/net/" + tr.Network + "*"); len(links) > 0 {
		for _, l := range links {
			if name := filepath.Base(l); name == tr.Network || strings.HasPrefix(name, tr.Network+"v") {
				left = append(left, "link "+name)
			}
		}
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		scan := bufio.NewScanner(f)
		for scan.Scan() {
			fields := strings.Fields(scan.Text())
			for _, dir := range tr.DataDirs {
				if len(fields) > 4 && strings.HasPrefix(fields[4], dir) {
					left = append(left, "mount "+fields[4])
				}
			}
		}
		f.Close()
	}
	for _, dir := range tr.DataDirs {
		if _, err := os.Stat(dir); err == nil {
			left = append(left, "directory "+dir)
		}
	}
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		for _, cg := range tr.Cgroups {
			if _, err := os.Stat(filepath.Join(h, cg)); err == nil {
				left = append(left, "cgroup "+filepath.Join(h, cg))
			}
		}
	}
	for _, f := range tr.HostFiles {
		if _, err := os.Stat(f); err == nil {
			left = append(left, "file "+f)
		}
	}
	for _, pid := range tr.PIDs {
		if alive(pid) {
			left = append(left, fmt.Sprintf("process %d", pid))
		}
	}
	return left
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	end := strings.LastIndexByte(string(stat), ')')
	return end < 0 || !strings.HasPrefix(strings.TrimSpace(string(stat[end+1:])), "Z")
}

// waitNoLeftovers polls until nothing of the bed is left, or fails with what is.
func waitNoLeftovers(t *testing.T, tr bedTraces, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := tr.leftovers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, the bed left:\n%s", timeout, strings.Join(left, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startPod runs the test image on the bed's hub and waits until it is Ready, so that
// the node has a sandbox, a container, their shims and a projected token volume.
func startPod(t *testing.T, bed *testbed.Bed, ref string) {
	t.Helper()
	client, err := kubernetes.NewForConfig(bed.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), podTimeout)
	defer cancel()
	if _, err := client.AppsV1().Deployments(metav1.NamespaceDefault).Create(ctx, inclusterDeployment(ref), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the Deployment: %v", err)
	}
	waitDeploymentPodReady(ctx, t, client, metav1.NamespaceDefault, "incluster")
}

// TestStopLeavesNothing stops a bed whose node runs a pod and checks that no network
// namespace, link, mount, cgroup, data or process of it is left.
func TestStopLeavesNothing(t *testing.T) {
	ref, archive := inclusterImage(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bed, err := testbed.New(ctx, testbed.Options{Dir: t.TempDir(), Nodes: &testbed.NodeOptions{Clusters: []string{"hub"}, Images: []string{archive}}})
	if err != nil {
		t.Fatalf("start the test bed: %v", err)
	}
	t.Cleanup(bed.Stop)
	startPod(t, bed, ref)
	tr := traces(t, bed)

	start := time.Now()
	bed.Stop()
	t.Logf("the bed stopped in %s", time.Since(start).Round(time.Millisecond))
	// Stop returns once everything is gone: nothing to wait for.
	if left := tr.leftovers(); len(left) > 0 {
		t.Fatalf("the stopped bed left:\n%s", strings.Join(left, "\n"))
	}
}

// deadBedEnv makes the test binary, run again by startDeadBedHelper, the test bed
// that is killed: TestDeadBedHelper starts a bed with a node and a pod,
// prints its traces and waits to be killed.
const deadBedEnv = "TESTBED_NODES_DEAD_BED_DIR"

// TestKilledBedLeavesNothing kills (SIGKILL) a test binary whose bed's node runs a
// pod, and checks that the bed's guard removes every trace of it.
func TestKilledBedLeavesNothing(t *testing.T) {
	helper, tr := startDeadBedHelper(t)
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	start := time.Now()
	waitNoLeftovers(t, tr, 2*time.Minute)
	t.Logf("the guard removed the killed bed in %s", time.Since(start).Round(time.Millisecond))
}

// TestNextBedCleansDeadBed kills a test binary whose bed runs a pod together with the
// bed's guard, as a kill of everything at once would, and checks that the next bed
// to start removes what the dead one left before it starts its own nodes.
func TestNextBedCleansDeadBed(t *testing.T) {
	_, archive := inclusterImage(t)
	helper, tr := startDeadBedHelper(t)
	guard := childWith(t, helper.Process.Pid, "node-cleanup")
	for _, pid := range []int{guard, helper.Process.Pid} {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	_ = helper.Wait()
	if left := tr.leftovers(); len(left) == 0 {
		t.Fatal("the dead bed left nothing without its guard; the test would pass for nothing")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	next, err := testbed.New(ctx, testbed.Options{Dir: t.TempDir(), Nodes: &testbed.NodeOptions{Clusters: []string{"hub"}, Images: []string{archive}}})
	if err != nil {
		t.Fatalf("start the next test bed: %v", err)
	}
	defer next.Stop()
	if left := tr.leftovers(); len(left) > 0 {
		t.Fatalf("the next bed started with the dead bed's leftovers still there:\n%s", strings.Join(left, "\n"))
	}
}

// TestBedTakesBackStaleVeths starts a bed while links hold the names of two nodes'
// veths for every free bed number, as a dead bed's veths do until the kernel destroys
// their namespaces, and checks that the bed takes the names back: its node starts on
// the first, and the second is gone.
func TestBedTakesBackStaleVeths(t *testing.T) {
	_, archive := inclusterImage(t)
	var stale []string
	t.Cleanup(func() {
		for _, link := range stale {
			_ = exec.Command("ip", "link", "delete", link).Run()
		}
	})
	for n := 1; n <= 250; n++ {
		bridge := fmt.Sprintf("tmb%d", n)
		if _, err := os.Stat("/sys/class/net/" + bridge); err == nil {
			continue // a running bed's
		}
		for _, link := range []string{bridge + "v0", bridge + "v1"} {
			if out, err := exec.Command("ip", "link", "add", link, "type", "veth", "peer", "name", link+"p").CombinedOutput(); err != nil {
				t.Fatalf("make the stale veth %s: %v: %s", link, err, out)
			}
			stale = append(stale, link)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bed, err := testbed.New(ctx, testbed.Options{Dir: t.TempDir(), Nodes: &testbed.NodeOptions{Clusters: []string{"hub"}, Images: []string{archive}}})
	if err != nil {
		t.Fatalf("start the test bed beside stale veths: %v", err)
	}
	defer bed.Stop()
	first, second := bed.NetworkName()+"v0", bed.NetworkName()+"v1"
	if !slices.Contains(stale, first) {
		t.Fatalf("the bed took the number of %s, which had no stale veth; the test would pass for nothing", first)
	}
	master, err := os.Readlink("/sys/class/net/" + first + "/master")
	if err != nil || filepath.Base(master) != bed.NetworkName() {
		t.Fatalf("%s is not the node's veth on the bed's bridge %s: its master is %q (%v)", first, bed.NetworkName(), master, err)
	}
	if _, err := os.Stat("/sys/class/net/" + second); err == nil {
		t.Fatalf("the stale veth %s is still there", second)
	}
}

// childWith returns the child process of parent whose command line holds s.
func childWith(t *testing.T, parent int, s string) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		data, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		end := strings.LastIndexByte(string(data), ')')
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
		if strings.Contains(string(cmdline), s) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
			return pid
		}
	}
	t.Fatalf("process %d has no child whose command line holds %q", parent, s)
	return 0
}

// startDeadBedHelper runs the test binary again as TestDeadBedHelper and returns it
// once its bed's node runs a pod, with the bed's traces.
func startDeadBedHelper(t *testing.T) (*exec.Cmd, bedTraces) {
	t.Helper()
	inclusterImage(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeadBedHelper$", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), deadBedEnv+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var tr bedTraces
	found := make(chan error, 1)
	go func() {
		scan := bufio.NewScanner(out)
		var log strings.Builder
		for scan.Scan() {
			line := scan.Text()
			if rest, ok := strings.CutPrefix(line, "TRACES "); ok {
				found <- json.Unmarshal([]byte(rest), &tr)
				return
			}
			log.WriteString(line + "\n")
		}
		found <- fmt.Errorf("the helper ended without its traces:\n%s", log.String())
	}()
	select {
	case err := <-found:
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
	case <-time.After(6 * time.Minute):
		t.Fatalf("the helper did not start its bed in time:\n%s", stderr.String())
	}
	return cmd, tr
}

// TestDeadBedHelper is the bed that TestKilledBedLeavesNothing and
// TestNextBedCleansDeadBed kill; it runs only there.
func TestDeadBedHelper(t *testing.T) {
	dir := os.Getenv(deadBedEnv)
	if dir == "" {
		t.Skip("runs only as the helper of TestKilledBedLeavesNothing")
	}
	ref, archive := inclusterImage(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bed, err := testbed.New(ctx, testbed.Options{Dir: dir, Nodes: &testbed.NodeOptions{Clusters: []string{"hub"}, Images: []string{archive}}})
	if err != nil {
		t.Fatalf("start the test bed: %v", err)
	}
	defer bed.Stop()
	startPod(t, bed, ref)
	data, err := json.Marshal(traces(t, bed))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("TRACES %s\n", data)
	select {} // until killed
}
