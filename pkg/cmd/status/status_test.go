// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/yaml"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficfake "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/fake"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policyview/policyviewtest"
	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

// hub is a fake hub: the three fake clientsets the command reads through.
type hub struct {
	traffic *trafficfake.Clientset
	cluster *clusterfake.Clientset
	addon   *addonfake.Clientset
}

// newHub holds objs, each in the fake clientset of its kind, and serves the
// TrafficMigrationPolicy CRD.
func newHub(t *testing.T, objs ...runtime.Object) *hub {
	t.Helper()
	var traffic, cluster, addon []runtime.Object
	for _, o := range objs {
		switch o.(type) {
		case *trafficv1alpha1.TrafficMigrationPolicy:
			traffic = append(traffic, o)
		case *clusterv1beta1.PlacementDecision:
			cluster = append(cluster, o)
		case *addonv1alpha1.ManagedClusterAddOn:
			addon = append(addon, o)
		default:
			t.Fatalf("no fake clientset for %T", o)
		}
	}
	h := &hub{
		traffic: trafficfake.NewSimpleClientset(traffic...),
		cluster: clusterfake.NewSimpleClientset(cluster...),
		addon:   addonfake.NewSimpleClientset(addon...),
	}
	h.traffic.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: trafficv1alpha1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "trafficmigrationpolicies", Namespaced: true, Kind: "TrafficMigrationPolicy"}},
	}}
	return h
}

// withoutCRD makes the hub serve no TrafficMigrationPolicies, as an API server
// without the CRD does.
func (h *hub) withoutCRD() *hub {
	h.traffic.Discovery().(*fakediscovery.FakeDiscovery).Resources = nil
	h.traffic.PrependReactor("*", "trafficmigrationpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(trafficv1alpha1.Resource("trafficmigrationpolicies"), "")
	})
	return h
}

// forbid makes every request for resource on client fail as RBAC would refuse it.
func forbid(client interface {
	PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
}, resource schema.GroupResource) {
	client.PrependReactor("*", resource.Resource, func(a clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(resource, "",
			errors.New(`User "bob" cannot `+a.GetVerb()+` resource "`+resource.Resource+`"`))
	})
}

// run runs the status command with args against the hub and returns what it wrote
// to its standard output.
func (h *hub) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := h.options(&out, &errOut)
	cmd := newCommand(o)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

// options are the command's options with the hub's clients, the fixed clock and
// testNamespace as the kubeconfig's namespace.
func (h *hub) options(out, errOut interface {
	Write([]byte) (int, error)
}) *Options {
	o := NewOptions(nil, out, errOut)
	o.now = func() time.Time { return policyviewtest.Now }
	o.Hub.Load = func() (*hubclient.Clients, string, error) {
		namespace := policyviewtest.Namespace
		if o.Hub.Namespace != "" {
			namespace = o.Hub.Namespace
		}
		return &hubclient.Clients{Traffic: h.traffic, Cluster: h.cluster, Addon: h.addon}, namespace, nil
	}
	return o
}

// fleet is the test policy with its proxy decisions, a second policy in another
// namespace, and the add-ons of the policy's clusters.
func fleet() []runtime.Object {
	second := policyviewtest.NewPolicy(func(p *trafficv1alpha1.TrafficMigrationPolicy) {
		p.Namespace, p.Name = "payments", "checkout"
		p.Spec.PlacementRef.Name = "checkout"
		p.CreationTimestamp = *policyviewtest.At(-90 * time.Minute)
		p.Status = trafficv1alpha1.TrafficMigrationPolicyStatus{}
	})
	return []runtime.Object{
		policyviewtest.NewPolicy(), second,
		policyviewtest.NewDecision(policyviewtest.Proxy, "cluster1", "cluster2", "cluster3"),
		policyviewtest.NewDecision("gateway-placement", "cluster1"),
		policyviewtest.ReadyAddon("cluster1"), policyviewtest.ReadyAddon("cluster2"),
	}
}

func TestStatusCommandText(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"the table of a namespace": {
			want: "NAME      READY   PROXY                     ACTIVE   DRAINING   PROMETHEUS       AGE\n" +
				"example   True    gateway-placement-proxy   1        1          QuerySucceeded   3d\n",
		},
		"the table of another namespace": {
			args: []string{"-n", "payments"},
			want: "NAME       READY   PROXY            ACTIVE   DRAINING   PROMETHEUS   AGE\n" +
				"checkout   -       checkout-proxy   0        0          -            90m\n",
		},
		"the table of all namespaces": {
			args: []string{"-A"},
			want: "NAMESPACE        NAME       READY   PROXY                     ACTIVE   DRAINING   PROMETHEUS       AGE\n" +
				"gateway-system   example    True    gateway-placement-proxy   1        1          QuerySucceeded   3d\n" +
				"payments         checkout   -       checkout-proxy            0        0          -                90m\n",
		},
		"the table of all namespaces, without headers": {
			args: []string{"-A", "--no-headers"},
			want: "gateway-system   example    True   gateway-placement-proxy   1     1     QuerySucceeded   3d\n" +
				"payments         checkout   -      checkout-proxy            0     0     -                90m\n",
		},
		"an empty namespace": {
			args: []string{"--namespace=empty"},
			want: "No TrafficMigrationPolicies found in namespace empty.\n",
		},
		"one policy": {
			args: []string{policyviewtest.Policy},
			want: wantDetail,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := newHub(t, fleet()...).run(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := policyviewtest.Diff(tc.want, got); diff != "" {
				t.Errorf("output:\n%s", diff)
			}
		})
	}
}

func TestStatusCommandStructured(t *testing.T) {
	unmarshal := map[string]func([]byte, any) error{"json": json.Unmarshal, "yaml": func(b []byte, v any) error { return yaml.Unmarshal(b, v) }}
	for format, decode := range unmarshal {
		t.Run(format+" of one policy", func(t *testing.T) {
			out, err := newHub(t, fleet()...).run(t, policyviewtest.Policy, "-o", format)
			if err != nil {
				t.Fatal(err)
			}
			var v policyview.Policy
			if err := decode([]byte(out), &v); err != nil {
				t.Fatalf("decode %s: %v\n%s", format, err, out)
			}
			want := policyview.Build(objects(policyviewtest.NewPolicy(), nil), policyviewtest.Now)
			if v.Name != policyviewtest.Policy || v.Check.Summary != want.Check.Summary || len(v.Conditions) != 3 || len(v.Clusters) != 3 {
				t.Fatalf("unexpected view: %+v", v)
			}
			c := v.Clusters[1]
			if c.Name != "cluster2" || c.Gateway != policyview.GatewayReady || c.DrainingFor != "3m10s" || c.NextCheck != "in 12s" || c.Expected != "in 12s" ||
				c.LastValue != "2.1000000000000001" || c.ConsecutiveSuccesses != 2 || c.RequiredSuccesses != 3 || !c.InProxyDecisions {
				t.Errorf("unexpected row of cluster2: %+v", c)
			}
			if c := v.Clusters[2]; c.Name != "cluster3" || c.Discrepancy == "" || c.Gateway != policyview.GatewayNoAgent {
				t.Errorf("unexpected row of cluster3: %+v", c)
			}
		})
		t.Run(format+" of all policies", func(t *testing.T) {
			out, err := newHub(t, fleet()...).run(t, "-A", "--output="+format)
			if err != nil {
				t.Fatal(err)
			}
			var list policyview.List
			if err := decode([]byte(out), &list); err != nil {
				t.Fatalf("decode %s: %v\n%s", format, err, out)
			}
			if len(list.Items) != 2 || list.Items[0].Name != policyviewtest.Policy || list.Items[1].Name != "checkout" {
				t.Fatalf("unexpected list: %+v", list)
			}
			if got := list.Items[0].Clusters[0].Gateway; got != policyview.GatewayReady {
				t.Errorf("the list's views are not detailed: gateway of cluster1 is %q", got)
			}
		})
	}
}

func TestStatusCommandErrors(t *testing.T) {
	tests := map[string]struct {
		hub     func(*testing.T) *hub
		args    []string
		wantErr string
	}{
		"policy not found": {
			args:    []string{"missing"},
			wantErr: "no TrafficMigrationPolicy missing in namespace gateway-system",
		},
		"policy not found in the named namespace": {
			args:    []string{policyviewtest.Policy, "-n", "payments"},
			wantErr: "no TrafficMigrationPolicy example in namespace payments",
		},
		"no CRD, one policy": {
			hub:     func(t *testing.T) *hub { return newHub(t).withoutCRD() },
			args:    []string{policyviewtest.Policy},
			wantErr: "the traffic-migration CRD is not installed on this cluster",
		},
		"no CRD, the table": {
			hub:     func(t *testing.T) *hub { return newHub(t).withoutCRD() },
			wantErr: "the traffic-migration CRD is not installed on this cluster",
		},
		"no CRD, watching": {
			hub:     func(t *testing.T) *hub { return newHub(t).withoutCRD() },
			args:    []string{"--watch"},
			wantErr: "the traffic-migration CRD is not installed on this cluster",
		},
		"forbidden to list": {
			hub: func(t *testing.T) *hub {
				h := newHub(t, fleet()...)
				forbid(h.traffic, trafficv1alpha1.Resource("trafficmigrationpolicies"))
				return h
			},
			args:    []string{"-A"},
			wantErr: `forbidden: you may not list TrafficMigrationPolicies in all namespaces (give a namespace you may read with -n; reading them needs get, list and watch on trafficmigrationpolicies.traffic.open-cluster-management.io): trafficmigrationpolicies.traffic.open-cluster-management.io is forbidden: User "bob" cannot list resource "trafficmigrationpolicies"`,
		},
		"forbidden to get": {
			hub: func(t *testing.T) *hub {
				h := newHub(t, fleet()...)
				forbid(h.traffic, trafficv1alpha1.Resource("trafficmigrationpolicies"))
				return h
			},
			args:    []string{policyviewtest.Policy},
			wantErr: "forbidden: you may not get TrafficMigrationPolicies in namespace gateway-system",
		},
		"unauthorized": {
			hub: func(t *testing.T) *hub {
				h := newHub(t, fleet()...)
				h.traffic.PrependReactor("*", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewUnauthorized("token expired")
				})
				return h
			},
			wantErr: "unauthorized: the hub did not accept the kubeconfig's credentials (log in again?): token expired",
		},
		"bad output":   {args: []string{"-o", "table"}, wantErr: `--output must be empty or one of wide, json, yaml, kyaml, name, go-template`},
		"name and -A":  {args: []string{policyviewtest.Policy, "-A"}, wantErr: "a policy NAME cannot be combined with --all-namespaces"},
		"-n and -A":    {args: []string{"-n", "x", "-A"}, wantErr: "--namespace and --all-namespaces cannot be combined"},
		"two names":    {args: []string{"a", "b"}, wantErr: "accepts at most 1 arg(s), received 2"},
		"unknown flag": {args: []string{"--no-such-flag"}, wantErr: "unknown flag: --no-such-flag"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHub(t, fleet()...)
			if tc.hub != nil {
				h = tc.hub(t)
			}
			out, err := h.run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if out != "" {
				t.Errorf("wrote %q despite the error", out)
			}
		})
	}
}

func TestStatusCommandDegradesWithoutRelatedRights(t *testing.T) {
	h := newHub(t, fleet()...)
	forbid(h.cluster, clusterv1beta1.Resource("placementdecisions"))
	forbid(h.addon, addonv1alpha1.Resource("managedclusteraddons"))
	out, err := h.run(t, policyviewtest.Policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  cluster2   Draining   Unknown   2.1 / <= 5   2/3         3m10s          in 12s       in 12s         waiting for 1 more passing check\n",
		"Warnings:\n  cannot read the proxy PlacementDecisions, so the clusters are not cross-checked: ",
		"  cannot read the traffic-migration add-on of cluster1, cluster2: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Gateways not ready") {
		t.Errorf("add-ons that cannot be read are a warning, not Gateways that are not ready:\n%s", out)
	}
	if strings.Contains(out, "cluster3") {
		t.Errorf("cluster3 is only in the decisions, which cannot be read:\n%s", out)
	}
}

func TestLoadClients(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://127.0.0.1:6443"}
- name: other
  cluster: {server: "https://127.0.0.2:6443"}
users:
- name: admin
  user: {token: "t"}
contexts:
- name: hub
  context: {cluster: hub, user: admin, namespace: gateway-system}
- name: other
  context: {cluster: other, user: admin}
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		opts          Options
		env           string
		wantNamespace string
		wantErr       string
	}{
		"the current context's namespace": {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{Kubeconfig: kubeconfig}}}, wantNamespace: "gateway-system"},
		"--namespace wins":                {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{Kubeconfig: kubeconfig, Namespace: "payments"}}}, wantNamespace: "payments"},
		"--context":                       {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{Kubeconfig: kubeconfig, Context: "other"}}}, wantNamespace: "default"},
		"$KUBECONFIG":                     {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{}}}, env: kubeconfig, wantNamespace: "gateway-system"},
		"an unknown context":              {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{Kubeconfig: kubeconfig, Context: "nope"}}}, wantErr: `context "nope" does not exist`},
		"a missing file":                  {opts: Options{Hub: hubclient.Options{Flags: &hubclient.Flags{Kubeconfig: filepath.Join(dir, "none")}}}, wantErr: "load the kubeconfig"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("HOME", dir)
			c, namespace, err := tc.opts.Hub.Clients()
			if proctest.WantedError(t, err, tc.wantErr) {
				return
			}
			if namespace != tc.wantNamespace || c.Traffic == nil || c.Cluster == nil || c.Addon == nil {
				t.Errorf("namespace %q, clients %+v", namespace, c)
			}
		})
	}
}

func TestStatusCommandHelp(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(nil, &out, &out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"status [NAME]", "--kubeconfig", "--context", "-n, --namespace", "-A, --all-namespaces",
		"-w, --watch", "-o, --output", "NoAgent", "--as", "--as-group", "--request-timeout",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
