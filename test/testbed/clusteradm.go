// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Clusteradm runs the real clusteradm against the hub, as a user on the hub runs it
// (for example "accept --clusters c1" or "addon enable --names x --clusters c1,c2"),
// and returns what it printed on stdout. The error carries its stderr.
func (b *Bed) Clusteradm(ctx context.Context, args ...string) (string, error) {
	return b.runClusteradm(ctx, b.Hub.KubeconfigPath, args...)
}

// runClusteradm runs clusteradm with a kubeconfig. Its invocations and output are
// appended to clusteradm.log in the test bed's directory, which DumpLogs does not
// print: the error returned says what went wrong.
func (b *Bed) runClusteradm(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	bin, err := ProgramClusteradm.Path()
	if err != nil {
		return "", err
	}
	// A home of its own keeps its discovery cache out of the user's ~/.kube.
	home := filepath.Join(b.dir, "clusteradm-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig="+kubeconfig)...)
	// clusteradm names itself after argv[0] in what it writes (for example the reason
	// of the CSR approvals), as when run from PATH.
	cmd.Args[0] = "clusteradm"
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()

	if log, err := os.OpenFile(filepath.Join(b.dir, "clusteradm.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintf(log, "\n$ clusteradm %s  # %s, %v\n%s%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), runErr, stdout.String(), stderr.String())
		log.Close()
	}
	if runErr != nil {
		return stdout.String(), fmt.Errorf("clusteradm %s: %w\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), runErr, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
