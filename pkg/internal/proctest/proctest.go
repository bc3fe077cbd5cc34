// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package proctest holds what the tests of the agent's and the manager's processes
// share: a kubeconfig that points a process at a test API server, and a GET of the
// endpoints the process serves. Only tests import it.
package proctest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
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
