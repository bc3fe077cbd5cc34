// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"open-cluster-management.io/traffic-migration/pkg/agent"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// agentTimeout bounds each wait for the agent; the machine may be busy.
const agentTimeout = 90 * time.Second

// TestAgent runs the spoke agent in-process against the hub and a spoke of its own:
// it reports the Gateway API once its CRD is installed, without a restart, and gone
// once it is removed; a Gateway's readiness as a Gateway controller sets it; the
// cluster's labels; and it leaves every condition it does not own as it was.
func TestAgent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFleet(t)
	// The cluster's namespace on the hub, as OCM's registration makes it.
	cluster := bed.Hub.Namespace(t, "agent")

	spoke, spokeKube := startSpoke(t, cluster)
	spokeGateways, err := gatewayclient.NewForConfig(spoke.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{agent.DefaultAddonNamespace, "apps"} {
		if _, err := spokeKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s on the spoke: %v", ns, err)
		}
	}
	kubeSystem, err := spokeKube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The ManagedClusterAddOn, as the add-on manager creates it, with the conditions
	// of others: the framework's Available, and one of someone else.
	addons := f.Addon.AddonV1alpha1().ManagedClusterAddOns(cluster)
	addon, err := addons.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: cluster},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: agent.DefaultAddonNamespace},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ManagedClusterAddOn: %v", err)
	}
	foreign := []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated",
			Message: "traffic-migration add-on is available.", ObservedGeneration: addon.Generation, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))},
		{Type: "example.com/Foreign", Status: metav1.ConditionFalse, Reason: "NotOurs", Message: "written by someone else",
			LastTransitionTime: metav1.NewTime(time.Now().Add(-2 * time.Hour).Truncate(time.Second))},
	}
	addon.Status.Conditions = foreign
	if _, err := addons.UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the foreign conditions: %v", err)
	}

	health := startAgent(t, &agent.Options{
		HubKubeconfig:          agentHubKubeconfig(t, cluster),
		Kubeconfig:             spoke.KubeconfigPath,
		ClusterName:            cluster,
		AddonNamespace:         agent.DefaultAddonNamespace,
		MetricsLabels:          "cluster=us-east-1, region=us-east",
		GatewayLabelSelector:   "example.com/skip!=true",
		HealthProbeBindAddress: "127.0.0.1:0",
	})

	// wantCondition waits until the add-on has a condition of the type that passes
	// check (or none, with a nil check) and the foreign conditions as they were.
	wantCondition := func(what, condType string, check func(c *metav1.Condition) bool) *addonv1alpha1.ManagedClusterAddOn {
		t.Helper()
		var last *addonv1alpha1.ManagedClusterAddOn
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, agentTimeout, true, func(ctx context.Context) (bool, error) {
			a, err := addons.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = a
			c := meta.FindStatusCondition(a.Status.Conditions, condType)
			if check == nil {
				return c == nil, nil
			}
			return c != nil && check(c), nil
		})
		if err != nil {
			t.Fatalf("%s: %v; conditions: %s", what, err, agentConditions(last))
		}
		assertForeignKept(t, last, foreign)
		return last
	}
	is := func(status metav1.ConditionStatus, reason, message string) func(*metav1.Condition) bool {
		return func(c *metav1.Condition) bool {
			return c.Status == status && c.Reason == reason && (message == "" || c.Message == message)
		}
	}

	// Before the Gateway API is installed.
	wantCondition("the Gateway API reported missing", trafficv1alpha1.ConditionGatewayAPI, is(metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled,
		"CustomResourceDefinition gateways.gateway.networking.k8s.io is not installed"))
	labels := fmt.Sprintf("cluster=us-east-1,cluster_id=%s,cluster_name=%s,region=us-east", kubeSystem.UID, cluster)
	wantCondition("the cluster labels", trafficv1alpha1.ConditionClusterLabels, is(metav1.ConditionTrue, trafficv1alpha1.AgentReasonReported, labels))
	agentWaitForHTTP(t, "http://"+health+"/readyz", http.StatusOK)
	agentWaitForHTTP(t, "http://"+health+"/healthz", http.StatusOK)
	// Its health is its Deployment's: it writes no Lease.
	if leases, err := spokeKube.CoordinationV1().Leases(agent.DefaultAddonNamespace).List(ctx, metav1.ListOptions{}); err != nil || len(leases.Items) != 0 {
		t.Errorf("the agent's namespace has Leases: %v %+v", err, leases)
	}

	// The Gateway API arrives while the agent runs.
	crdFiles := installGatewayAPI(t, spoke.Config)
	wantCondition("the Gateway API reported installed", trafficv1alpha1.ConditionGatewayAPI, is(metav1.ConditionTrue, trafficv1alpha1.AgentReasonInstalled,
		"Gateway API v1 is installed; reporting 0 Gateways labelled example.com/skip!=true"))

	// A new Gateway waits for its controller; one the selector leaves out is not reported.
	webType := trafficv1alpha1.GatewayConditionType("apps", "web")
	web := createGateway(t, spokeGateways, "web", nil)
	createGateway(t, spokeGateways, "hidden", map[string]string{"example.com/skip": "true"})
	wantCondition("a new Gateway pending", webType, is(metav1.ConditionFalse, trafficv1alpha1.AgentReasonPending, ""))
	wantCondition("one Gateway reported", trafficv1alpha1.ConditionGatewayAPI, is(metav1.ConditionTrue, trafficv1alpha1.AgentReasonInstalled,
		"Gateway API v1 is installed; reporting 1 Gateway labelled example.com/skip!=true"))
	current, err := addons.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(current.Status.Conditions, trafficv1alpha1.GatewayConditionType("apps", "hidden")); c != nil {
		t.Errorf("a Gateway the selector leaves out is reported: %+v", c)
	}

	// A Gateway controller programs it.
	web = programGateway(t, spokeGateways, web)
	wantCondition("the Gateway programmed", webType, is(metav1.ConditionTrue, trafficv1alpha1.AgentReasonProgrammed, "Addresses: 10.0.0.1, gw.example.com"))

	// A change that does not concern the agent writes nothing: the first write after it
	// is the one for the next change that does.
	before, err := addons.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writes, err := addons.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String(),
		ResourceVersion: before.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer writes.Stop()
	web.Annotations = map[string]string{"example.com/touched": "yes"}
	if web, err = spokeGateways.GatewayV1().Gateways("apps").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("annotate the Gateway: %v", err)
	}

	// A new generation that its controller has not programmed yet.
	web.Spec.Listeners[0].Port = 8080
	if web, err = spokeGateways.GatewayV1().Gateways("apps").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("change the Gateway: %v", err)
	}
	notProgrammed := is(metav1.ConditionFalse, trafficv1alpha1.AgentReasonNotProgrammed,
		fmt.Sprintf("Programmed is True for generation %d, the Gateway is at generation %d. Addresses: 10.0.0.1, gw.example.com", web.Generation-1, web.Generation))
	wantCondition("the changed Gateway not programmed", webType, notProgrammed)
	select {
	case ev := <-writes.ResultChan():
		first, ok := ev.Object.(*addonv1alpha1.ManagedClusterAddOn)
		if !ok {
			t.Fatalf("unexpected watch event %v", ev.Type)
		}
		if !notProgrammed(meta.FindStatusCondition(first.Status.Conditions, webType)) {
			t.Errorf("the agent wrote after the annotation, before the new generation: %s", agentConditions(first))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no write seen for the new generation")
	}

	// A Gateway that goes loses its condition.
	if err := spokeGateways.GatewayV1().Gateways("apps").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantCondition("the deleted Gateway's condition removed", webType, nil)

	// The Gateway API goes, and comes back: a new informer reports new Gateways.
	crds, err := apiextensionsclient.NewForConfig(spoke.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "gateways.gateway.networking.k8s.io", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("remove the Gateway CRD: %v", err)
	}
	wantCondition("the Gateway API reported gone", trafficv1alpha1.ConditionGatewayAPI, is(metav1.ConditionFalse, trafficv1alpha1.AgentReasonCRDNotInstalled,
		"CustomResourceDefinition gateways.gateway.networking.k8s.io is not installed"))
	if err := testbed.InstallCRDs(ctx, spoke.Config, crdFiles...); err != nil {
		t.Fatalf("install the Gateway API again: %v", err)
	}
	createGateway(t, spokeGateways, "again", nil)
	wantCondition("a Gateway after the reinstall", trafficv1alpha1.GatewayConditionType("apps", "again"), is(metav1.ConditionFalse, trafficv1alpha1.AgentReasonPending, ""))
	wantCondition("the Gateway API reported back", trafficv1alpha1.ConditionGatewayAPI, is(metav1.ConditionTrue, trafficv1alpha1.AgentReasonInstalled, ""))
}

// startAgent runs the agent in-process until the test ends, and returns the address
// of its health probes.
func startAgent(t *testing.T, o *agent.Options) string {
	t.Helper()
	addrs := make(chan string, 1)
	o.OnListening = func(a string) { addrs <- a }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the agent stopped with an error: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the agent did not stop")
		}
	})
	select {
	case a := <-addrs:
		return a
	case err := <-done:
		t.Fatalf("the agent stopped: %v", err)
	case <-time.After(agentTimeout):
		t.Fatal("the agent did not start")
	}
	return ""
}

// startSpoke starts a spoke of the test bed for the cluster, and returns it with its
// client. The spoke is stopped once the test's agent has stopped (cleanups run last
// first), to spare the machine; the test bed would stop it at the end of the package.
func startSpoke(t *testing.T, cluster string) (*testbed.Cluster, kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	spoke, err := bed.StartSpoke(ctx, cluster)
	if err != nil {
		t.Fatalf("start a spoke: %v", err)
	}
	t.Cleanup(spoke.Process.Stop)
	kube, err := kubernetes.NewForConfig(spoke.Config)
	if err != nil {
		t.Fatal(err)
	}
	return spoke, kube
}

// agentHubKubeconfig writes a hub kubeconfig for the cluster's agent with the rights
// the add-on gives it on the hub, and nothing else.
func agentHubKubeconfig(t *testing.T, cluster string) string {
	t.Helper()
	path, err := bed.Hub.AgentHubKubeconfig(t.Context(), cluster, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// installGatewayAPI installs the Gateway API's CRDs on a spoke and returns their files.
func installGatewayAPI(t *testing.T, spoke *rest.Config) []string {
	t.Helper()
	crdFiles, err := testbed.GatewayAPICRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := testbed.InstallCRDs(t.Context(), spoke, crdFiles...); err != nil {
		t.Fatalf("install the Gateway API: %v", err)
	}
	return crdFiles
}

// createGateway creates a Gateway in namespace apps of the spoke.
func createGateway(t *testing.T, client gatewayclient.Interface, name string, gwLabels map[string]string) *gatewayv1.Gateway {
	t.Helper()
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", Labels: gwLabels},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "example",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	created, err := client.GatewayV1().Gateways("apps").Create(t.Context(), gw, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Gateway %s: %v", name, err)
	}
	return created
}

// programGateway sets the Gateway's status as a Gateway controller does once it has
// programmed the Gateway's current generation.
func programGateway(t *testing.T, client gatewayclient.Interface, gw *gatewayv1.Gateway) *gatewayv1.Gateway {
	t.Helper()
	gw = gw.DeepCopy()
	now := metav1.Now()
	gw.Status.Conditions = []metav1.Condition{
		{Type: string(gatewayv1.GatewayConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonAccepted),
			ObservedGeneration: gw.Generation, LastTransitionTime: now},
		{Type: string(gatewayv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayReasonProgrammed),
			ObservedGeneration: gw.Generation, LastTransitionTime: now},
	}
	ip, hostname := gatewayv1.IPAddressType, gatewayv1.HostnameAddressType
	gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "10.0.0.1"}, {Type: &hostname, Value: "gw.example.com"}}
	updated, err := client.GatewayV1().Gateways(gw.Namespace).UpdateStatus(t.Context(), gw, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("program Gateway %s: %v", gw.Name, err)
	}
	return updated
}

// assertForeignKept checks that the conditions the agent does not own are exactly as
// they were written.
func assertForeignKept(t *testing.T, a *addonv1alpha1.ManagedClusterAddOn, foreign []metav1.Condition) {
	t.Helper()
	for _, want := range foreign {
		got := meta.FindStatusCondition(a.Status.Conditions, want.Type)
		if got == nil || got.Status != want.Status || got.Reason != want.Reason || got.Message != want.Message ||
			got.ObservedGeneration != want.ObservedGeneration || !got.LastTransitionTime.Equal(&want.LastTransitionTime) {
			t.Fatalf("condition %s changed: got %+v, want %+v", want.Type, got, want)
		}
	}
}

// agentConditions lists an add-on's conditions for a failure message.
func agentConditions(a *addonv1alpha1.ManagedClusterAddOn) string {
	if a == nil {
		return "none read"
	}
	var b strings.Builder
	for _, c := range a.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s %q", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// agentWaitForHTTP polls url until it answers want.
func agentWaitForHTTP(t *testing.T, url string, want int) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, agentTimeout, true, func(ctx context.Context) (bool, error) {
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return resp.StatusCode == want, nil
	})
	if err != nil {
		t.Fatalf("GET %s: want %d, last answer %s", url, want, last)
	}
}
