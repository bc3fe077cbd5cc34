// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// pollTimeout bounds every wait of the tests for the OCM programs to act.
const pollTimeout = 2 * time.Minute

// eventually polls check until it returns nil, and fails the test with check's last
// error if that takes longer than pollTimeout.
func eventually(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	testbed.Eventually(t, pollTimeout, what, check)
}

// TestClustersJoinedWithClusteradm checks what joining left behind: each spoke's CSR was
// approved by 'clusteradm accept' and signed with the hub's CA, the hub accepted the
// cluster, which is joined and available, and the agent's hub kubeconfig authenticates
// as the cluster on the hub.
func TestClustersJoinedWithClusteradm(t *testing.T) {
	ctx := t.Context()
	out, err := bed.Clusteradm(ctx, "get", "clusters")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{cluster1, cluster2} {
		if !strings.Contains(out, name) {
			t.Errorf("clusteradm get clusters does not list %s:\n%s", name, out)
		}
	}
	for _, name := range []string{cluster1, cluster2} {
		t.Run(name, func(t *testing.T) {
			eventually(t, "ManagedCluster "+name+" accepted, joined and available", func(ctx context.Context) error {
				mc, err := hub.Cluster.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !mc.Spec.HubAcceptsClient {
					return errors.New("spec.hubAcceptsClient is false")
				}
				for _, c := range []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
					if !meta.IsStatusConditionTrue(mc.Status.Conditions, c) {
						return fmt.Errorf("condition %s is not True: %+v", c, mc.Status.Conditions)
					}
				}
				return nil
			})

			csrs, err := hub.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
				LabelSelector: clusterv1.ClusterNameLabelKey + "=" + name,
			})
			if err != nil {
				t.Fatal(err)
			}
			var signed *certificatesv1.CertificateSigningRequest
			for i, csr := range csrs.Items {
				for _, c := range csr.Status.Conditions {
					if c.Type == certificatesv1.CertificateApproved && c.Reason == "clusteradm Approve" && len(csr.Status.Certificate) > 0 {
						signed = &csrs.Items[i]
					}
				}
			}
			if signed == nil {
				t.Fatalf("no CSR of %s approved by clusteradm and signed: %+v", name, csrs.Items)
			}
			if signed.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
				t.Errorf("CSR %s has signer %s, want %s", signed.Name, signed.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
			}

			k := bed.Klusterlets[name]
			if k == nil || k.WorkAgent == nil {
				t.Fatalf("klusterlet %s has no work agent: %+v", name, k)
			}
			cert := readCertificate(t, filepath.Join(k.HubKubeconfigDir, "tls.crt"))
			if want := "system:open-cluster-management:" + name + ":"; !strings.HasPrefix(cert.Subject.CommonName, want) {
				t.Errorf("the hub certificate of %s is for %q, want %s<agent>", name, cert.Subject.CommonName, want)
			}
			if err := cert.CheckSignatureFrom(readCertificate(t, bed.Hub.CA.CertPath)); err != nil {
				t.Errorf("the hub certificate of %s is not signed by the hub's CA: %v", name, err)
			}

			// The Secret the registration agent keeps its hub kubeconfig in, on the spoke.
			secret, err := spokes[name].CoreV1().Secrets(testbed.AgentNamespace).Get(ctx, testbed.HubKubeconfigSecret, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"kubeconfig", "tls.crt", "tls.key", "cluster-name", "agent-name"} {
				if len(secret.Data[key]) == 0 {
					t.Errorf("the hub kubeconfig Secret on %s has no %s", name, key)
				}
			}
			if got := string(secret.Data["cluster-name"]); got != name {
				t.Errorf("the hub kubeconfig Secret on %s names cluster %q", name, got)
			}

			// With it, the agent is the cluster on the hub.
			agentCfg, err := clientcmd.BuildConfigFromFlags("", k.HubKubeconfigPath())
			if err != nil {
				t.Fatal(err)
			}
			agentCluster, err := clusterclient.NewForConfig(agentCfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := agentCluster.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("the agent of %s cannot read its ManagedCluster with its hub kubeconfig: %v", name, err)
			}
		})
	}
}

func readCertificate(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cert
}

// TestManifestWorkAppliedOnSpoke checks that the work agent applies a ManifestWork of
// its cluster on its spoke, and only there, reports it Applied, and that what it
// applied goes when the ManifestWork is deleted: deleted by the work agent, or by the
// spoke's garbage collector when the ManifestWork goes before the work agent recorded
// what it applied (it reports Applied on the ManifestWork before it records).
func TestManifestWorkAppliedOnSpoke(t *testing.T) {
	ctx := t.Context()
	spoke1, spoke2 := spokes[cluster1], spokes[cluster2]

	name := "e2e-" + rand.String(5)
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Data:       map[string]string{"from": "hub"},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	work := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster1},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}
	if _, err := hub.Work.WorkV1().ManifestWorks(cluster1).Create(ctx, work, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hub.Work.WorkV1().ManifestWorks(cluster1).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	eventually(t, "the ConfigMap applied on "+cluster1, func(ctx context.Context) error {
		got, err := spoke1.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Data["from"] != "hub" {
			return fmt.Errorf("the ConfigMap has data %v", got.Data)
		}
		return nil
	})
	eventually(t, "the ManifestWork Applied", func(ctx context.Context) error {
		got, err := hub.Work.WorkV1().ManifestWorks(cluster1).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, workv1.WorkApplied) {
			return fmt.Errorf("condition %s is not True: %+v", workv1.WorkApplied, got.Status.Conditions)
		}
		if n := len(got.Status.ResourceStatus.Manifests); n != 1 {
			return fmt.Errorf("status has %d manifests, want 1", n)
		}
		return nil
	})
	if _, err := spoke2.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap of a ManifestWork for %s is on %s too (err %v)", cluster1, cluster2, err)
	}

	if err := hub.Work.WorkV1().ManifestWorks(cluster1).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ConfigMap removed from "+cluster1+" and the ManifestWork gone", func(ctx context.Context) error {
		if _, err := spoke1.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ConfigMap is still there (err %v)", err)
		}
		if _, err := hub.Work.WorkV1().ManifestWorks(cluster1).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ManifestWork is still there (err %v)", err)
		}
		return nil
	})
}

// TestAddOnConversion checks that the hub converts the add-on APIs through OCM's
// conversion webhook both ways, for the fields that differ between v1alpha1 (which
// clusteradm writes) and v1beta1 (which the add-on framework reads).
func TestAddOnConversion(t *testing.T) {
	ctx := t.Context()
	addon := hub.Addon
	suffix := rand.String(5)

	t.Run("ManagedClusterAddOn v1alpha1 to v1beta1", func(t *testing.T) {
		name := "e2e-alpha-" + suffix
		mca := &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster1},
			Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "install-" + suffix},
		}
		if _, err := addon.AddonV1alpha1().ManagedClusterAddOns(cluster1).Create(ctx, mca, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteMCA(addon, cluster1, name) })

		got, err := addon.AddonV1beta1().ManagedClusterAddOns(cluster1).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns := got.Annotations[addonv1beta1.InstallNamespaceAnnotation]; ns != "install-"+suffix {
			t.Errorf("v1beta1 install namespace annotation = %q, want %q", ns, "install-"+suffix)
		}
	})

	t.Run("ManagedClusterAddOn v1beta1 to v1alpha1", func(t *testing.T) {
		name := "e2e-beta-" + suffix
		mca := &addonv1beta1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: cluster1,
				Annotations: map[string]string{addonv1beta1.InstallNamespaceAnnotation: "install-" + suffix},
			},
			Spec: addonv1beta1.ManagedClusterAddOnSpec{Configs: []addonv1beta1.AddOnConfig{{
				ConfigGroupResource: addonv1beta1.ConfigGroupResource{Group: addonv1beta1.GroupName, Resource: "addondeploymentconfigs"},
				ConfigReferent:      addonv1beta1.ConfigReferent{Namespace: cluster1, Name: "config-" + suffix},
			}}},
		}
		if _, err := addon.AddonV1beta1().ManagedClusterAddOns(cluster1).Create(ctx, mca, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteMCA(addon, cluster1, name) })

		got, err := addon.AddonV1alpha1().ManagedClusterAddOns(cluster1).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.InstallNamespace != "install-"+suffix {
			t.Errorf("v1alpha1 spec.installNamespace = %q, want %q", got.Spec.InstallNamespace, "install-"+suffix)
		}
		if _, ok := got.Annotations[addonv1beta1.InstallNamespaceAnnotation]; ok {
			t.Errorf("v1alpha1 keeps the v1beta1-only annotation %s", addonv1beta1.InstallNamespaceAnnotation)
		}
		if len(got.Spec.Configs) != 1 || got.Spec.Configs[0].Name != "config-"+suffix {
			t.Errorf("v1alpha1 spec.configs = %+v, want config-%s", got.Spec.Configs, suffix)
		}
	})

	t.Run("ClusterManagementAddOn v1beta1 to v1alpha1", func(t *testing.T) {
		name := "e2e-" + suffix
		cma := &addonv1beta1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: addonv1beta1.ClusterManagementAddOnSpec{
				DefaultConfigs: []addonv1beta1.AddOnConfig{{
					ConfigGroupResource: addonv1beta1.ConfigGroupResource{Group: addonv1beta1.GroupName, Resource: "addondeploymentconfigs"},
					ConfigReferent:      addonv1beta1.ConfigReferent{Namespace: metav1.NamespaceDefault, Name: "config-" + suffix},
				}},
				InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual},
			},
		}
		if _, err := addon.AddonV1beta1().ClusterManagementAddOns().Create(ctx, cma, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = addon.AddonV1beta1().ClusterManagementAddOns().Delete(context.Background(), name, metav1.DeleteOptions{})
		})

		got, err := addon.AddonV1alpha1().ClusterManagementAddOns().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cfgs := got.Spec.SupportedConfigs; len(cfgs) != 1 || cfgs[0].DefaultConfig == nil || cfgs[0].DefaultConfig.Name != "config-"+suffix {
			t.Errorf("v1alpha1 spec.supportedConfigs = %+v, want a default config config-%s", cfgs, suffix)
		}
	})
}

func deleteMCA(addon addonclient.Interface, namespace, name string) {
	_ = addon.AddonV1alpha1().ManagedClusterAddOns(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
}
