// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net"
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
	// URL is the API server's address: https://127.0.0.1:<port>, or on a test bed
	// with nodes https://<the bed's host address>:<port>, which the nodes' pods reach.
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
	// controllerManager is the cluster's kube-controller-manager, once started: the
	// test bed runs at most one per cluster, with the controllers its uses need.
	controllerManager *Process
	// roleAggregation is the cluster's clusterrole-aggregation controller, once
	// StartRoleAggregation has started it.
	roleAggregation *Process
	// node is the cluster's node, once AddNode has started it.
	node *Node
}

// serviceNames are the names of the kubernetes Service, in the default namespace,
// that pods use to reach their API server; a serving certificate that pods check
// names them and the Service's ClusterIP.
var serviceNames = []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

// The Service network of every cluster (each node has its own network namespace, so
// the clusters' Services never meet) and the ClusterIP of its kubernetes Service.
const (
	serviceCIDR       = "10.96.0.0/16"
	kubernetesService = "10.96.0.1"
)

// startCluster starts a kube-apiserver against etcd. The admin kubeconfig is written to
// <dir>/<name>/admin.kubeconfig. With a bed network (nil: none), the API server
// listens on the bed's host address instead of the loopback address, names it, the
// kubernetes Service and its ClusterIP in its serving certificate, keeps the Service's
// endpoints, authorizes kubelets as nodes, and reaches the kubelets by their
// InternalIP with a client certificate of its own.
func startCluster(ctx context.Context, name, dir, etcdURL string, bedNet *bedNetwork) (*Cluster, error) {
	dir = filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newCA(dir, "ca")
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1"
	hosts := []string{"127.0.0.1", "localhost"}
	if bedNet != nil {
		host = bedNet.hostIP
		hosts = append(append(hosts, host, kubernetesService), serviceNames...)
	}
	serving, err := ca.issue(dir, "apiserver", "kube-apiserver", nil, hosts...)
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
	c := &Cluster{Name: name, URL: "https://" + net.JoinHostPort(host, strconv.Itoa(port)), CA: ca, ServiceAccountKeyPath: saKey, dir: dir}

	// Without nodes nothing reads the kubernetes Service's endpoints, and the API
	// servers write less without them.
	nodeArgs := []string{"--authorization-mode=RBAC", "--endpoint-reconciler-type=none"}
	if bedNet != nil {
		// The API server's own identity towards the kubelets (logs, exec), which
		// they authorize by asking the API server.
		kubeletClient, err := ca.issue(dir, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"})
		if err != nil {
			return nil, err
		}
		nodeArgs = []string{
			"--authorization-mode=Node,RBAC",
			"--enable-admission-plugins=NodeRestriction",
			"--endpoint-reconciler-type=lease",
			"--kubelet-preferred-address-types=InternalIP",
			"--kubelet-client-certificate=" + kubeletClient.CertPath,
			"--kubelet-client-key=" + kubeletClient.KeyPath,
			"--kubelet-certificate-authority=" + ca.CertPath,
		}
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/" + name,
		"--bind-address=" + host,
		"--advertise-address=" + host,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + serving.CertPath,
		"--tls-private-key-file=" + serving.KeyPath,
		"--client-ca-file=" + ca.CertPath,
		"--requestheader-client-ca-file=" + frontProxyCA.CertPath,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--enable-bootstrap-token-auth=true",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
	c.Process, err = startProcess("kube-apiserver ("+name+")", ProgramKubeAPIServer, dir, "kube-apiserver", nil, append(args, nodeArgs...)...)
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
