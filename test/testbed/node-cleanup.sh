#!/bin/sh
# Copyright Contributors to the Open Cluster Management project
# SPDX-License-Identifier: Apache-2.0
#
# node-cleanup.sh NAME DIR SCOPE removes everything that the nodes of the test bed NAME
# (tmb<n>, SCOPE "bed") or the one node NAME (tmb<n>-<cluster>, SCOPE "node") left on
# the host, whether the bed stopped or its test binary died: it kills
# every process in the bed's cgroups and network namespaces (containerd shims and
# containers outlive the kubelet and containerd), unmounts what is mounted under DIR
# (the nodes' pod volumes, snapshots and pod network namespaces), removes DIR, the
# cgroups and the network namespaces, and deletes the bed's bridge. It is safe to run
# more than once. The test bed runs it when it stops, from a guard process when the
# test binary dies, and at the start of a bed for a dead bed's leftovers.
set -u
name=$1
dir=$2
scope=$3
# A bed's nodes are NAME-<cluster>; a node is NAME itself.
pattern="$name-*"
[ "$scope" = node ] && pattern=$name

# The bed's cgroups: one per node, tmb<n>-<cluster>, under the test's own cgroup of each
# hierarchy.
cgroups() {
	find /sys/fs/cgroup -maxdepth 8 -type d -name "$pattern" -prune 2>/dev/null
}

netns() {
	ip netns list 2>/dev/null | awk -v n="$name" -v s="$scope" '(s == "node" && $1 == n) || (s == "bed" && index($1, n "-") == 1) { print $1 }'
}

pids() {
	for c in $(cgroups); do
		find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null
	done
	for ns in $(netns); do
		ip netns pids "$ns" 2>/dev/null
	done
}

# SIGKILL until nothing is left, for at most about ten seconds (a process in the middle
# of exiting stays listed for a moment).
i=0
while [ $i -lt 50 ]; do
	left=$(pids | sort -u)
	[ -z "$left" ] && break
	# shellcheck disable=SC2086
	kill -9 $left 2>/dev/null
	sleep 0.2
	i=$((i + 1))
done

# What containerd and the CNI plugins keep outside DIR, per pod sandbox: the sandbox's
# shim socket, /run/containerd/s/<sha256 of "<containerd socket>/k8s.io/<id>">, which
# a killed shim leaves, and the CNI results cache, /var/lib/cni/results/<network>-<id>-
# <interface>, which only a CNI DEL removes and a sandbox that is killed never gets.
for sandboxes in "$dir"/containerd/state/io.containerd.grpc.v1.cri/sandboxes "$dir"/*/containerd/state/io.containerd.grpc.v1.cri/sandboxes; do
	[ -n "$dir" ] && [ -d "$sandboxes" ] || continue
	node=${sandboxes%/containerd/state/io.containerd.grpc.v1.cri/sandboxes}
	for sandbox in "$sandboxes"/*; do
		[ -d "$sandbox" ] || continue
		id=${sandbox##*/}
		rm -f /var/lib/cni/results/*-"$id"-*
		hash=$(printf '%s' "$node/containerd.sock/k8s.io/$id" | sha256sum | cut -d' ' -f1)
		rm -f "/run/containerd/s/$hash"
	done
done

# Deepest mount first.
if [ -n "$dir" ] && [ -d "$dir" ]; then
	awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	rm -rf --one-file-system "$dir"
fi

for c in $(cgroups); do
	find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
done

# The host ends of the bed's veths, tmb<n>v<k>, before the namespaces: deleting one end
# deletes the pair at once, while a deleted namespace takes its end of the pair only
# when the kernel destroys the namespace, later, and never while anything else (a mount
# of it in another mount namespace) holds it: a later bed of the same number would
# find the name taken.
if [ "$scope" = bed ]; then
	for link in /sys/class/net/"$name"v*; do
		link=${link##*/}
		case ${link#"$name"v} in
		'' | *[!0-9]*) continue ;;
		esac
		ip link delete "$link" 2>/dev/null
	done
fi

for ns in $(netns); do
	ip netns delete "$ns" 2>/dev/null
done

[ "$scope" = bed ] && ip link delete "$name" 2>/dev/null

# ip netns add bind-mounts /run/netns onto itself the first time; once no namespace is
# left in it, that mount is ours to take back (the next ip netns add makes it again).
if [ "$scope" = bed ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ] &&
	awk '$5 == "/run/netns" { found = 1 } END { exit !found }' /proc/self/mountinfo; then
	umount /run/netns 2>/dev/null
fi
exit 0
