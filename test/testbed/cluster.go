// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Cluster is a real kube-apiserver run by the test bed: the hub or a spoke. It stores
// its objects in the test bed's etcd under a prefix of its own, serves TLS with a CA
// of its own, authenticates clients by certificate and authorizes them with RBAC.
type Cluster struct {
	// Name is the cluster's name: "hub" or a spoke's name.
	Name string
	// URL is the API server's address, https://127.0.0.1:<port>.
	URL string
	// CA signs the API server's serving certificate and the clients' certificates; it
	// is also the client CA, as with kubeadm.
	CA *CA
	// ServiceAccountKeyPath is the key that signs service account tokens.
	ServiceAccountKeyPath string
	// KubeconfigPath is an admin (system:masters) kubeconfig.
	KubeconfigPath string
	// Config is the admin client configuration.
	Config *rest.Config
	// Process is the kube-apiserver.
	Process *Process

	dir string
}

// startCluster starts a kube-apiserver against etcd. The admin kubeconfig is written to
// <dir>/<name>/admin.kubeconfig.
func startCluster(ctx context.Context, name, dir, etcdURL string) (*Cluster, error) {
	dir = filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newCA(dir, "ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.issue(dir, "apiserver", "kube-apiserver", nil, "127.0.0.1", "localhost")
	if err != nil {
		return nil, err
	}
	saKey, err := writeKey(dir, "service-account")
	if err != nil {
		return nil, err
	}
	// A front proxy CA, as kubeadm makes one: the API server publishes it in
	// kube-system/extension-apiserver-authentication, where the controllers of OCM
	// (library-go) look for it, and log an error many times a second if it is missing.
	frontProxyCA, err := newCA(dir, "front-proxy-ca")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, URL: "https://" + hostPort(port), CA: ca, ServiceAccountKeyPath: saKey, dir: dir}

	c.Process, err = startProcess("kube-apiserver ("+name+")", ProgramKubeAPIServer, dir, "kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--etcd-prefix=/"+name,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+dir,
		"--tls-cert-file="+serving.CertPath,
		"--tls-private-key-file="+serving.KeyPath,
		"--client-ca-file="+ca.CertPath,
		"--requestheader-client-ca-file="+frontProxyCA.CertPath,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--service-account-key-file="+saKey,
		"--service-account-signing-key-file="+saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--enable-bootstrap-token-auth=true",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--endpoint-reconciler-type=none",
	)
	if err != nil {
		return nil, err
	}

	c.KubeconfigPath, c.Config, err = c.writeKubeconfig("admin", "admin", []string{"system:masters"})
	if err != nil {
		c.Process.Stop()
		return nil, err
	}
	client, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		c.Process.Stop()
		return nil, err
	}
	err = c.Process.waitReady(ctx, 90*time.Second, func(ctx context.Context) error {
		return answersOK(ctx, client, http.MethodGet, c.URL+"/readyz")
	})
	if err != nil {
		c.Process.Stop()
		return nil, err
	}
	return c, nil
}

// UserConfig returns a client configuration for a user with a certificate signed by
// the cluster's CA, for tests that check what a non-admin identity may do.
func (c *Cluster) UserConfig(user string, groups ...string) (*rest.Config, error) {
	_, cfg, err := c.writeKubeconfig("user-"+user, user, groups)
	return cfg, err
}

// UserKubeconfig writes a kubeconfig file for a user with a certificate signed by the
// cluster's CA and returns its path, for tests that run a command as that user.
func (c *Cluster) UserKubeconfig(user string, groups ...string) (string, error) {
	path, _, err := c.writeKubeconfig("user-"+user, user, groups)
	return path, err
}

// writeKubeconfig issues a client certificate and writes a kubeconfig that uses it.
func (c *Cluster) writeKubeconfig(fileName, user string, groups []string) (string, *rest.Config, error) {
	pair, err := c.CA.issue(c.dir, fileName, user, groups)
	if err != nil {
		return "", nil, err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CA.CertPEM}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	kc.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: user}
	kc.CurrentContext = c.Name
	path := filepath.Join(c.dir, fileName+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", nil, fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return "", nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return path, cfg, nil
}
