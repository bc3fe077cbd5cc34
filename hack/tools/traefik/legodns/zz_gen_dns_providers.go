// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package dns stands in for lego's providers/dns in the test bed's Traefik
// (hack/traefik-modfile.sh puts it in place of lego's generated file). lego's file
// imports every one of its DNS-challenge providers and their cloud SDKs, about 40% of
// what a Traefik build compiles; the test bed's Traefik never asks ACME for a
// certificate, so it needs none of them.
package dns

import (
	"fmt"

	"github.com/go-acme/lego/v4/challenge"
)

// NewDNSChallengeProviderByName is the one function of the package that Traefik calls.
func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {
	return nil, fmt.Errorf("the test bed's Traefik is built without ACME DNS-challenge providers (asked for %q)", name)
}
