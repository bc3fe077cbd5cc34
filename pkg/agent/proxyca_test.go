// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// TestTrustProxyCA: a server whose certificate the proxy's CA signed, as an HTTPS
// proxy's or a TLS-inspecting proxy's is, is trusted once the bundle is added, beside
// the hub's CA from the kubeconfig's data or file; a kubeconfig without a CA, or a
// bundle without a certificate, is refused with a reason.
func TestTrustProxyCA(t *testing.T) {
	hubCA, _, err := cert.GenerateSelfSignedCertKey("hub.test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxyCert, proxyKey, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(proxyCert, proxyKey)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	proxy.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	proxy.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake of "no bundle"
	proxy.StartTLS()
	t.Cleanup(proxy.Close)
	// The hub's CA, and a client certificate, as files: the client certificate's
	// files must stay files (their rotation is picked up), the CA's is read.
	dir := t.TempDir()
	caFile, certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	clientCert, clientKey, err := cert.GenerateSelfSignedCertKey("agent.test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{caFile: hubCA, certFile: clientCert, keyFile: clientKey} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for name, tc := range map[string]struct {
		tls           rest.TLSClientConfig
		bundle        string
		wantErr       string
		wantConnected bool
	}{
		"the hub's CA in the kubeconfig": {tls: rest.TLSClientConfig{CAData: hubCA}, bundle: string(proxyCert), wantConnected: true},
		"the hub's CA in a file":         {tls: rest.TLSClientConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, bundle: string(proxyCert), wantConnected: true},
		"no bundle":                      {tls: rest.TLSClientConfig{CAData: hubCA}},
		"no CA in the kubeconfig":        {bundle: string(proxyCert), wantErr: "the hub kubeconfig names no CA"},
		"no certificate in the bundle":   {tls: rest.TLSClientConfig{CAData: hubCA}, bundle: "not PEM", wantErr: "PROXY_CA_BUNDLE holds no PEM certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &rest.Config{Host: proxy.URL, TLSClientConfig: tc.tls}
			err := trustProxyCA(cfg, tc.bundle)
			if proctest.WantedError(t, err, tc.wantErr) {
				return
			}
			if cfg.CertFile != tc.tls.CertFile || cfg.KeyFile != tc.tls.KeyFile || len(cfg.CertData) > 0 || len(cfg.KeyData) > 0 {
				t.Errorf("the client certificate changed from files %q and %q to data", tc.tls.CertFile, tc.tls.KeyFile)
			}
			rt, err := rest.TransportFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: rt}).Get(proxy.URL)
			if err == nil {
				resp.Body.Close()
			}
			if connected := err == nil; connected != tc.wantConnected {
				t.Errorf("connected: %v (%v), want %v", connected, err, tc.wantConnected)
			}
		})
	}
}
