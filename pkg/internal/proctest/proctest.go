// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package proctest holds what the tests of the agent's and the manager's processes
// and of the commands share: a kubeconfig that points a process at a test API server,
// a GET of the endpoints the process serves, a port it cannot listen on, checks of the
// errors its options and a command give, a buffer that a command writes its output
// or its log to while the test reads it, and a reset of the logging configuration.
// Only tests import it.
package proctest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	logsapi "k8s.io/component-base/logs/api/v1"
)

// WriteKubeconfig writes a kubeconfig whose current context reaches server with a
// bearer token, and returns its path.
func WriteKubeconfig(t testing.TB, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: %s
users:
- name: admin
  user:
    token: secret
contexts:
- name: hub
  context:
    cluster: hub
    user: admin
current-context: hub
`, server)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TakenAddress is the host:port of a local port that a listener holds until the test
// ends, for a process that must fail to listen on it.
func TakenAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().String()
}

// Get returns the status code and body of an HTTP GET.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the body of GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// WantedError reports whether a case wanted an error, want not being empty, so that
// the case ends there. It fails the test when want is empty and err is not nil, or
// when want is not empty and err is nil or does not hold want.
func WantedError(t testing.TB, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, got %v", want, err)
	}
	return true
}

// CheckErrors fails the test when want is empty and err is not nil, or when want is not
// empty and err is nil or does not hold each of want.
func CheckErrors(t testing.TB, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("want no error, got %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want an error containing %q, got none", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// ResetLogging resets the process's logging configuration now and again when the test
// ends, so that a command of the test applies its own logging flags (-v, for one): a
// process applies its configuration once, and the commands of other tests applied
// theirs already.
func ResetLogging(t testing.TB) {
	t.Helper()
	reset := func() {
		if err := logsapi.ResetForTest(nil); err != nil {
			t.Fatal(err)
		}
	}
	reset()
	t.Cleanup(reset)
}
