// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package clients

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// jvmClientSource is the JVM clients' program (jvm/Client.java), which Java 11 and
// later run from its source file.
//
//go:embed jvm/Client.java
var jvmClientSource []byte

// JVMConfig is a fleet of JVM applications that call a gateway by its name.
type JVMConfig struct {
	// Hostname is the name the clients call, and Port the gateway's port.
	Hostname string
	Port     int
	// JVMs is how many JVMs run, each with Workers threads sharing one HTTP client
	// and one address cache, each thread sending a request every Every.
	JVMs, Workers int
	Every         time.Duration
	// CacheTTL is the JVMs' networkaddress.cache.ttl in whole seconds: 30 is the
	// JVM's default, -1 keeps every answer for ever.
	CacheTTL int
	// Lookup resolves Hostname, as the platform's resolver would: the JVMs resolve
	// through a hosts file that follows it (jdk.net.hosts.file), refreshed every
	// 100 ms.
	Lookup LookupFunc
	// Clusters maps the clusters' names, as the backends answer them, to their
	// gateways' addresses, for Bound.
	Clusters map[string]netip.Addr
	// Dir holds the program and the hosts file; Java is the java program (default:
	// java from PATH; make deps-jdk installs Debian's OpenJDK 17).
	Dir, Java string
	Seed      uint64
}

// JVMFleet runs JVM applications as clients: real OpenJDK, its address cache and its
// HTTP client's connection pool, counted as Fleet counts Go clients.
type JVMFleet struct {
	cfg  JVMConfig
	jvms []*jvm
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// jvm is one running JVM and its last report.
type jvm struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu   sync.Mutex
	last jvmReport
}

// jvmReport is a line of Client.java's output.
type jvmReport struct {
	Served    int64            `json:"served"`
	Retried   int64            `json:"retried"`
	Failed    int64            `json:"failed"`
	Done      bool             `json:"done"`
	ByCluster map[string]int64 `json:"byCluster"`
	Last      []string         `json:"last"`
	Samples   []string         `json:"samples"`
	Retries   []string         `json:"retrySamples"`
}

// NewJVMFleet makes the fleet; Start runs it.
func NewJVMFleet(cfg JVMConfig) *JVMFleet { return &JVMFleet{cfg: cfg} }

// Start writes the hosts file from a first lookup, starts following DNS into it, and
// starts the JVMs, each with its own seed. It returns once every JVM reported.
func (f *JVMFleet) Start() (err error) {
	cfg := f.cfg
	if cfg.JVMs < 1 || cfg.Workers < 1 || cfg.Every <= 0 || cfg.Dir == "" || cfg.Lookup == nil {
		return errors.New("JVM clients: want JVMs, Workers, Every, Dir and Lookup")
	}
	java := cfg.Java
	if java == "" {
		if java, err = exec.LookPath("java"); err != nil {
			return fmt.Errorf("JVM clients: %w ('make deps-jdk' installs Debian's OpenJDK 17)", err)
		}
	}
	source := filepath.Join(cfg.Dir, "Client.java")
	if err := os.WriteFile(source, jvmClientSource, 0o600); err != nil {
		return err
	}
	hosts := filepath.Join(cfg.Dir, "hosts")
	if err := f.follow(context.Background(), hosts); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	f.wg.Go(func() {
		// A failed lookup keeps the last answer.
		wait.UntilWithContext(ctx, func(ctx context.Context) { _ = f.follow(ctx, hosts) }, 100*time.Millisecond)
	})
	defer func() {
		if err != nil {
			f.Halt()
		}
	}()
	for i := range cfg.JVMs {
		j := &jvm{done: make(chan struct{})}
		j.cmd = exec.Command(java, "-Djdk.net.hosts.file="+hosts, "-Xmx48m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			source, cfg.Hostname, strconv.Itoa(cfg.Port), strconv.Itoa(cfg.Workers), strconv.FormatInt(cfg.Every.Milliseconds(), 10),
			strconv.Itoa(cfg.CacheTTL), strconv.FormatUint(cfg.Seed*1000+uint64(i), 10))
		// The JVM dies with the test, whatever ends it.
		j.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var stderr strings.Builder
		j.cmd.Stderr = &stderr
		stdout, err := j.cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if j.stdin, err = j.cmd.StdinPipe(); err != nil {
			return err
		}
		if err := j.cmd.Start(); err != nil {
			return fmt.Errorf("start a JVM: %w", err)
		}
		f.jvms = append(f.jvms, j)
		reported := make(chan struct{})
		go func() {
			defer close(j.done)
			var once sync.Once
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				var r jvmReport
				if json.Unmarshal(sc.Bytes(), &r) != nil {
					continue
				}
				j.mu.Lock()
				j.last = r
				j.mu.Unlock()
				once.Do(func() { close(reported) })
			}
			_ = j.cmd.Wait()
		}()
		select {
		case <-reported:
		case <-j.done:
			return fmt.Errorf("a JVM ended before its first report: %s", strings.TrimSpace(stderr.String()))
		case <-time.After(time.Minute):
			return errors.New("a JVM did not report within a minute")
		}
	}
	return nil
}

// follow writes the addresses Lookup answers now into the hosts file, atomically.
func (f *JVMFleet) follow(ctx context.Context, hosts string) error {
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	addrs, err := f.cfg.Lookup(ctx)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&b, "%s %s\n", a.Unmap(), f.cfg.Hostname)
	}
	tmp := hosts + ".new"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, hosts)
}

// Halt closes the JVMs' standard input, which makes them finish their requests in
// flight and report once more, waits for them (killing one that does not end within
// 30 s), and stops following DNS.
func (f *JVMFleet) Halt() {
	for _, j := range f.jvms {
		_ = j.stdin.Close()
	}
	for _, j := range f.jvms {
		select {
		case <-j.done:
		case <-time.After(30 * time.Second):
			_ = j.cmd.Process.Kill()
			<-j.done
		}
	}
	if f.stop != nil {
		f.stop()
	}
	f.wg.Wait()
}

// Counts adds up the JVMs' last reports.
func (f *JVMFleet) Counts() Counts {
	c := Counts{ByCluster: map[string]int64{}}
	for _, j := range f.jvms {
		j.mu.Lock()
		r := j.last
		j.mu.Unlock()
		c.Served += r.Served
		c.Retried += r.Retried
		c.Failed += r.Failed
		for k, v := range r.ByCluster {
			c.ByCluster[k] += v
		}
		for _, s := range r.Samples {
			if len(c.FailureSamples) < maxFailureSamples {
				c.FailureSamples = append(c.FailureSamples, s)
			}
		}
		for _, s := range r.Retries {
			if len(c.RetrySamples) < maxFailureSamples {
				c.RetrySamples = append(c.RetrySamples, s)
			}
		}
	}
	return c
}

// Bound counts the JVMs' threads by the address of the cluster that answered their
// last request: where their connection, or the JVM's cached answer, took them. A
// thread whose last request failed counts under no address.
func (f *JVMFleet) Bound() map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for _, j := range f.jvms {
		j.mu.Lock()
		for _, cluster := range j.last.Last {
			if a, ok := f.cfg.Clusters[cluster]; ok {
				out[a]++
			}
		}
		j.mu.Unlock()
	}
	return out
}
