#!/usr/bin/env bash
# Copyright Contributors to the Open Cluster Management project
# SPDX-License-Identifier: Apache-2.0
#
# traefik-modfile.sh DIR prepares DIR for a build of the test bed's Traefik without
# lego's DNS-challenge providers: a copy of the lego module that hack/tools/traefik
# pins, its providers/dns file replaced by hack/tools/traefik/legodns (our own stub,
# which refuses every provider by name), and a go.mod (DIR/go.mod, for go build
# -modfile) that is hack/tools/traefik's plus a replace of lego by that copy.
#
# Why: lego's generated providers/dns file imports all of its 190 or so providers and their
# cloud SDKs, about 40% of the Go files a Traefik build compiles (8,200 files instead
# of 13,900). The test bed's Traefik serves plain HTTP routes and never asks ACME for a
# certificate. Nothing of lego is kept in the repository: the copy is made at build time
# from the module cache, next to the binary's cache.
set -euo pipefail

work=${1:?usage: traefik-modfile.sh DIR}
cd "$(dirname "$0")/tools/traefik"

lego=$(go list -m -f '{{.Dir}}' github.com/go-acme/lego/v4)
if [ -z "$lego" ] || [ ! -f "$lego/providers/dns/zz_gen_dns_providers.go" ]; then
  echo "traefik-modfile.sh: lego's providers/dns/zz_gen_dns_providers.go is not in '$lego' (run go mod download in hack/tools/traefik)" >&2
  exit 1
fi

rm -rf "$work"
mkdir -p "$work"
cp -R "$lego" "$work/lego"
chmod -R u+w "$work/lego"
cp legodns/zz_gen_dns_providers.go "$work/lego/providers/dns/zz_gen_dns_providers.go"
cp go.mod "$work/go.mod"
cp go.sum "$work/go.sum"
echo "replace github.com/go-acme/lego/v4 => $work/lego" >>"$work/go.mod"
