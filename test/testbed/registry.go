// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

// The bed's OCI registry: distribution's registry (hack/tools/registry), where a test
// pushes a release's image and chart as a user pushes them to their own registry, and
// from which the nodes' containerd pulls.
var (
	// ProgramRegistry is the registry, built by the Makefile from hack/tools/registry.
	ProgramRegistry = Program{Name: "registry", EnvVar: "TESTBED_REGISTRY"}
	// ProgramSkopeo pushes an image's OCI archive to a registry: Debian's skopeo, which
	// 'make testbed-nodes' installs.
	ProgramSkopeo = Program{Name: "skopeo", EnvVar: "TESTBED_SKOPEO"}
)

// Registry is the test bed's OCI registry. It serves HTTPS with a certificate of its
// own CA, on the bed's host address (the bridge's with nodes, which the nodes reach;
// loopback without), and keeps what is pushed in a directory of the bed, which Stop
// removes. No credentials: anyone who reaches it may push and pull.
type Registry struct {
	// Host is the registry's host:port, the first part of the references of what is
	// pushed to it (Host/traffic-migration:0.1.0, oci://Host/charts).
	Host string
	// CAPath is the CA certificate that signed the registry's serving certificate:
	// clients trust it (helm and skopeo through SSL_CERT_FILE, the nodes' containerd
	// through its registry configuration).
	CAPath string
	// Process is the running registry.
	Process *Process

	dir     string // configuration, certificates and log
	dataDir string // the pushed content, removed on stop
}

// registryConfig is the registry's configuration: filesystem storage, deletes
// allowed, TLS on addr, and a log at info, which records every request.
func registryConfig(addr, dataDir, cert, key string) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"version": "0.1",
		"log":     map[string]any{"level": "info", "formatter": "text"},
		"storage": map[string]any{
			"filesystem": map[string]any{"rootdirectory": dataDir},
			"delete":     map[string]any{"enabled": true},
		},
		"http": map[string]any{
			"addr": addr,
			"tls":  map[string]any{"certificate": cert, "key": key},
		},
	})
}

// startRegistry starts a registry on host and waits until it answers /v2/.
func startRegistry(ctx context.Context, dir, host string) (_ *Registry, err error) {
	r := &Registry{dir: filepath.Join(dir, "registry")}
	r.dataDir = filepath.Join(r.dir, "data")
	for _, d := range []string{r.dir, r.dataDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	ca, err := newCA(r.dir, "registry-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.issue(r.dir, "registry", "registry", nil, host)
	if err != nil {
		return nil, err
	}
	r.CAPath = ca.CertPath
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r.Host = net.JoinHostPort(host, strconv.Itoa(port))
	config, err := registryConfig(r.Host, r.dataDir, serving.CertPath, serving.KeyPath)
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(r.dir, "config.yml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return nil, err
	}
	// OTEL_TRACES_EXPORTER=none: the registry sets up OpenTelemetry's exporter from the
	// environment, and would otherwise send its traces to localhost:4318.
	if r.Process, err = startProcess("registry", ProgramRegistry, r.dir, "registry", []string{"OTEL_TRACES_EXPORTER=none"}, "serve", configPath); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	err = r.Process.waitReady(ctx, programReadyTimeout, func(ctx context.Context) error {
		return answersOK(ctx, client, http.MethodGet, "https://"+r.Host+"/v2/")
	})
	return r, err
}

// stop stops the registry and removes what was pushed to it; its configuration and
// log stay with the bed's directory.
func (r *Registry) stop() {
	if r.Process != nil {
		r.Process.Stop()
	}
	_ = os.RemoveAll(r.dataDir)
}

// Env is the environment under which helm and skopeo trust the registry: its CA as
// the only roots (SSL_CERT_FILE), as a user's tools trust their registry through the
// system's CA certificates.
func (r *Registry) Env() []string {
	return []string{"SSL_CERT_FILE=" + r.CAPath}
}

// Skopeo runs Debian's skopeo as a user runs it, with the registry trusted (Env), no
// credentials of the user's read (REGISTRY_AUTH_FILE in the bed's directory), its
// temporary files in the bed's directory, and returns what it printed on stdout.
func (r *Registry) Skopeo(ctx context.Context, args ...string) (string, error) {
	tmp := filepath.Join(r.dir, "skopeo-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	env := append(r.Env(), "TMPDIR="+tmp, "REGISTRY_AUTH_FILE="+filepath.Join(r.dir, "auth.json"))
	return runCommand(ctx, ProgramSkopeo, r.dir, env, args...)
}

// hostsTOML is a node containerd's configuration of the registry (config_path's
// <host>/hosts.toml): pull and resolve from it over HTTPS, trusting its CA.
func (r *Registry) hostsTOML() string {
	return fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %[2]q\n", "https://"+r.Host, r.CAPath)
}

// writeRegistryHosts writes the containerd registry configuration directory of a node
// (config_path): the bed's registry when it has one, and returns the directory.
func writeRegistryHosts(configDir string, r *Registry) (string, error) {
	dir := filepath.Join(configDir, "certs.d")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if r == nil {
		return dir, nil
	}
	hostDir := filepath.Join(dir, r.Host)
	if err := os.MkdirAll(hostDir, 0o700); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(hostDir, "hosts.toml"), []byte(r.hostsTOML()), 0o600)
}
