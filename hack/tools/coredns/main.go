// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command coredns is CoreDNS, built with only the plugins the test bed's DNS uses:
// etcd (the zones, which external-dns's engine writes), bind (the address it listens
// on), log and errors. CoreDNS's own main imports every plugin (core/plugin), whose
// cloud SDKs make the build several times larger and slower. A plugin is compiled in
// by importing its package, which registers it with Caddy; dnsserver.Directives orders
// the plugins of a server block and names the only ones a Corefile may use, so the
// reduced build sets it to the plugins it imports, in CoreDNS's order.
package main

import (
	"fmt"
	"os"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/etcd"
	_ "github.com/coredns/coredns/plugin/log"
)

// directives are the plugins compiled in, in the order of CoreDNS's standard
// Directives (core/dnsserver/zdirectives.go): bind sets up the listener, errors and
// log wrap etcd, which answers.
var directives = []string{"bind", "errors", "log", "etcd"}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	coremain.Run()
}
