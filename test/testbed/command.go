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

// runCommand runs one of the test bed's command-line programs (clusteradm, helm) to
// its end, as a user runs it from PATH, in dir, with env added to the environment,
// and returns what it printed on stdout. Its invocations and output are appended to
// dir/<prog.Name>.log, which DumpLogs does not print: the error returned carries the
// command, its stdout and its stderr.
func runCommand(ctx context.Context, prog Program, dir string, env []string, args ...string) (string, error) {
	bin, err := prog.Path()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	// Programs name themselves after argv[0] in what they write (clusteradm in the
	// reason of its CSR approvals), as when run from PATH.
	cmd.Args[0] = prog.Name
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()

	if log, err := os.OpenFile(filepath.Join(dir, prog.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintf(log, "\n$ %s %s  # %s, %v\n%s%s", prog.Name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), runErr, stdout.String(), stderr.String())
		log.Close()
	}
	if runErr != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\nstdout:\n%s\nstderr:\n%s", prog.Name, strings.Join(args, " "), runErr, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
