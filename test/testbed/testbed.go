// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package testbed runs the real programs of a traffic-migration fleet as local
// processes for tests and the demo: one etcd, a hub kube-apiserver with OCM's and this
// project's CRDs, any number of spoke kube-apiservers, and a Prometheus 3. On demand
// it runs a real OCM hub on the hub (StartOCMHub) and joins the spokes to it with the
// real clusteradm and OCM's klusterlet agents (JoinSpokes). The programs are built by
// the Makefile from pinned tools modules (see hack/tools); the test bed finds them
// through the TESTBED_* environment variables.
//
// With Options.Nodes, clusters also get real nodes (containerd, runc, CNI, kubelet,
// kube-proxy, and the cluster's kube-scheduler and kube-controller-manager), so that
// the project's image runs as pods; node.go says how. Without, the bed runs no pods.
//
// It also runs this project's binaries as processes (StartManager, StartAddonAgent),
// and a TrafficSource, request counters that its Prometheus scrapes. The objects that
// tests make on the bed's clusters are package fixture's (test/fixture).
//
// Everything the test bed starts is stopped by Stop, and killed by the kernel if the
// test binary dies first (the nodes' containers, which outlive their containerd, by
// the bed's guard process).
package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
)

// Options says what the test bed runs.
type Options struct {
	// Spokes names the spoke clusters to start; each gets its own kube-apiserver.
	Spokes []string
	// Prometheus, when set, starts a Prometheus with these scrape jobs.
	Prometheus *PrometheusOptions
	// Dir holds the programs' data and logs. Default: a new temporary directory,
	// removed by Stop.
	Dir string
	// Nodes, when set, gives the test bed a network for nodes and starts a node on
	// each cluster it names; AddNode adds more later. Nil: a process-only bed, whose
	// clusters run no pods.
	Nodes *NodeOptions
	// ChartInstallsCRD leaves this project's CRD off the hub, for a test that installs
	// it with the chart as a user's hub gets it (helm refuses to take over a CRD it
	// did not create). The hub still gets OCM's CRDs.
	ChartInstallsCRD bool
	// Registry starts an OCI registry (Bed.Registry) on the bed's host address, which
	// the nodes' containerd pulls from.
	Registry bool
}

// Bed is a running test bed.
type Bed struct {
	// Hub is the hub cluster, with OCM's CRDs and (unless Options.ChartInstallsCRD)
	// this project's installed.
	Hub *Cluster
	// Spokes are the spoke clusters by name, with OCM's spoke CRDs installed.
	Spokes map[string]*Cluster
	// Prometheus is the Prometheus, when Options.Prometheus was set.
	Prometheus *Prometheus
	// EtcdURL is the address of the etcd that stores every cluster.
	EtcdURL string
	// OCM is the OCM hub control plane, once StartOCMHub has run.
	OCM *OCMHub
	// Klusterlets are the spokes that joined the OCM hub, by cluster name.
	Klusterlets map[string]*Klusterlet
	// Nodes are the clusters' nodes, by cluster name.
	Nodes map[string]*Node
	// Registry is the OCI registry, when Options.Registry was set.
	Registry *Registry

	dir     string
	ownDir  bool
	mu      sync.Mutex
	stopped bool
	etcd    *Process
	others  []*Process // started by later components (controllers, agents), stopped first

	network     *bedNetwork // nil without nodes
	nodeOptions NodeOptions
}

// New starts a test bed. On error, whatever it had started is stopped.
func New(ctx context.Context, opts Options) (_ *Bed, err error) {
	b := &Bed{Spokes: map[string]*Cluster{}, Klusterlets: map[string]*Klusterlet{}, Nodes: map[string]*Node{}, dir: opts.Dir}
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "testbed-"); err != nil {
			return nil, err
		}
		b.ownDir = true
	}
	defer func() {
		if err != nil {
			b.Stop()
		}
	}()

	if opts.Nodes != nil {
		// The network first: the API servers listen on its host address.
		b.nodeOptions = opts.Nodes.withDefaults()
		if b.network, err = newBedNetwork(ctx, b.dir); err != nil {
			return nil, err
		}
	}
	if b.etcd, b.EtcdURL, err = startEtcd(ctx, b.dir); err != nil {
		return nil, err
	}
	hubCRDs, err := hubCRDFiles(!opts.ChartInstallsCRD)
	if err != nil {
		return nil, err
	}
	spokeCRDs, err := ocmCRDFiles(spokeOCMCRDs)
	if err != nil {
		return nil, err
	}

	// The API servers start one after the other: on two cores, starting them together
	// is no faster and makes each one's start-up harder to read in its log.
	if b.Hub, err = startCluster(ctx, "hub", b.dir, b.EtcdURL, b.network); err != nil {
		return nil, err
	}
	if err := InstallCRDs(ctx, b.Hub.Config, hubCRDs...); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	for _, name := range opts.Spokes {
		spoke, err := startCluster(ctx, name, b.dir, b.EtcdURL, b.network)
		if err != nil {
			return nil, err
		}
		b.Spokes[name] = spoke
		if err := InstallCRDs(ctx, spoke.Config, spokeCRDs...); err != nil {
			return nil, fmt.Errorf("spoke %s: %w", name, err)
		}
	}
	if opts.Prometheus != nil {
		if b.Prometheus, err = startPrometheus(ctx, b.dir, b.listenHost(), *opts.Prometheus); err != nil {
			return nil, err
		}
	}
	// The registry before the nodes, whose containerd is configured to pull from it.
	if opts.Registry {
		if b.Registry, err = startRegistry(ctx, b.dir, b.listenHost()); err != nil {
			return nil, err
		}
	}
	if opts.Nodes != nil {
		for _, name := range opts.Nodes.Clusters {
			if _, err := b.AddNode(ctx, name); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// Start starts a test bed for one test and stops it when the test ends. When the test
// fails, the end of every program's log is written to the test's log.
func Start(t testing.TB, opts Options) *Bed {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	b, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("start the test bed: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var sb strings.Builder
			b.DumpLogs(&sb, 8192)
			t.Log(sb.String())
		}
		b.Stop()
	})
	return b
}

// Dir is the directory that holds the programs' data and logs.
func (b *Bed) Dir() string { return b.dir }

// Track makes the test bed stop p with everything else, and print its log on failure.
func (b *Bed) Track(p *Process) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.others = append(b.others, p)
}

// Processes lists every process the test bed started, in start order.
func (b *Bed) Processes() []*Process {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ps []*Process
	if b.etcd != nil {
		ps = append(ps, b.etcd)
	}
	if b.Hub != nil {
		ps = append(ps, b.Hub.Process)
	}
	for _, s := range b.Spokes {
		ps = append(ps, s.Process)
	}
	if b.Prometheus != nil && b.Prometheus.Process != nil {
		ps = append(ps, b.Prometheus.Process)
	}
	if b.Registry != nil && b.Registry.Process != nil {
		ps = append(ps, b.Registry.Process)
	}
	return append(ps, b.others...)
}

// DumpLogs writes the last max bytes of every process's log to w.
func (b *Bed) DumpLogs(w io.Writer, max int64) {
	for _, p := range b.Processes() {
		fmt.Fprintf(w, "\n===== %s (%s) =====\n%s\n", p.Name, p.LogPath, p.Tail(max))
	}
}

// Stop stops every process, the latest started first, and removes the test bed's
// directory if the test bed made it. It is safe to call more than once.
func (b *Bed) Stop() {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.stopped = true
	b.mu.Unlock()

	// The nodes first, while the API servers still answer: each stops its pods' tasks
	// and containers before its own programs, then removes what it made.
	var cgroupParents []string
	for _, n := range b.nodeList() {
		n.stop()
		cgroupParents = append(cgroupParents, n.cgroupParents...)
	}
	removeCgroupParents(cgroupParents)
	ps := b.Processes()
	var wg sync.WaitGroup
	// Clients first (controllers, agents, Prometheus), then the API servers, etcd last.
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p == b.etcd {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop() }()
	}
	wg.Wait()
	if b.Registry != nil {
		b.Registry.stop() // stopped already: removes what was pushed
	}
	if b.etcd != nil {
		b.etcd.Stop()
	}
	if b.network != nil {
		b.network.remove()
	}
	if b.ownDir {
		_ = os.RemoveAll(b.dir)
	}
}

// Namespace creates a namespace with a unique name on the cluster for one test and
// deletes it when the test ends.
func (c *Cluster) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + rand.String(5)}}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		// Without a namespace controller the namespace stays Terminating; its deletion
		// still marks the test's objects as done with.
		err := client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
