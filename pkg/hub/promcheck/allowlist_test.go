// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func TestParseAllowlistRefuses(t *testing.T) {
	tests := map[string]string{ // entry: a part of the error
		"":                          "empty",
		"ftp://prom.example/":       "the scheme must be http or https",
		"https://u:p@prom.example/": "only a scheme, a host, a port and a path",
		"https://prom.example/?a=b": "only a scheme, a host, a port and a path",
		"https:///path":             "the URL has no host",
		"prom.example:9090":         "give a URL prefix such as https://prometheus.example:9090/",
		"10.0.0.0/33":               "neither a URL",
		"fe80::1%eth0":              "zone",
		"fe80::1%eth0/64":           "a CIDR with a zone is not supported",
		"::ffff:10.0.0.0/80":        "an IPv4-mapped CIDR must be /96 or longer",
		"*.":                        "not a host name",
		"*":                         "not a host name",
		"a..b":                      "not a host name",
		"bad host":                  "not a host name",
		"*.*.example":               "not a host name",
		"10.0.0.256":                "neither an IP address nor a host name",
		"*.0.1":                     "neither an IP address nor a host name",
	}
	for entry, want := range tests {
		t.Run(entry, func(t *testing.T) {
			a, err := ParseAllowlist([]string{"10.0.0.0/8", entry})
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `allowlist entry "`+entry+`"`) {
				t.Errorf("want an error naming the entry and containing %q, got %v (%v)", want, err, a)
			}
		})
	}
}

// outcome is what the allowlist of entries does with url: "allowed", "refused", or
// "at dial" (allowed as far as the CIDRs go, checked at each connection).
func outcome(t *testing.T, entries []string, url string) string {
	t.Helper()
	var a *Allowlist
	if entries != nil {
		var err error
		if a, err = ParseAllowlist(entries); err != nil {
			t.Fatal(err)
		}
	}
	control, err := a.check(url)
	var notAllowed *NotAllowedError
	switch {
	case errors.As(err, &notAllowed):
		return "refused"
	case err != nil:
		t.Fatalf("%s: %v", url, err)
	case control != nil:
		return "at dial"
	}
	return "allowed"
}

func TestAllowlistMatches(t *testing.T) {
	prefixes := []string{"https://prom.example.com/", "http://thanos.monitoring.svc:9090/prometheus", "http://mimir.example/prom/"}
	tests := []struct {
		entries []string
		url     string
		want    string
	}{
		{nil, "http://anything:1234/x", "allowed"},
		{[]string{}, "http://anything:1234/x", "allowed"},

		{prefixes, "https://prom.example.com", "allowed"},
		{prefixes, "https://prom.example.com:443/api", "allowed"},
		{prefixes, "https://PROM.Example.com/", "allowed"},
		{prefixes, "https://prom.example.com:8443/", "refused"},
		{prefixes, "http://prom.example.com/", "refused"},
		{prefixes, "https://prom.example.com.evil/", "refused"},
		{prefixes, "http://thanos.monitoring.svc:9090/prometheus", "allowed"},
		{prefixes, "http://thanos.monitoring.svc:9090/prometheus/", "allowed"},
		{prefixes, "http://thanos.monitoring.svc:9090/prometheus/api", "allowed"},
		{prefixes, "http://thanos.monitoring.svc:9090/prometheus2", "refused"},
		{prefixes, "http://thanos.monitoring.svc:9090/prom", "refused"},
		{prefixes, "http://thanos.monitoring.svc/prometheus", "refused"},
		{prefixes, "http://thanos.monitoring.svc:9091/prometheus", "refused"},
		{prefixes, "http://mimir.example/prom", "allowed"},
		{prefixes, "http://mimir.example:80/prom/x", "allowed"},
		{prefixes, "http://mimir.example/prometheus", "refused"},

		{[]string{"thanos-querier.openshift-monitoring.svc"}, "https://thanos-querier.openshift-monitoring.svc:9091", "allowed"},
		{[]string{"thanos-querier.openshift-monitoring.svc"}, "http://THANOS-QUERIER.openshift-monitoring.svc./x", "allowed"},
		{[]string{"Thanos-Querier.OpenShift-Monitoring.svc"}, "http://thanos-querier.openshift-monitoring.svc", "allowed"},
		{[]string{"thanos-querier.openshift-monitoring.svc"}, "http://querier.openshift-monitoring.svc", "refused"},

		{[]string{"*.monitoring.svc"}, "http://thanos.monitoring.svc:9090", "allowed"},
		{[]string{"*.monitoring.svc"}, "http://a.b.Monitoring.svc", "allowed"},
		{[]string{"*.monitoring.svc"}, "http://monitoring.svc", "refused"},
		{[]string{"*.monitoring.svc"}, "http://evilmonitoring.svc", "refused"},
		{[]string{"*.monitoring.svc"}, "http://10.0.0.1", "refused"},

		{[]string{"10.0.0.0/8"}, "http://10.1.2.3:9090", "allowed"},
		{[]string{"10.0.0.0/8"}, "http://11.0.0.1", "refused"},
		{[]string{"10.0.0.0/8"}, "http://[::ffff:10.0.0.1]:9090", "allowed"},
		{[]string{"::ffff:10.0.0.0/104"}, "http://10.1.2.3:9090", "allowed"},
		{[]string{"::ffff:10.0.0.0/104"}, "http://11.0.0.1", "refused"},
		{[]string{"10.0.0.0/8"}, "http://prom.example", "at dial"},
		{[]string{"10.0.0.0/8", "prom.example"}, "http://prom.example", "allowed"},
		{[]string{"fd00::/8"}, "http://[fd00::1]:9090", "allowed"},
		{[]string{"fd00::/8"}, "http://[FD12:3456::1]", "allowed"},
		{[]string{"fd00::/8"}, "http://[fe80::1]", "refused"},
		{[]string{"192.168.1.5"}, "http://192.168.1.5:9090", "allowed"},
		{[]string{"192.168.1.5"}, "http://192.168.1.6", "refused"},
		{[]string{"::1"}, "http://[::1]:9090", "allowed"},
		{[]string{"http://10.0.0.5:9090/"}, "http://10.0.0.5:9090/api", "allowed"},
		{[]string{"http://10.0.0.5:9090/"}, "http://10.0.0.6:9090/api", "refused"},
		{[]string{"prom.example"}, "http://other.example", "refused"},
	}
	for _, tc := range tests {
		if got := outcome(t, tc.entries, tc.url); got != tc.want {
			t.Errorf("%q with %q: %s, want %s", tc.entries, tc.url, got, tc.want)
		}
	}
}

// The dial-time check reads the address of each connection.
func TestAllowlistControl(t *testing.T) {
	a, err := ParseAllowlist([]string{"10.0.0.0/8", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	control, err := a.check("https://prom.example:9091")
	if err != nil || control == nil {
		t.Fatalf("want a dial-time check, got %v", err)
	}
	for address, allowed := range map[string]bool{
		"10.1.2.3:9091": true, "[fd00::5]:9091": true, "[::ffff:10.0.0.1]:9091": true,
		"127.0.0.1:9091": false, "[::1]:9091": false, "[fe80::1%eth0]:9091": false, "nonsense": false,
	} {
		err := control("tcp", address, nil)
		var notAllowed *NotAllowedError
		if allowed != (err == nil) || !allowed && (!errors.As(err, &notAllowed) || !notAllowed.Dialed) {
			t.Errorf("address %s: %v, want allowed %t", address, err, allowed)
		}
	}
}

func TestNewClientRefusesAURLNotAllowed(t *testing.T) {
	a, err := ParseAllowlist([]string{"https://prom.example.com/", "*.monitoring.svc"})
	if err != nil {
		t.Fatal(err)
	}
	// A Config not built by ConfigFromSecret may hold user information and a query:
	// neither is shown.
	cfg := Config{URL: "https://user:pa55w0rd-value@evil.example:9090?token=s3cr3t", Allowlist: a}
	_, err = NewClient(cfg)
	const want = "url https://evil.example:9090 is not in the manager's Prometheus allowlist (allowed: https://prom.example.com/, *.monitoring.svc); ask the hub admin, or use an allowed Prometheus"
	var notAllowed *NotAllowedError
	if !errors.As(err, &notAllowed) || err.Error() != want {
		t.Errorf("want %q, got %v", want, err)
	}
	if got := ConfigErrorReason(err); got != v1alpha1.ReasonURLNotAllowed {
		t.Errorf("ConfigErrorReason: %s, want %s", got, v1alpha1.ReasonURLNotAllowed)
	}
	if got := ConfigErrorReason(keyError(KeyURL, "missing")); got != v1alpha1.ReasonSecretInvalid {
		t.Errorf("ConfigErrorReason of a Secret mistake: %s, want %s", got, v1alpha1.ReasonSecretInvalid)
	}

	// An IP address is checked when the client is built.
	cidrs, err := ParseAllowlist([]string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(Config{URL: "http://127.0.0.1:9090", Allowlist: cidrs}); ConfigErrorReason(err) != v1alpha1.ReasonURLNotAllowed {
		t.Errorf("an IP address outside the CIDRs: %v, want it refused", err)
	}
}

// A host name allowed only through the CIDRs is checked at each connection, against
// the address it resolved to; with CIDR entries, no proxy is used.
func TestRunRefusesAnAddressNotAllowed(t *testing.T) {
	prom := newFakePrometheus(t, false, scalar("0.01"))
	byName := strings.Replace(prom.URL, "127.0.0.1", "localhost", 1)

	tests := map[string]struct {
		entries []string
		want    Check
	}{
		"outside the CIDRs": {
			entries: []string{"10.0.0.0/8"},
			want: Check{Result: v1alpha1.EvaluationError, Reason: v1alpha1.ReasonURLNotAllowed,
				Message: "url " + byName + " resolves to an address that is not in the manager's Prometheus allowlist (allowed: 10.0.0.0/8); ask the hub admin"},
		},
		"inside the CIDRs": {
			entries: []string{"127.0.0.0/8", "::1"},
			want:    Check{Result: v1alpha1.EvaluationPass, Value: "0.01", Reason: v1alpha1.ReasonQuerySucceeded},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, err := NewClient(configAllowing(t, byName, tc.entries...))
			if err != nil {
				t.Fatal(err)
			}
			before := len(prom.seen())
			got := Run(context.Background(), q, querySpec("<= 0.05"), testData(), evalTime)
			tc.want.Query = got.Query
			sameCheck(t, got, tc.want)
			if reached := len(prom.seen()) > before; reached != (tc.want.Result == v1alpha1.EvaluationPass) {
				t.Errorf("the query reached Prometheus: %t", reached)
			}
		})
	}

	// The environment's proxy is kept only without CIDR entries.
	for entries, keepsProxy := range map[string]bool{"": true, "localhost": true, "localhost 10.0.0.0/8": false, "10.0.0.0/8": false} {
		transport, err := newTransport(configAllowing(t, byName, strings.Fields(entries)...))
		if err != nil {
			t.Fatal(err)
		}
		if (transport.Proxy != nil) != keepsProxy {
			t.Errorf("allowlist %q: proxy %t, want %t", entries, transport.Proxy != nil, keepsProxy)
		}
	}
}

// configAllowing is the Config of a Secret with url, under an allowlist of entries.
func configAllowing(t *testing.T, url string, entries ...string) Config {
	t.Helper()
	a, err := ParseAllowlist(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg := configFor(t, KeyURL, url)
	cfg.Allowlist = a
	return cfg
}
