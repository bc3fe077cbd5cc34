// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"open-cluster-management.io/traffic-migration/pkg/agent"
	agentreport "open-cluster-management.io/traffic-migration/pkg/agent/report"
	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/benchreport"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

const (
	// agentGatewayNamespaces is how many namespaces of the spoke the Gateways spread over.
	agentGatewayNamespaces = 4
	// agentTimeout bounds the agent's start and its first full report.
	agentTimeout = 3 * time.Minute
)

// benchAgent: the spoke agent, run as the real binary against a spoke of its own with
// the given number of Gateways, all programmed. How long it takes to report them all
// on the hub, then, over a steady period with nothing changing, its resident memory,
// its peak, its CPU and the writes it makes to its ManagedClusterAddOn.
func benchAgent(t *testing.T, r *benchreport.Report, gateways int, steady time.Duration) {
	ctx := t.Context()
	hubCfg := rest.CopyConfig(bed.Hub.Config)
	hubCfg.QPS, hubCfg.Burst = 200, 400
	hubAddons, err := addonclient.NewForConfig(hubCfg)
	if err != nil {
		t.Fatal(err)
	}

	// The cluster's namespace on the hub, as OCM's registration makes it, and a spoke.
	cluster := bed.Hub.Namespace(t, "agent")
	startCtx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	spoke, err := bed.StartSpoke(startCtx, cluster)
	if err != nil {
		t.Fatalf("start a spoke: %v", err)
	}
	// Stopped after the agent (cleanups run last first), to spare the machine.
	t.Cleanup(spoke.Process.Stop)
	spokeCfg := rest.CopyConfig(spoke.Config)
	spokeCfg.QPS, spokeCfg.Burst = 200, 400
	spokeKube, err := kubernetes.NewForConfig(spokeCfg)
	if err != nil {
		t.Fatal(err)
	}
	spokeGateways, err := gatewayclient.NewForConfig(spokeCfg)
	if err != nil {
		t.Fatal(err)
	}
	crdFiles, err := testbed.GatewayAPICRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := testbed.InstallCRDs(startCtx, spoke.Config, crdFiles...); err != nil {
		t.Fatalf("install the Gateway API on the spoke: %v", err)
	}
	namespaces := []string{agent.DefaultAddonNamespace}
	for i := 0; i < agentGatewayNamespaces; i++ {
		namespaces = append(namespaces, fmt.Sprintf("apps-%d", i))
	}
	for _, ns := range namespaces {
		if _, err := spokeKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s on the spoke: %v", ns, err)
		}
	}
	for i := 0; i < gateways; i++ {
		if err := createProgrammedGateway(ctx, spokeGateways, namespaces[1+i%agentGatewayNamespaces], fmt.Sprintf("gw-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	// The ManagedClusterAddOn as the add-on manager creates it, Available.
	addons := hubAddons.AddonV1alpha1().ManagedClusterAddOns(cluster)
	addon, err := addons.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: trafficv1alpha1.AddonName, Namespace: cluster},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: agent.DefaultAddonNamespace},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ManagedClusterAddOn: %v", err)
	}
	addon.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue,
		Reason: addonv1alpha1.AddonAvailableReasonProbeAvailable, Message: "traffic-migration add-on is available.", LastTransitionTime: metav1.Now()}}
	if _, err := addons.UpdateStatus(ctx, addon, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark the ManagedClusterAddOn Available: %v", err)
	}
	hubKubeconfig, err := bed.Hub.AgentHubKubeconfig(ctx, cluster, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	// The agent, the real binary: traffic-migration-agent, which the add-on's agent
	// Deployment runs.
	healthPort, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	healthArg := fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", healthPort)
	started := time.Now()
	proc, err := bed.StartProgram(startCtx, "traffic-migration agent (bench)", testbed.ProgramTrafficMigrationAgent, []string{
		"--hub-kubeconfig=" + hubKubeconfig,
		"--kubeconfig=" + spoke.KubeconfigPath,
		"--cluster-name=" + cluster,
		"--addon-namespace=" + agent.DefaultAddonNamespace,
		healthArg,
	}, testbed.HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)))
	if err != nil {
		t.Fatalf("start the agent: %v", err)
	}
	ready := time.Since(started)
	t.Cleanup(proc.Stop)
	pid := proc.PID()

	// Every Gateway reported, programmed, on the hub. The agent writes GatewayAPI True
	// only once its Gateway cache has synced, so with no Gateways too the wait ends
	// after its first report.
	want := min(gateways, agentreport.MaxGateways)
	var last *addonv1alpha1.ManagedClusterAddOn
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, agentTimeout, true, func(ctx context.Context) (bool, error) {
		a, err := addons.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = a
		api := meta.FindStatusCondition(a.Status.Conditions, trafficv1alpha1.ConditionGatewayAPI)
		return api != nil && api.Status == metav1.ConditionTrue && programmedConditions(a) == want, nil
	})
	if err != nil {
		got := 0
		if last != nil {
			got = programmedConditions(last)
		}
		t.Fatalf("the hub never saw %d Gateways programmed (last: %d): %v; the agent's log ends with:\n%s", want, got, err, proc.Tail(4096))
	}
	reported := time.Since(started)

	// The steady period: nothing changes; every status write shows as a watch event.
	events, err := addons.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", trafficv1alpha1.AddonName).String(),
		ResourceVersion: last.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	u0, err := usageOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	writes := countModified(events, time.After(steady))
	u1, err := usageOf(pid)
	if err != nil {
		t.Fatalf("read the agent's usage after the steady period (has it exited? %v): %v", proc.Exited(), err)
	}
	end, err := addons.Get(ctx, trafficv1alpha1.AddonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if end.ResourceVersion != last.ResourceVersion && writes == 0 {
		writes = 1 // the watch missed it: at least one write
	}

	const b = "6. Agent"
	params := fmt.Sprintf("%d Gateways on one spoke in %d namespaces, programmed; steady %gs", gateways, agentGatewayNamespaces, steady.Seconds())
	r.Add(b, params, "agent start to ready (readyz)", ready.Seconds(), "s", "")
	r.Add(b, params, fmt.Sprintf("agent start to %d Gateways reported programmed on the hub", want), reported.Seconds(), "s", "")
	r.Add(b, params, "agent RSS at the end of the steady period", u1.rssBytes/(1<<20), "MiB", "< 40 MiB")
	r.Add(b, params, "agent peak RSS (VmHWM)", u1.hwmBytes/(1<<20), "MiB", "")
	r.Add(b, params, "agent CPU per minute, steady", (u1.cpuSeconds-u0.cpuSeconds)/steady.Minutes(), "CPU s/min", "")
	r.Add(b, params, "ManagedClusterAddOn status writes, steady", float64(writes), "", "0")
	r.Add(b, params, "ManagedClusterAddOn status size", float64(statusSize(end)), "bytes", "")
}

// createProgrammedGateway creates a Gateway with an HTTP and an HTTPS listener, then
// sets its status as a Gateway controller does once it has programmed it.
func createProgrammedGateway(ctx context.Context, client gatewayclient.Interface, namespace, name string) error {
	hostname := gatewayv1.Hostname(name + ".example.com")
	terminate := gatewayv1.TLSModeTerminate
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": name}},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "example",
			Listeners: []gatewayv1.Listener{
				{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: &hostname},
				{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: &hostname, TLS: &gatewayv1.ListenerTLSConfig{
					Mode: &terminate, CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(name + "-tls")}},
				}},
			},
		},
	}
	gw, err := client.GatewayV1().Gateways(namespace).Create(ctx, gw, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create Gateway %s/%s: %w", namespace, name, err)
	}
	now := metav1.Now()
	cond := func(t, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: gw.Generation, LastTransitionTime: now}
	}
	ip := gatewayv1.IPAddressType
	gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "10.0.0.1"}}
	gw.Status.Conditions = []metav1.Condition{
		cond(string(gatewayv1.GatewayConditionAccepted), string(gatewayv1.GatewayReasonAccepted)),
		cond(string(gatewayv1.GatewayConditionProgrammed), string(gatewayv1.GatewayReasonProgrammed)),
	}
	for _, l := range gw.Spec.Listeners {
		gw.Status.Listeners = append(gw.Status.Listeners, gatewayv1.ListenerStatus{
			Name:           l.Name,
			SupportedKinds: []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}},
			AttachedRoutes: 1,
			Conditions: []metav1.Condition{
				cond(string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerReasonAccepted)),
				cond(string(gatewayv1.ListenerConditionProgrammed), string(gatewayv1.ListenerReasonProgrammed)),
				cond(string(gatewayv1.ListenerConditionResolvedRefs), string(gatewayv1.ListenerReasonResolvedRefs)),
			},
		})
	}
	if _, err := client.GatewayV1().Gateways(namespace).UpdateStatus(ctx, gw, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("program Gateway %s/%s: %w", namespace, name, err)
	}
	return nil
}

// programmedConditions counts the add-on's Gateway conditions that are True.
func programmedConditions(a *addonv1alpha1.ManagedClusterAddOn) int {
	n := 0
	for _, c := range a.Status.Conditions {
		if strings.HasPrefix(c.Type, trafficv1alpha1.GatewayConditionPrefix) && c.Status == metav1.ConditionTrue {
			n++
		}
	}
	return n
}

// countModified counts the watch's Modified events until done, then stops the watch.
func countModified(w watch.Interface, done <-chan time.Time) int {
	defer w.Stop()
	n := 0
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				<-done
				return n
			}
			if ev.Type == watch.Modified {
				n++
			}
		case <-done:
			return n
		}
	}
}

// statusSize is the size of the add-on's status as JSON: what every write of it sends.
func statusSize(a *addonv1alpha1.ManagedClusterAddOn) int {
	b, err := json.Marshal(a.Status)
	if err != nil {
		return 0
	}
	return len(b)
}
