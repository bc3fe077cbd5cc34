// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// gateway builds a Gateway for tests; the options change it.
func gateway(namespace, name string, opts ...func(*gatewayv1.Gateway)) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 2}}
	for _, o := range opts {
		o(gw)
	}
	return gw
}

// programmed sets the Gateway's Programmed condition.
func programmed(status metav1.ConditionStatus, reason string, observedGeneration int64) func(*gatewayv1.Gateway) {
	return func(gw *gatewayv1.Gateway) {
		gw.Status.Conditions = append(gw.Status.Conditions,
			metav1.Condition{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: gw.Generation},
			metav1.Condition{Type: "Programmed", Status: status, Reason: reason, ObservedGeneration: observedGeneration})
	}
}

// accepted sets the Gateway's Accepted condition alone, with no Programmed condition.
func accepted(status metav1.ConditionStatus, reason string, observedGeneration int64) func(*gatewayv1.Gateway) {
	return func(gw *gatewayv1.Gateway) {
		gw.Status.Conditions = append(gw.Status.Conditions,
			metav1.Condition{Type: "Accepted", Status: status, Reason: reason, ObservedGeneration: observedGeneration})
	}
}

// namedAddress adds an address of the implementation's own type NamedAddress.
func namedAddress(value string) func(*gatewayv1.Gateway) {
	return func(gw *gatewayv1.Gateway) {
		named := gatewayv1.NamedAddressType
		gw.Status.Addresses = append(gw.Status.Addresses, gatewayv1.GatewayStatusAddress{Type: &named, Value: value})
	}
}

// routed sets a listener with one attached route.
func routed(gw *gatewayv1.Gateway) {
	gw.Status.Listeners = append(gw.Status.Listeners, gatewayv1.ListenerStatus{Name: "web", AttachedRoutes: 1})
}

// addresses sets the Gateway's status addresses.
func addresses(values ...string) func(*gatewayv1.Gateway) {
	return func(gw *gatewayv1.Gateway) {
		for _, v := range values {
			gw.Status.Addresses = append(gw.Status.Addresses, gatewayv1.GatewayStatusAddress{Value: v})
		}
	}
}

func TestGatewayCondition(t *testing.T) {
	const condType = trafficv1alpha1.GatewayConditionPrefix + "apps.web"
	tests := map[string]struct {
		gw   *gatewayv1.Gateway
		want metav1.Condition
	}{
		"programmed for its generation": {
			gw:   gateway("apps", "web", programmed(metav1.ConditionTrue, "Programmed", 2), addresses("10.0.0.1", "gw.example.com")),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: "Programmed", Message: "Addresses: 10.0.0.1, gw.example.com"},
		},
		"programmed, no addresses": {
			gw:   gateway("apps", "web", programmed(metav1.ConditionTrue, "Programmed", 2)),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: "Programmed", Message: "No addresses"},
		},
		"programmed for an older generation": {
			gw: gateway("apps", "web", programmed(metav1.ConditionTrue, "Programmed", 1), addresses("10.0.0.1")),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "NotProgrammed",
				Message: "Programmed is True for generation 1, the Gateway is at generation 2. Addresses: 10.0.0.1"},
		},
		"not programmed": {
			gw: gateway("apps", "web", programmed(metav1.ConditionFalse, "Invalid", 2)),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "NotProgrammed",
				Message: "Programmed is False (Invalid). No addresses"},
		},
		"no Programmed condition": {
			gw: gateway("apps", "web"),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "Pending",
				Message: "No Programmed condition yet. No addresses"},
		},
		"not accepted, no Programmed condition, as Traefik leaves a listener without an entry point": {
			gw: gateway("apps", "web", accepted(metav1.ConditionFalse, "ListenersNotValid", 2), addresses("10.0.0.1")),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "NotProgrammed",
				Message: "Not accepted (ListenersNotValid). Addresses: 10.0.0.1"},
		},
		"not accepted for an older generation: pending": {
			gw: gateway("apps", "web", accepted(metav1.ConditionFalse, "ListenersNotValid", 1)),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "Pending",
				Message: "No Programmed condition yet. No addresses"},
		},
		"Programmed Unknown, as the CRD defaults it": {
			gw: gateway("apps", "web", programmed(metav1.ConditionUnknown, "Pending", 0)),
			want: metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: "Pending",
				Message: "Programmed is Unknown (Pending). No addresses"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := GatewayCondition(tc.gw); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// brief is a condition without its transition time, for comparisons.
type brief struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func TestConditions(t *testing.T) {
	labels := map[string]string{"cluster_name": "c1", "cluster_id": "uid-1", "region": "us-east"}
	const labelsMessage = "cluster_id=uid-1,cluster_name=c1,region=us-east"
	installed := GatewayAPI{Installed: true}
	many := make([]*gatewayv1.Gateway, 0, MaxGateways+2)
	for i := MaxGateways + 1; i >= 0; i-- { // unsorted on purpose
		many = append(many, gateway("apps", fmt.Sprintf("gw-%03d", i)))
	}
	// 63 + 253 characters, with the prefix, are more than a condition type may have.
	longNS, longName := strings.Repeat("n", 63), strings.Repeat("a", 253)

	tests := map[string]struct {
		observed Observed
		want     map[string]brief // by type; every condition
	}{
		"no Gateway API": {
			observed: Observed{
				GatewayAPI: GatewayAPI{Message: "CustomResourceDefinition gateways.gateway.networking.k8s.io is not installed"},
				Gateways:   []*gatewayv1.Gateway{gateway("apps", "web")}, // ignored
				Labels:     labels,
			},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI:    {metav1.ConditionFalse, "CRDNotInstalled", "CustomResourceDefinition gateways.gateway.networking.k8s.io is not installed"},
				trafficv1alpha1.ConditionClusterLabels: {metav1.ConditionTrue, "Reported", labelsMessage},
			},
		},
		"installed, no Gateways": {
			observed: Observed{GatewayAPI: installed, Labels: labels},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI:       {metav1.ConditionTrue, "Installed", "Gateway API v1 is installed; reporting 0 Gateways"},
				trafficv1alpha1.ConditionClusterLabels:    {metav1.ConditionTrue, "Reported", labelsMessage},
				trafficv1alpha1.ConditionGatewayAddresses: {metav1.ConditionTrue, "Reported", ""},
			},
		},
		"installed, Gateways selected by label": {
			observed: Observed{
				GatewayAPI: installed, Labels: labels, Selector: "team=edge",
				Gateways: []*gatewayv1.Gateway{
					gateway("b", "web", programmed(metav1.ConditionTrue, "Programmed", 2), addresses("10.0.0.2"), routed),
					gateway("a", "web", programmed(metav1.ConditionFalse, "Invalid", 2)),
				},
			},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI:              {metav1.ConditionTrue, "Installed", "Gateway API v1 is installed; reporting 2 Gateways labelled team=edge"},
				trafficv1alpha1.ConditionClusterLabels:           {metav1.ConditionTrue, "Reported", labelsMessage},
				trafficv1alpha1.GatewayConditionType("a", "web"): {metav1.ConditionFalse, "NotProgrammed", "Programmed is False (Invalid). No addresses"},
				trafficv1alpha1.GatewayConditionType("b", "web"): {metav1.ConditionTrue, "Programmed", "Addresses: 10.0.0.2"},
				trafficv1alpha1.ConditionGatewayAddresses:        {metav1.ConditionTrue, "Reported", "b/web=10.0.0.2"},
			},
		},
		"installed, one Gateway": {
			observed: Observed{GatewayAPI: installed, Labels: labels, Gateways: []*gatewayv1.Gateway{gateway("a", "web")}},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI:              {metav1.ConditionTrue, "Installed", "Gateway API v1 is installed; reporting 1 Gateway"},
				trafficv1alpha1.ConditionClusterLabels:           {metav1.ConditionTrue, "Reported", labelsMessage},
				trafficv1alpha1.GatewayConditionType("a", "web"): {metav1.ConditionFalse, "Pending", "No Programmed condition yet. No addresses"},
				trafficv1alpha1.ConditionGatewayAddresses:        {metav1.ConditionTrue, "Reported", ""},
			},
		},
		"addresses of every reported Gateway with a route, programmed or not, of the types DNS knows": {
			observed: Observed{GatewayAPI: installed, Labels: labels, Gateways: []*gatewayv1.Gateway{
				gateway("a", "web", addresses("10.0.0.1"), routed),
				gateway("b", "web", programmed(metav1.ConditionTrue, "Programmed", 2), addresses("FD00::1", "lb.example.com"), namedAddress("internal"), routed),
				gateway("c", "web", programmed(metav1.ConditionTrue, "Programmed", 2), addresses("10.0.0.3")),
			}},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI:              {metav1.ConditionTrue, "Installed", "Gateway API v1 is installed; reporting 3 Gateways"},
				trafficv1alpha1.ConditionClusterLabels:           {metav1.ConditionTrue, "Reported", labelsMessage},
				trafficv1alpha1.GatewayConditionType("c", "web"): {metav1.ConditionTrue, "Programmed", "Addresses: 10.0.0.3"},
				trafficv1alpha1.GatewayConditionType("a", "web"): {metav1.ConditionFalse, "Pending", "No Programmed condition yet. Addresses: 10.0.0.1"},
				trafficv1alpha1.GatewayConditionType("b", "web"): {metav1.ConditionTrue, "Programmed", "Addresses: FD00::1, lb.example.com, internal"},
				trafficv1alpha1.ConditionGatewayAddresses:        {metav1.ConditionTrue, "Reported", "a/web=10.0.0.1;b/web=fd00::1,lb.example.com"},
			},
		},
		"a name too long for a condition type": {
			observed: Observed{GatewayAPI: installed, Labels: labels, Gateways: []*gatewayv1.Gateway{gateway(longNS, longName), gateway("apps", "web")}},
			want: map[string]brief{
				trafficv1alpha1.ConditionGatewayAPI: {metav1.ConditionTrue, "Installed",
					"Gateway API v1 is installed; reporting 1 Gateway; not reported, as their namespace and name are too long for a condition type: " + longNS + "/" + longName},
				trafficv1alpha1.ConditionClusterLabels:              {metav1.ConditionTrue, "Reported", labelsMessage},
				trafficv1alpha1.GatewayConditionType("apps", "web"): {metav1.ConditionFalse, "Pending", "No Programmed condition yet. No addresses"},
				trafficv1alpha1.ConditionGatewayAddresses:           {metav1.ConditionTrue, "Reported", ""},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Conditions(tc.observed)
			assertSortedByType(t, got)
			gotBrief := map[string]brief{}
			for _, c := range got {
				gotBrief[c.Type] = brief{c.Status, c.Reason, c.Message}
			}
			if !reflect.DeepEqual(gotBrief, tc.want) {
				t.Errorf("got  %+v\nwant %+v", gotBrief, tc.want)
			}
		})
	}

	t.Run("at most MaxGateways, the first by namespace/name", func(t *testing.T) {
		got := Conditions(Observed{GatewayAPI: installed, Labels: labels, Gateways: many})
		if len(got) != MaxGateways+3 {
			t.Fatalf("got %d conditions, want %d", len(got), MaxGateways+3)
		}
		assertSortedByType(t, got)
		for i := range MaxGateways {
			if meta.FindStatusCondition(got, trafficv1alpha1.GatewayConditionType("apps", fmt.Sprintf("gw-%03d", i))) == nil {
				t.Errorf("Gateway gw-%03d is not reported", i)
			}
		}
		api := meta.FindStatusCondition(got, trafficv1alpha1.ConditionGatewayAPI)
		if want := "Gateway API v1 is installed; 66 Gateways, reporting the first 64 by namespace/name"; api.Message != want {
			t.Errorf("GatewayAPI message %q, want %q", api.Message, want)
		}
	})

	t.Run("input not modified", func(t *testing.T) {
		gws := []*gatewayv1.Gateway{gateway("b", "x"), gateway("a", "x")}
		Conditions(Observed{GatewayAPI: installed, Labels: labels, Gateways: gws})
		if gws[0].Namespace != "b" {
			t.Error("Conditions reordered its input")
		}
	})
}

func assertSortedByType(t *testing.T, conds []metav1.Condition) {
	t.Helper()
	for i := 1; i < len(conds); i++ {
		if conds[i-1].Type >= conds[i].Type {
			t.Errorf("conditions not sorted by type: %q before %q", conds[i-1].Type, conds[i].Type)
		}
	}
}

func TestMerge(t *testing.T) {
	before := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	cond := func(condType string, status metav1.ConditionStatus, reason, message string, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message, LastTransitionTime: at}
	}
	available := metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "LeaseUpdated", Message: "lease is fresh", ObservedGeneration: 3, LastTransitionTime: before}
	other := cond("example.com/Other", metav1.ConditionFalse, "Whatever", "not ours", before)
	gwA := trafficv1alpha1.GatewayConditionType("apps", "a")
	gwB := trafficv1alpha1.GatewayConditionType("apps", "b")
	api := trafficv1alpha1.ConditionGatewayAPI
	labels := trafficv1alpha1.ConditionClusterLabels

	tests := map[string]struct {
		existing []metav1.Condition
		desired  []metav1.Condition
		want     []metav1.Condition
	}{
		"first report: foreign conditions first and untouched, ours appended": {
			existing: []metav1.Condition{available, other},
			desired: []metav1.Condition{
				cond(labels, metav1.ConditionTrue, "Reported", "cluster_name=c1", metav1.Time{}),
				cond(api, metav1.ConditionTrue, "Installed", "m", metav1.Time{}),
			},
			want: []metav1.Condition{available, other,
				cond(labels, metav1.ConditionTrue, "Reported", "cluster_name=c1", now),
				cond(api, metav1.ConditionTrue, "Installed", "m", now),
			},
		},
		"nothing changed": {
			existing: []metav1.Condition{available, cond(api, metav1.ConditionTrue, "Installed", "m", before), cond(gwA, metav1.ConditionTrue, "Programmed", "No addresses", before)},
			desired:  []metav1.Condition{cond(api, metav1.ConditionTrue, "Installed", "m", metav1.Time{}), cond(gwA, metav1.ConditionTrue, "Programmed", "No addresses", metav1.Time{})},
			want:     []metav1.Condition{available, cond(api, metav1.ConditionTrue, "Installed", "m", before), cond(gwA, metav1.ConditionTrue, "Programmed", "No addresses", before)},
		},
		"message changes, status does not: the transition time stays": {
			existing: []metav1.Condition{cond(gwA, metav1.ConditionTrue, "Programmed", "No addresses", before), available},
			desired:  []metav1.Condition{cond(gwA, metav1.ConditionTrue, "Programmed", "Addresses: 10.0.0.1", metav1.Time{})},
			want:     []metav1.Condition{cond(gwA, metav1.ConditionTrue, "Programmed", "Addresses: 10.0.0.1", before), available},
		},
		"status changes: the transition time is now": {
			existing: []metav1.Condition{cond(gwA, metav1.ConditionTrue, "Programmed", "No addresses", before), available},
			desired:  []metav1.Condition{cond(gwA, metav1.ConditionFalse, "NotProgrammed", "m", metav1.Time{})},
			want:     []metav1.Condition{cond(gwA, metav1.ConditionFalse, "NotProgrammed", "m", now), available},
		},
		"a Gateway that is gone loses its condition, foreign ones stay": {
			existing: []metav1.Condition{cond(gwA, metav1.ConditionTrue, "Programmed", "m", before), other, cond(gwB, metav1.ConditionTrue, "Programmed", "m", before), available},
			desired:  []metav1.Condition{cond(gwB, metav1.ConditionTrue, "Programmed", "m", metav1.Time{})},
			want:     []metav1.Condition{other, cond(gwB, metav1.ConditionTrue, "Programmed", "m", before), available},
		},
		"the API goes away: every Gateway condition goes": {
			existing: []metav1.Condition{cond(api, metav1.ConditionTrue, "Installed", "m", before), cond(gwA, metav1.ConditionTrue, "Programmed", "m", before), available},
			desired:  []metav1.Condition{cond(api, metav1.ConditionFalse, "CRDNotInstalled", "gone", metav1.Time{})},
			want:     []metav1.Condition{cond(api, metav1.ConditionFalse, "CRDNotInstalled", "gone", now), available},
		},
		"a duplicate of our type is dropped": {
			existing: []metav1.Condition{cond(api, metav1.ConditionTrue, "Installed", "m", before), cond(api, metav1.ConditionFalse, "CRDNotInstalled", "m", before)},
			desired:  []metav1.Condition{cond(api, metav1.ConditionTrue, "Installed", "m", metav1.Time{})},
			want:     []metav1.Condition{cond(api, metav1.ConditionTrue, "Installed", "m", before)},
		},
		"no existing conditions": {
			desired: []metav1.Condition{cond(api, metav1.ConditionFalse, "CRDNotInstalled", "m", metav1.Time{})},
			want:    []metav1.Condition{cond(api, metav1.ConditionFalse, "CRDNotInstalled", "m", now)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			existingCopy := slices.Clone(tc.existing)
			got := Merge(tc.existing, tc.desired, now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.existing, existingCopy) {
				t.Errorf("Merge modified its input: %+v", tc.existing)
			}
			// Merging again changes nothing, even later: a second sync writes nothing.
			later := metav1.NewTime(now.Add(time.Hour))
			if again := Merge(got, tc.desired, later); !reflect.DeepEqual(again, got) {
				t.Errorf("merging again changed the conditions:\n%+v\n%+v", again, got)
			}
		})
	}
}

func TestIsAgentCondition(t *testing.T) {
	tests := map[string]bool{
		trafficv1alpha1.ConditionGatewayAPI:              true,
		trafficv1alpha1.ConditionClusterLabels:           true,
		trafficv1alpha1.ConditionGatewayAddresses:        true,
		trafficv1alpha1.GatewayConditionType("ns", "gw"): true,
		"Available": false,
		"traffic.open-cluster-management.io/Other":   false,
		"example.com/gateway.traffic":                false,
		"gateway.traffic.open-cluster-management.io": false,
	}
	for condType, want := range tests {
		if got := IsAgentCondition(condType); got != want {
			t.Errorf("IsAgentCondition(%q) = %v, want %v", condType, got, want)
		}
	}
}
