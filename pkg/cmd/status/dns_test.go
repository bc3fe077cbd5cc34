// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func TestDNSView(t *testing.T) {
	p := &trafficv1alpha1.TrafficMigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "ns"}}
	if v := buildDNS(p); v != nil {
		t.Errorf("without spec.dns: %+v, want nil", v)
	}
	p.Spec.DNS = &trafficv1alpha1.DNSPublishing{Hostnames: []trafficv1alpha1.Hostname{"gw.example.com"}}
	p.Status.DNS = &trafficv1alpha1.DNSStatus{EndpointName: "gw", PublishedClusters: []string{"c2"}}
	p.Status.Conditions = []metav1.Condition{{Type: trafficv1alpha1.ConditionDNSPublished, Status: metav1.ConditionTrue,
		Reason: trafficv1alpha1.ReasonDNSPublished, Message: "published"}}
	want := &DNSView{Hostnames: []string{"gw.example.com"}, TTL: "1m", Endpoint: "gw", PublishedClusters: []string{"c2"},
		Reason: "Published", Message: "published"}
	if v := buildDNS(p); !reflect.DeepEqual(v, want) {
		t.Errorf("buildDNS = %+v, want %+v", v, want)
	}
}

func TestDrainingForCell(t *testing.T) {
	cases := []struct {
		drainingFor, outOfDNS, want string
	}{
		{"", "", none},
		{"5m", "", "5m"},
		{"5m", "in DNS", "5m (in DNS)"},
		{"5m", "1m", "5m (out of DNS 1m)"},
	}
	for _, tc := range cases {
		if got := drainingForCell(ClusterView{DrainingFor: tc.drainingFor, OutOfDNS: tc.outOfDNS}); got != tc.want {
			t.Errorf("drainingForCell(%q, %q) = %q, want %q", tc.drainingFor, tc.outOfDNS, got, tc.want)
		}
	}
}
