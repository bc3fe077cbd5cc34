// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// The namespaces of a klusterlet on its spoke in the Default mode: the agents' own
// (they keep the bootstrap and hub kubeconfig Secrets there) and the add-on agents'.
const (
	AgentNamespace      = "open-cluster-management-agent"
	AgentAddonNamespace = "open-cluster-management-agent-addon"
)

// The Secrets of a klusterlet in AgentNamespace: the kubeconfig it bootstraps with, as
// 'clusteradm join' writes it, and the one with its own certificate, which the
// registration agent writes.
const (
	BootstrapHubKubeconfigSecret = "bootstrap-hub-kubeconfig"
	HubKubeconfigSecret          = "hub-kubeconfig-secret"
)

// joinTimeout bounds each wait of joining: for the hub to accept a cluster, for the
// agent to get its certificate, for the cluster to become available.
const joinTimeout = 3 * time.Minute

// Klusterlet is a spoke joined to the test bed's OCM hub: OCM's registration and work
// agents run as local processes against the spoke's kube-apiserver, as the klusterlet
// operator would run them in the spoke's pods.
type Klusterlet struct {
	// ClusterName is the ManagedCluster's name; it is also the spoke's name.
	ClusterName string
	// Spoke is the spoke's kube-apiserver.
	Spoke *Cluster
	// ControllerManager is the spoke's kube-controller-manager, with the garbage
	// collector and namespace controllers. The work agent relies on the garbage
	// collector: it marks what it applies as owned by its AppliedManifestWork, and
	// leaves to the collector what the AppliedManifestWork did not list yet when its
	// ManifestWork was deleted.
	ControllerManager *Process
	// RegistrationAgent is OCM's registration agent.
	RegistrationAgent *Process
	// WorkAgent is OCM's work agent; nil until the hub accepted the cluster (it needs
	// the hub kubeconfig the registration agent gets on acceptance).
	WorkAgent *Process
	// BootstrapKubeconfigPath is the kubeconfig the registration agent bootstraps with:
	// a token of the hub's bootstrap service account, from 'clusteradm get token'.
	BootstrapKubeconfigPath string
	// HubKubeconfigDir holds what the registration agent writes to the
	// hub-kubeconfig-secret Secret, as files (a pod mounts the Secret there):
	// kubeconfig, tls.crt, tls.key, cluster-name and agent-name. The kubeconfig names the
	// certificate files by relative path.
	HubKubeconfigDir string

	dir string
}

// HubKubeconfigPath is the kubeconfig with which the agents reach the hub once the
// cluster is accepted.
func (k *Klusterlet) HubKubeconfigPath() string {
	return filepath.Join(k.HubKubeconfigDir, "kubeconfig")
}

// JoinSpokes joins spokes of the test bed to its OCM hub as a user does with
// clusteradm, and returns once the hub has accepted them and they are available:
// JoinSpoke for each, then AcceptSpokes, then WaitClustersAvailable.
func (b *Bed) JoinSpokes(ctx context.Context, names ...string) ([]*Klusterlet, error) {
	ks := make([]*Klusterlet, 0, len(names))
	for _, name := range names {
		k, err := b.JoinSpoke(ctx, name)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	if err := b.AcceptSpokes(ctx, names...); err != nil {
		return nil, err
	}
	if err := b.WaitClustersAvailable(ctx, names...); err != nil {
		return nil, err
	}
	return ks, nil
}

// JoinSpoke does on a spoke of the test bed what 'clusteradm join' and the klusterlet
// operator do, up to the point where the hub has to accept the cluster: it asks the
// hub for a bootstrap token with 'clusteradm get token', writes the bootstrap
// kubeconfig (the one 'clusteradm join' puts in the bootstrap-hub-kubeconfig Secret),
// and runs OCM's registration agent with it. The agent creates the ManagedCluster and
// a CSR on the hub; AcceptSpokes accepts them. It also starts the spoke's
// kube-controller-manager (garbage collector and namespace controllers), which a real
// spoke has and the work agent relies on.
//
// 'clusteradm join' itself cannot be used: it installs the klusterlet operator as a
// Deployment of OCM's images and waits for it, and no registry here serves those images
// (nor does a cluster without a node run pods). The test bed
// takes the operator's place, with the same namespaces, Secrets and agent flags.
func (b *Bed) JoinSpoke(ctx context.Context, name string) (*Klusterlet, error) {
	b.mu.Lock()
	spoke, hub := b.Spokes[name], b.OCM
	_, joined := b.Klusterlets[name]
	b.mu.Unlock()
	switch {
	case hub == nil:
		return nil, errors.New("no OCM hub: run StartOCMHub first")
	case spoke == nil:
		return nil, fmt.Errorf("no spoke %q: name it in Options.Spokes or start it with StartSpoke", name)
	case joined:
		return nil, fmt.Errorf("spoke %q has already joined", name)
	}

	k := &Klusterlet{ClusterName: name, Spoke: spoke, dir: filepath.Join(spoke.dir, "klusterlet")}
	k.HubKubeconfigDir = filepath.Join(k.dir, "hub-kubeconfig")
	k.BootstrapKubeconfigPath = filepath.Join(k.dir, "bootstrap-hub-kubeconfig", "kubeconfig")
	for _, d := range []string{k.HubKubeconfigDir, filepath.Dir(k.BootstrapKubeconfigPath)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}

	bootstrap, err := b.bootstrapKubeconfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("spoke %s: %w", name, err)
	}
	if err := os.WriteFile(k.BootstrapKubeconfigPath, bootstrap, 0o600); err != nil {
		return nil, err
	}
	spokeClient, err := kubernetes.NewForConfig(spoke.Config)
	if err != nil {
		return nil, err
	}
	for _, ns := range []string{AgentNamespace, AgentAddonNamespace} {
		_, err := spokeClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if ignoreExists(err) != nil {
			return nil, fmt.Errorf("spoke %s: create namespace %s: %w", name, ns, err)
		}
	}
	// The agent watches this Secret and starts over when it changes; the test bed
	// hands the agent its content as a file, as the kubelet would.
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapHubKubeconfigSecret, Namespace: AgentNamespace},
		Data:       map[string][]byte{"kubeconfig": bootstrap},
	}
	if _, err := spokeClient.CoreV1().Secrets(AgentNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("spoke %s: create the bootstrap kubeconfig Secret: %w", name, err)
	}

	if k.ControllerManager, err = b.startKubeControllerManager(ctx, spoke, false); err != nil {
		return nil, err
	}
	k.RegistrationAgent, err = b.startController(ctx, "registration agent ("+name+")", ProgramOCMRegistration, k.dir, "registration-agent", spoke.KubeconfigPath,
		"agent",
		"--spoke-cluster-name="+name,
		"--bootstrap-kubeconfig="+k.BootstrapKubeconfigPath,
		"--hub-kubeconfig-dir="+k.HubKubeconfigDir,
	)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.Klusterlets[name] = k
	b.mu.Unlock()
	return k, nil
}

// bootstrapKubeconfig builds the kubeconfig 'clusteradm join --hub-token <t>
// --hub-apiserver <url> --ca-file <hub CA>' builds, with the token and address that
// 'clusteradm get token' gives on the hub.
func (b *Bed) bootstrapKubeconfig(ctx context.Context) ([]byte, error) {
	out, err := b.Clusteradm(ctx, "get", "token", "--output=json")
	if err != nil {
		return nil, err
	}
	var info struct {
		Token     string `json:"hub-token"`
		APIServer string `json:"hub-apiserver"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return nil, fmt.Errorf("read the output of clusteradm get token: %w\n%s", err, out)
	}
	if info.Token == "" || info.APIServer == "" {
		return nil, fmt.Errorf("clusteradm get token gave no token or no API server:\n%s", out)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: info.APIServer, CertificateAuthorityData: b.Hub.CA.CertPEM}
	kc.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: info.Token}
	kc.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	kc.CurrentContext = "bootstrap"
	return clientcmd.Write(*kc)
}

// AcceptSpokes accepts joining spokes on the hub with 'clusteradm accept --wait', which
// approves each one's CSR (kube-controller-manager then signs it) and sets
// hubAcceptsClient on its ManagedCluster. It then starts each spoke's work agent once
// its registration agent holds a hub kubeconfig and the cluster has joined.
func (b *Bed) AcceptSpokes(ctx context.Context, names ...string) error {
	ks := make([]*Klusterlet, 0, len(names))
	b.mu.Lock()
	for _, name := range names {
		if k := b.Klusterlets[name]; k != nil {
			ks = append(ks, k)
		}
	}
	b.mu.Unlock()
	if len(ks) != len(names) {
		return fmt.Errorf("not every one of %v has joined: run JoinSpoke first", names)
	}
	_, err := b.Clusteradm(ctx, "accept", "--clusters", strings.Join(names, ","), "--wait",
		"--timeout="+strconv.Itoa(int(joinTimeout.Seconds())))
	if err != nil {
		return err
	}
	for _, k := range ks {
		if err := b.startWorkAgent(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// startWorkAgent runs OCM's work agent of an accepted spoke once its cluster has joined,
// with the hub kubeconfig the registration agent wrote.
func (b *Bed) startWorkAgent(ctx context.Context, k *Klusterlet) error {
	if k.WorkAgent != nil {
		return nil
	}
	client, err := clusterclient.NewForConfig(b.Hub.Config)
	if err != nil {
		return err
	}
	err = k.RegistrationAgent.waitReady(ctx, joinTimeout, func(ctx context.Context) error {
		cluster, err := client.ClusterV1().ManagedClusters().Get(ctx, k.ClusterName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
			return fmt.Errorf("ManagedCluster %s has not joined: %v", k.ClusterName, cluster.Status.Conditions)
		}
		for _, f := range []string{"kubeconfig", "tls.crt", "tls.key"} {
			if _, err := os.Stat(filepath.Join(k.HubKubeconfigDir, f)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	k.WorkAgent, err = b.startController(ctx, "work agent ("+k.ClusterName+")", ProgramOCMWork, k.dir, "work-agent", k.Spoke.KubeconfigPath,
		"agent",
		"--spoke-cluster-name="+k.ClusterName,
		"--workload-source-config="+k.HubKubeconfigPath(),
	)
	return err
}

// WaitClustersAvailable waits until the named ManagedClusters are joined and available
// on the hub: their registration agents renew their leases and report their spokes'
// kube-apiservers healthy.
func (b *Bed) WaitClustersAvailable(ctx context.Context, names ...string) error {
	client, err := clusterclient.NewForConfig(b.Hub.Config)
	if err != nil {
		return err
	}
	for _, name := range names {
		b.mu.Lock()
		k := b.Klusterlets[name]
		b.mu.Unlock()
		if k == nil {
			return fmt.Errorf("spoke %q has not joined", name)
		}
		err := k.RegistrationAgent.waitReady(ctx, joinTimeout, func(ctx context.Context) error {
			cluster, err := client.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
				if !meta.IsStatusConditionTrue(cluster.Status.Conditions, c) {
					return fmt.Errorf("ManagedCluster %s is not %s: %v", name, c, cluster.Status.Conditions)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
