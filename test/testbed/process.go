// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a program has to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// Process is one program the test bed started. Its output goes to a log file that
// the test bed prints when a test fails.
type Process struct {
	// Name names the process in logs, e.g. "kube-apiserver (hub)".
	Name string
	// LogPath is the file that holds the process's stdout and stderr.
	LogPath string

	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error // the result of Wait, valid after done is closed

	stopOnce sync.Once
}

// Program says how to find the binary of one of the test bed's programs. The Makefile
// builds each program from the pinned tools modules in hack/tools and writes the
// path of its binary as EnvVar to the bed's settings file (Getenv).
type Program struct {
	// Name is the program's name, e.g. "kube-apiserver".
	Name string
	// EnvVar is the setting (Getenv) that holds the binary's path.
	EnvVar string
}

// The programs of the test bed. Adding one takes a line here, a build rule and a
// TESTBED_* variable in the Makefile (hack/make/tests.mk), and a start function that
// calls startProcess.
var (
	ProgramEtcd          = Program{Name: "etcd", EnvVar: "TESTBED_ETCD"}
	ProgramKubeAPIServer = Program{Name: "kube-apiserver", EnvVar: "TESTBED_KUBE_APISERVER"}
	ProgramPrometheus    = Program{Name: "prometheus", EnvVar: "TESTBED_PROMETHEUS"}
)

// Unconfigured says why the test bed cannot start when the programs every suite needs
// are not configured, as when plain 'go test ./...' runs on a checkout where make has
// not built the bed; it is empty when they are. A TestMain prints it and skips its package;
// a single test passes it to t.Skip.
func Unconfigured() string {
	for _, p := range []Program{ProgramEtcd, ProgramKubeAPIServer, ProgramPrometheus} {
		if Getenv(p.EnvVar) == "" {
			return fmt.Sprintf("skipped: these tests need the test bed and %s is not set; run them with 'make test' (or 'make test-integration'), or run 'make testbed' once, which builds the test bed's programs and writes their TESTBED_* settings to bin/testbed.env, where 'go test' finds them", p.EnvVar)
		}
	}
	return ""
}

// RunIfConfigured runs a test package's tests, or, when the test bed is not configured
// (see Unconfigured), skips the package and says how to run it. It is a TestMain for
// packages that need nothing else before their tests.
func RunIfConfigured(m *testing.M) int {
	if msg := Unconfigured(); msg != "" {
		fmt.Println(msg)
		return 0
	}
	return m.Run()
}

// Path returns the path of the program's binary, or an error that says how to get it.
func (p Program) Path() (string, error) {
	path := Getenv(p.EnvVar)
	if path == "" {
		return "", fmt.Errorf("%s is not set: run the tests through 'make test', or run 'make testbed' once, which builds %s and writes the setting to bin/testbed.env", p.EnvVar, p.Name)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s=%s: %w; 'make testbed' builds it", p.EnvVar, path, err)
	}
	return path, nil
}

// startProcess starts a program with its output in dir/<logName>.log and env added to
// its environment. The process gets its own process group and is killed by the kernel
// if the test binary dies, so no program outlives a crashed test.
func startProcess(name string, prog Program, dir, logName string, env []string, args ...string) (*Process, error) {
	bin, err := prog.Path()
	if err != nil {
		return nil, err
	}
	return startCommand(name, bin, dir, logName, env, args...)
}

// startCommand starts the binary bin as startProcess starts a program.
func startCommand(name, bin, dir, logName string, env []string, args ...string) (*Process, error) {
	return startCommandThen(nil, name, bin, dir, logName, env, args...)
}

// startCommandThen starts the binary bin as startCommand does, and calls exited, when
// not nil, once the process has exited.
func startCommandThen(exited func(), name, bin, dir, logName string, env []string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, logName+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// Temporary files too stay in the test bed's directory: OCM's controllers, for
	// one, write a self-signed serving certificate to a new temporary directory at
	// every start.
	cmd.Env = append(append(os.Environ(), "TMPDIR="+dir), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if exited != nil {
			exited()
		}
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process: SIGTERM to its process group, SIGKILL after a grace period.
// It is safe to call more than once.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		if !p.Exited() {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(stopGrace):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
		}
		p.log.Close()
	})
}

// Kill ends the process at once with SIGKILL, as a crash would.
func (p *Process) Kill() {
	p.stopOnce.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		p.log.Close()
	})
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Log returns everything the process has written to its log so far.
func (p *Process) Log() (string, error) {
	b, err := os.ReadFile(p.LogPath)
	return string(b), err
}

// Tail returns the last n bytes of the process's log.
func (p *Process) Tail(n int64) string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(bytes.TrimSpace(b))
}

// waitReady polls ready until it returns nil, the process exits, or the timeout passes.
func (p *Process) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%v); its log ends with:\n%s", p.Name, p.err, p.Tail(4096))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w; its log ends with:\n%s", p.Name, timeout, errors.Join(last, ctx.Err()), p.Tail(4096))
		case <-tick.C:
		}
	}
}

// answersOK sends a request without a body to url and fails unless the answer is 200.
func answersOK(ctx context.Context, client *http.Client, method, url string) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s answered %s", method, url, resp.Status)
	}
	return nil
}

// freePort returns a port that is free for TCP and UDP on every address of this
// network namespace, and that the kernel does not hand out to outgoing connections:
// it lies below the ephemeral range (net.ipv4.ip_local_port_range). A port the kernel
// picks for ":0" comes from that range, and between our check and the program's bind
// any connection of the busy test bed can take it as its source port, which made a
// kube-apiserver fail with "address already in use". Ports below the range are taken
// only by listeners, and those bind, so the check below sees them; ports handed out
// by this process are not handed out again.
func freePort() (int, error) {
	low, high := portsBelowEphemeral()
	portsMu.Lock()
	defer portsMu.Unlock()
	for attempt := 0; attempt < 200; attempt++ {
		port := low + rand.IntN(high-low)
		if portsGiven[port] || !portFree(port) {
			continue
		}
		portsGiven[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("find a free port: none of 200 tries in %d-%d was free", low, high-1)
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portsBelowEphemeral returns the range [low, high) that freePort picks from: the
// 10,000 ports below the kernel's ephemeral range, but none under 10000.
func portsBelowEphemeral() (low, high int) {
	high = 32768 // the kernel's default start of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var start, end int
		if _, err := fmt.Sscan(string(b), &start, &end); err == nil && start > 0 {
			high = start
		}
	}
	// An ephemeral range that starts under 11000 leaves no room below it: then
	// pick from the top of the port space, where the range rarely reaches.
	low = max(high-10000, 10000)
	if high-low < 1000 {
		low, high = 60000, 65536
	}
	return low, high
}

// portFree tells whether port can be bound for TCP and UDP on all addresses.
func portFree(port int) bool {
	addr := ":" + strconv.Itoa(port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	u.Close()
	return true
}

// hostPort joins the loopback address and a port.
func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// StartProgram runs a program for a test, with its log kept and printed on failure
// like the test bed's own, and stopped with the test bed. ready, when not nil, is
// polled until it returns nil.
func (b *Bed) StartProgram(ctx context.Context, name string, prog Program, args []string, ready func(context.Context) error) (*Process, error) {
	return b.startTracked(ctx, name, prog, b.dir, uniqueLogName(prog), nil, programReadyTimeout, ready, args...)
}

// programReadyTimeout is how long a program that a test starts has to get ready.
const programReadyTimeout = 60 * time.Second

// uniqueLogName names the log of one run of prog, apart from its other runs.
func uniqueLogName(prog Program) string {
	return fmt.Sprintf("%s-%d", prog.Name, time.Now().UnixNano())
}

// startTracked starts a program as startProcess does, makes the test bed stop it with
// everything else, and, when ready is not nil, polls ready for up to timeout; a
// program that does not get ready is stopped.
func (b *Bed) startTracked(ctx context.Context, name string, prog Program, dir, logName string, env []string, timeout time.Duration, ready func(context.Context) error, args ...string) (*Process, error) {
	p, err := startProcess(name, prog, dir, logName, env, args...)
	if err != nil {
		return nil, err
	}
	return b.trackReady(ctx, p, timeout, ready)
}

// trackReady tracks a started process and waits until it is ready, or stops it.
func (b *Bed) trackReady(ctx context.Context, p *Process, timeout time.Duration, ready func(context.Context) error) (*Process, error) {
	b.Track(p)
	if ready != nil {
		if err := p.waitReady(ctx, timeout, ready); err != nil {
			p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// FreePort returns a free port, as the test bed picks its own (see freePort).
func FreePort() (int, error) { return freePort() }
