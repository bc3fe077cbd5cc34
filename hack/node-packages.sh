#!/usr/bin/env bash
# Copyright Contributors to the Open Cluster Management project
# SPDX-License-Identifier: Apache-2.0
#
# node-packages.sh makes sure the Debian packages that the test bed's nodes run are
# installed: containerd, runc, the CNI plugins, iptables and iproute2, podman,
# which builds the images the nodes run, and skopeo, which pushes an image's OCI
# archive to the bed's registry as users push a release's image to theirs; and the
# caching resolvers users have in front of DNS, Unbound and dnsmasq, which the bed runs
# in front of its CoreDNS (testbed.StartResolver). As root it
# installs what is missing with apt-get; otherwise it names what is missing and how to
# get it, and fails.
set -euo pipefail

# Each line: a file the nodes use, and the Debian package that installs it.
required=(
	"/usr/bin/containerd containerd"
	"/usr/bin/ctr containerd"
	"/usr/sbin/runc runc"
	"/usr/lib/cni/bridge containernetworking-plugins"
	"/usr/lib/cni/host-local containernetworking-plugins"
	"/usr/lib/cni/portmap containernetworking-plugins"
	"/usr/lib/cni/loopback containernetworking-plugins"
	"/usr/sbin/iptables iptables"
	"/usr/bin/nsenter util-linux"
	"/usr/bin/podman podman"
	"/usr/bin/skopeo skopeo"
	"/usr/sbin/unbound unbound"
	"/usr/sbin/dnsmasq dnsmasq-base"
)

# With arguments, only those packages: hack/node-packages.sh unbound dnsmasq-base.
only=" $* "
missing=()
for line in "${required[@]}"; do
	read -r file pkg <<<"$line"
	if [[ $# -gt 0 && "$only" != *" $pkg "* ]]; then
		continue
	fi
	if [[ ! -x "$file" && " ${missing[*]} " != *" $pkg "* ]]; then
		missing+=("$pkg")
	fi
done
if [[ ($# -eq 0 || "$only" == *" iproute2 "*) && ! -x /usr/sbin/ip && ! -x /usr/bin/ip && ! -x /sbin/ip ]]; then
	missing+=(iproute2)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "The test bed's nodes need the Debian packages: ${missing[*]}" >&2
	echo "Install them as root: apt-get update && apt-get install -y ${missing[*]}" >&2
	echo "(the nodes themselves also run as root: network namespaces, cgroups and mounts)" >&2
	exit 1
fi

echo ">> installing the Debian packages of the test bed's nodes: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"

# Debian starts Unbound as the machine's resolver when it installs it; the bed runs
# its own, on ports of their own, and leaves the machine's resolver as it was.
if [[ " ${missing[*]} " == *" unbound "* && -d /run/systemd/system ]]; then
	systemctl disable --now unbound.service unbound-resolvconf.service 2>/dev/null || true
fi
