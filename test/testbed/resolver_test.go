// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"strings"
	"testing"
	"time"
)

func TestResolverOptions(t *testing.T) {
	for _, tc := range []struct {
		opts    ResolverOptions
		name    string
		invalid string
	}{
		{opts: ResolverOptions{Kind: Unbound}, name: "Unbound, defaults"},
		{opts: ResolverOptions{Kind: Unbound, MinTTL: time.Minute, ServeExpired: true}, name: "Unbound, cache-min-ttl 60, serve-expired"},
		{opts: ResolverOptions{Kind: Dnsmasq, MinTTL: time.Minute}, name: "dnsmasq, min-cache-ttl=60"},
		{opts: ResolverOptions{Kind: "bind"}, invalid: `resolver kind "bind"`},
		{opts: ResolverOptions{Kind: Unbound, MinTTL: 1500 * time.Millisecond}, invalid: "whole seconds"},
		{opts: ResolverOptions{Kind: Dnsmasq, MinTTL: 2 * time.Hour}, invalid: "at most an hour"},
		{opts: ResolverOptions{Kind: Dnsmasq, ServeExpired: true}, invalid: "ServeExpired is Unbound's"},
	} {
		err := tc.opts.validate()
		if tc.invalid != "" {
			if err == nil || !strings.Contains(err.Error(), tc.invalid) {
				t.Errorf("%+v: error %v, want one with %q", tc.opts, err, tc.invalid)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.opts, err)
		}
		if got := tc.opts.String(); got != tc.name {
			t.Errorf("%+v: named %q, want %q", tc.opts, got, tc.name)
		}
	}
}

// The resolvers' settings change their defaults only where the bed must and where the
// options say.
func TestResolverSettings(t *testing.T) {
	zones := []string{"a.example.", "b.example."}
	conf := unboundConfig("/bed/resolver-1", "127.0.0.1", 5300, "127.0.0.1", "5301", zones, ResolverOptions{Kind: Unbound})
	for _, want := range []string{"interface: 127.0.0.1\n", "port: 5300\n", "do-daemonize: no\n", "do-not-query-localhost: no\n",
		"forward-zone:\n\tname: \"a.example.\"\n\tforward-addr: 127.0.0.1@5301\n", "forward-zone:\n\tname: \"b.example.\"\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("Unbound's configuration lacks %q:\n%s", want, conf)
		}
	}
	for _, unwanted := range []string{"cache-min-ttl", "serve-expired"} {
		if strings.Contains(conf, unwanted) {
			t.Errorf("Unbound's configuration at its defaults sets %s:\n%s", unwanted, conf)
		}
	}
	conf = unboundConfig("/bed/resolver-1", "127.0.0.1", 5300, "127.0.0.1", "5301", zones, ResolverOptions{Kind: Unbound, MinTTL: time.Minute, ServeExpired: true})
	for _, want := range []string{"cache-min-ttl: 60\n", "serve-expired: yes\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("Unbound's configuration lacks %q:\n%s", want, conf)
		}
	}

	args := strings.Join(dnsmasqArgs("127.0.0.1", 5300, "127.0.0.1", "5301", zones, ResolverOptions{Kind: Dnsmasq, MinTTL: time.Minute}), " ")
	for _, want := range []string{"--port=5300", "--listen-address=127.0.0.1", "--no-resolv", "--server=/a.example/127.0.0.1#5301", "--server=/b.example/127.0.0.1#5301", "--min-cache-ttl=60"} {
		if !strings.Contains(args, want) {
			t.Errorf("dnsmasq's arguments lack %s: %s", want, args)
		}
	}
}
