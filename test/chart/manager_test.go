// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// managerValues sets every value of manager, the settings of a hub shared by tenants,
// to something other than its default, the NetworkPolicy on.
var managerValues = map[string]any{
	"prometheusAllowlist": []any{"https://prom.example.com/", "thanos.monitoring.svc", "*.monitoring.svc", "10.0.0.0/8"},
	"prometheus":          map[string]any{"maxAnswerBytes": 16777216, "maxSeries": 500},
	"drainCeiling":        map[string]any{"maxDrainDuration": "24h", "action": "Remove"},
	"dns": map[string]any{"domains": []any{"team-a=*.a.example.com", "team-b=shop.example.com"}, "allowPrivate": false, "ownerID": "hub-eu",
		"nameserverAllowlist": []any{"public", "10.0.53.0/24", "*.ns.corp.example"}},
	"networkPolicy": map[string]any{
		"enabled":     true,
		"metricsFrom": []any{monitoringNamespace},
		"dns": map[string]any{
			"to":    []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "openshift-dns"}}}},
			"ports": []any{5353},
		},
		"apiServer": map[string]any{"cidrs": []any{"192.0.2.10/32", "2001:db8::10/128"}, "ports": []any{6443}},
		"prometheus": []any{map[string]any{
			"to":    []any{monitoringNamespace},
			"ports": []any{map[string]any{"port": 9090, "protocol": "TCP"}},
		}},
		"extraEgress": []any{map[string]any{
			"to":    []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8"}}},
			"ports": []any{map[string]any{"port": 10902, "protocol": "TCP"}},
		}},
	},
}

// monitoringNamespace is a NetworkPolicyPeer: the pods of the namespace monitoring.
var monitoringNamespace = map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}

const (
	deploymentKey             = "Deployment/" + namespace + "/traffic-migration-manager"
	addonManagerDeploymentKey = "Deployment/" + namespace + "/traffic-migration-addon-manager"
	networkPolicyKey          = "NetworkPolicy/" + namespace + "/traffic-migration-manager"
)

// managerArgs are the arguments of the manager's container: the policy controllers'.
func managerArgs(t *testing.T, objs map[string]map[string]any) []any {
	t.Helper()
	return containerArgs(t, objs, deploymentKey)
}

// addonManagerArgs are the arguments of the add-on manager's container.
func addonManagerArgs(t *testing.T, objs map[string]map[string]any) []any {
	t.Helper()
	return containerArgs(t, objs, addonManagerDeploymentKey)
}

// containerArgs are the arguments of the first container of the Deployment key.
func containerArgs(t *testing.T, objs map[string]map[string]any, key string) []any {
	t.Helper()
	containers, _ := dig(objs[key], "spec", "template", "spec", "containers").([]any)
	if len(containers) == 0 {
		t.Fatalf("no container in %s; rendered %v", key, keys(objs))
	}
	args, _ := containers[0].(map[string]any)["args"].([]any)
	return args
}

// renderError runs `helm template` with values over the chart's defaults and returns
// its error, which carries helm's stderr.
func renderError(t *testing.T, values map[string]any) error {
	t.Helper()
	args := append([]string{"template", "traffic-migration", chart(t), "--namespace", namespace}, testbed.HelmValues(t, values)...)
	_, err := testbed.Helm(t.Context(), t.TempDir(), "", args...)
	return err
}

// TestChartManagerFlags checks that each value of manager reaches the manager as its
// flag, and only when it differs from the manager's default: the defaults, and the
// defaults set explicitly, add no flag (TestChartValues sets them all at once).
func TestChartManagerFlags(t *testing.T) {
	base := []any{"manager", "--controllers=policy", "--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "-v=2"}
	// The add-on manager takes none of manager.*'s flags: only the agent's image.
	addonBase := []any{"manager", "--controllers=addon-manager", "--leader-elect=true", "--leader-election-id=traffic-migration-addon-manager",
		"--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--agent-image=" + defaultImage(t), "-v=2"}
	for name, tc := range map[string]struct {
		manager map[string]any
		want    []any
	}{
		"defaults": {nil, nil},
		"the defaults set": {map[string]any{
			"prometheusAllowlist": []any{},
			"prometheus":          map[string]any{"maxAnswerBytes": 1048576, "maxSeries": 100},
			"drainCeiling":        map[string]any{"maxDrainDuration": "", "action": "Hold"},
			"dns":                 map[string]any{"domains": []any{}, "allowPrivate": true, "ownerID": "", "nameserverAllowlist": []any{}},
		}, nil},
		"one allowlist entry": {map[string]any{"prometheusAllowlist": []any{"*.monitoring.svc"}},
			[]any{"--prometheus-allowlist=*.monitoring.svc"}},
		"allowlist entries": {map[string]any{"prometheusAllowlist": []any{"https://prom.example.com/", "10.0.0.0/8"}},
			[]any{"--prometheus-allowlist=https://prom.example.com/,10.0.0.0/8"}},
		// Numbers reach the template as float64s, which print with an exponent
		// (1.073741824e+09) unless the template makes them integers.
		"answer bytes": {map[string]any{"prometheus": map[string]any{"maxAnswerBytes": 1073741824}},
			[]any{"--prometheus-max-answer-bytes=1073741824"}},
		"series":          {map[string]any{"prometheus": map[string]any{"maxSeries": 1}}, []any{"--prometheus-max-series=1"}},
		"a drain ceiling": {map[string]any{"drainCeiling": map[string]any{"maxDrainDuration": "1h30m"}}, []any{"--max-drain-duration=1h30m"}},
		"a drain ceiling that removes": {map[string]any{"drainCeiling": map[string]any{"maxDrainDuration": "36h", "action": "Remove"}},
			[]any{"--max-drain-duration=36h", "--on-max-drain-duration=Remove"}},
		"one DNS domain": {map[string]any{"dns": map[string]any{"domains": []any{"team-a=*.a.example.com"}}},
			[]any{"--dns-domains=team-a=*.a.example.com"}},
		"DNS domains": {map[string]any{"dns": map[string]any{"domains": []any{"team-a=*.a.example.com", "team-b=shop.example.com", "*=*.shared.example.com"}}},
			[]any{"--dns-domains=team-a=*.a.example.com,team-b=shop.example.com,*=*.shared.example.com"}},
		"no private addresses in DNS": {map[string]any{"dns": map[string]any{"allowPrivate": false}}, []any{"--dns-allow-private=false"}},
		"a DNS owner id":              {map[string]any{"dns": map[string]any{"ownerID": "hub-eu.traffic"}}, []any{"--dns-owner-id=hub-eu.traffic"}},
		"a private zone's name servers": {map[string]any{"dns": map[string]any{"nameserverAllowlist": []any{"public", "10.0.53.0/24"}}},
			[]any{"--dns-nameserver-allowlist=public,10.0.53.0/24"}},
	} {
		t.Run(name, func(t *testing.T) {
			var values map[string]any
			if tc.manager != nil {
				values = map[string]any{"manager": tc.manager}
			}
			objs := render(t, values)
			if got, want := managerArgs(t, objs), append(append([]any{}, base...), tc.want...); !reflect.DeepEqual(got, want) {
				t.Errorf("args:\n got %q\nwant %q", got, want)
			}
			if got := addonManagerArgs(t, objs); !reflect.DeepEqual(got, addonBase) {
				t.Errorf("the add-on manager's args:\n got %q\nwant %q", got, addonBase)
			}
		})
	}

	err := renderError(t, map[string]any{"manager": map[string]any{"drainCeiling": map[string]any{"action": "Remove"}}})
	if err == nil || !strings.Contains(err.Error(), "manager.drainCeiling.action: Remove needs manager.drainCeiling.maxDrainDuration") {
		t.Errorf("helm template with action Remove and no ceiling: %v, want it refused", err)
	}
}

// TestChartNetworkPolicy checks manager.networkPolicy: off by default; on, a
// NetworkPolicy that selects the manager's Pods as its Deployment does and lets in
// only the metrics port (from metricsFrom) and the health port, and out only DNS, the
// API server, the Prometheus servers and the extra rules; refused without the API
// server's addresses.
func TestChartNetworkPolicy(t *testing.T) {
	if np, ok := render(t, nil)[networkPolicyKey]; ok {
		t.Fatalf("the NetworkPolicy renders by default: %v", np)
	}

	got := render(t, map[string]any{"manager": managerValues})
	np := got[networkPolicyKey]
	if np == nil {
		t.Fatalf("no NetworkPolicy; rendered %v", keys(got))
	}
	deploy := got[deploymentKey]
	selector := dig(np, "spec", "podSelector", "matchLabels")
	if want := dig(deploy, "spec", "selector", "matchLabels"); !reflect.DeepEqual(selector, want) {
		t.Errorf("the NetworkPolicy selects %v, the Deployment %v", selector, want)
	}
	podLabels := dig(deploy, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range selector.(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("the NetworkPolicy selects %s=%v, which the manager's Pods lack (%v)", k, v, podLabels)
		}
	}
	container := dig(deploy, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	containerPorts := map[any]bool{}
	for _, p := range container["ports"].([]any) {
		containerPorts[p.(map[string]any)["containerPort"]] = true
	}

	tcp := func(port int) any { return map[string]any{"port": float64(port), "protocol": "TCP"} }
	udp := func(port int) any { return map[string]any{"port": float64(port), "protocol": "UDP"} }
	want := map[string]any{
		"podSelector": map[string]any{"matchLabels": selector},
		"policyTypes": []any{"Ingress", "Egress"},
		"ingress": []any{
			map[string]any{"ports": []any{tcp(8080)}, "from": []any{monitoringNamespace}},
			map[string]any{"ports": []any{tcp(8081)}},
		},
		"egress": []any{
			map[string]any{"to": dig(managerValues, "networkPolicy", "dns", "to"), "ports": []any{udp(5353), tcp(5353)}},
			map[string]any{
				"to": []any{
					map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.10/32"}},
					map[string]any{"ipBlock": map[string]any{"cidr": "2001:db8::10/128"}},
				},
				"ports": []any{tcp(6443)},
			},
			map[string]any{"to": []any{monitoringNamespace}, "ports": []any{tcp(9090)}},
			map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8"}}}, "ports": []any{tcp(10902)}},
		},
	}
	// The values above went through YAML: compare with what they read back as.
	if !reflect.DeepEqual(np["spec"], roundTrip(t, want)) {
		gb, _ := yaml.Marshal(np["spec"])
		wb, _ := yaml.Marshal(want)
		t.Errorf("NetworkPolicy spec:\n%s\nwant:\n%s", gb, wb)
	}
	for _, rule := range dig(np, "spec", "ingress").([]any) {
		for _, p := range rule.(map[string]any)["ports"].([]any) {
			if port := p.(map[string]any)["port"]; !containerPorts[port] {
				t.Errorf("the NetworkPolicy lets in port %v, which is no port of the manager (%v)", port, container["ports"])
			}
		}
	}

	// The defaults of the rules: DNS to kube-dns on 53, the API server on 443 and
	// 6443, the metrics port from anywhere; DNS off leaves no DNS rule.
	minimal := func(extra map[string]any) map[string]any {
		netpol := map[string]any{"enabled": true, "apiServer": map[string]any{"cidrs": []any{"192.0.2.10/32"}}}
		for k, v := range extra {
			netpol[k] = v
		}
		return map[string]any{"manager": map[string]any{"networkPolicy": netpol}}
	}
	np = render(t, minimal(nil))[networkPolicyKey]
	kubeDNS := []any{map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "kube-system"}},
		"podSelector":       map[string]any{"matchLabels": map[string]any{"k8s-app": "kube-dns"}},
	}}
	wantEgress := []any{
		map[string]any{"to": kubeDNS, "ports": []any{udp(53), tcp(53)}},
		map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.10/32"}}}, "ports": []any{tcp(443), tcp(6443)}},
	}
	if got := dig(np, "spec", "egress"); !reflect.DeepEqual(got, wantEgress) {
		t.Errorf("default egress:\n got %v\nwant %v", got, wantEgress)
	}
	if got, want := dig(np, "spec", "ingress"), []any{map[string]any{"ports": []any{tcp(8080)}}, map[string]any{"ports": []any{tcp(8081)}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("default ingress:\n got %v\nwant %v", got, want)
	}
	np = render(t, minimal(map[string]any{"dns": map[string]any{"enabled": false}}))[networkPolicyKey]
	if got := dig(np, "spec", "egress"); !reflect.DeepEqual(got, wantEgress[1:]) {
		t.Errorf("egress with dns off:\n got %v\nwant %v", got, wantEgress[1:])
	}

	for name, apiServer := range map[string]any{"unset": nil, "no cidrs": map[string]any{"cidrs": []any{}}} {
		netpol := map[string]any{"enabled": true}
		if apiServer != nil {
			netpol["apiServer"] = apiServer
		}
		err := renderError(t, map[string]any{"manager": map[string]any{"networkPolicy": netpol}})
		if err == nil || !strings.Contains(err.Error(), "manager.networkPolicy.enabled needs manager.networkPolicy.apiServer.cidrs") {
			t.Errorf("helm template with the NetworkPolicy on and the API server %s: %v, want it refused", name, err)
		}
	}
}

// roundTrip returns v as it reads back from YAML (numbers as float64).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChartManagerSchema runs the real helm on values the schema refuses, each with a
// message that names the value, and on a global value, which the schema accepts so
// that the chart can be a subchart: helm hands every subchart its parent's globals.
func TestChartManagerSchema(t *testing.T) {
	for name, tc := range map[string]struct {
		manager map[string]any
		want    string
	}{
		"an action the manager lacks":        {map[string]any{"drainCeiling": map[string]any{"maxDrainDuration": "1h", "action": "Later"}}, "/manager/drainCeiling/action"},
		"no series":                          {map[string]any{"prometheus": map[string]any{"maxSeries": 0}}, "/manager/prometheus/maxSeries"},
		"no answer":                          {map[string]any{"prometheus": map[string]any{"maxAnswerBytes": 0}}, "/manager/prometheus/maxAnswerBytes"},
		"a ceiling in days":                  {map[string]any{"drainCeiling": map[string]any{"maxDrainDuration": "1d"}}, "/manager/drainCeiling/maxDrainDuration"},
		"an entry with a comma":              {map[string]any{"prometheusAllowlist": []any{"a.svc,b.svc"}}, "/manager/prometheusAllowlist/0"},
		"a DNS domain without its namespace": {map[string]any{"dns": map[string]any{"domains": []any{"*.a.example.com"}}}, "/manager/dns/domains/0"},
		"two DNS domains in one entry":       {map[string]any{"dns": map[string]any{"domains": []any{"team-a=a.example.com,b.example.com"}}}, "/manager/dns/domains/0"},
		"private addresses as a word":        {map[string]any{"dns": map[string]any{"allowPrivate": "no"}}, "/manager/dns/allowPrivate"},
		"a DNS owner id with a space":        {map[string]any{"dns": map[string]any{"ownerID": "hub eu"}}, "/manager/dns/ownerID"},
		"two name servers in one entry":      {map[string]any{"dns": map[string]any{"nameserverAllowlist": []any{"public,10.0.53.0/24"}}}, "/manager/dns/nameserverAllowlist/0"},
		"a misspelt DNS value":               {map[string]any{"dns": map[string]any{"domain": []any{"team-a=a.example.com"}}}, "'domain' not allowed"},
		"a misspelt NetworkPolicy":           {map[string]any{"networkPolicy": map[string]any{"enable": true}}, "'enable' not allowed"},
		"an API server by name": {map[string]any{"networkPolicy": map[string]any{"enabled": true,
			"apiServer": map[string]any{"cidrs": []any{"kubernetes.default.svc"}}}}, "/manager/networkPolicy/apiServer/cidrs/0"},
	} {
		t.Run(name, func(t *testing.T) {
			err := renderError(t, map[string]any{"manager": tc.manager})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: %v, want it refused naming %q", err, tc.want)
			}
		})
	}

	if got := render(t, map[string]any{"global": map[string]any{"foo": "bar"}}); got[deploymentKey] == nil {
		t.Errorf("helm template with global values rendered no Deployment: %v", keys(got))
	}

	// As a subchart of a chart that sets a global value and this chart's values.
	parent := filepath.Join(t.TempDir(), "hub")
	if err := os.CopyFS(filepath.Join(parent, "charts", "traffic-migration"), os.DirFS(chart(t))); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: hub\nversion: 0.1.0\n" +
			"dependencies:\n- name: traffic-migration\n  version: \">0.0.0-0\"\n  repository: file://charts/traffic-migration\n",
		"values.yaml": "global:\n  foo: bar\ntraffic-migration:\n  replicas: 2\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(parent, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := objects(t, helm(t, "template", "hub", parent, "--namespace", namespace))
	if replicas := dig(got[deploymentKey], "spec", "replicas"); replicas != float64(2) {
		t.Errorf("as a subchart, the manager's replicas are %v, want 2; rendered %v", replicas, keys(got))
	}
	out := helm(t, "lint", parent, "--strict", "--namespace", namespace, "--with-subcharts")
	if !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint of a chart with this one as its subchart:\n%s", out)
	}
}
