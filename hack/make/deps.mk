# deps.mk: the Debian packages the tests and the demo need (included by the Makefile).
#
# make deps installs them all, as root with apt-get. Each piece below installs one
# need and only when it is missing, so a machine that has them all runs no apt-get and
# needs no root. The targets that need a piece still reach it themselves: make image
# and make image-upgrade-from the CA bundle, make chromium (and so make
# test-integration) Chromium, make testbed-nodes (and so make test-e2e) the nodes'
# packages.
#
# Not here: make itself, which .ci/run installs before it can run make; and podman,
# which hack/image.sh also installs when it finds no container tool (it is one of the
# nodes' packages).

# The dashboard's browser test drives Debian's Chromium.
CHROMIUM ?= /usr/bin/chromium

.PHONY: deps-ca-certificates deps-chromium deps-nodes deps-resolvers deps-jdk

# ca-certificates: the CA bundle the image carries (CA_BUNDLE), as root.
deps-ca-certificates: $(CA_BUNDLE)

$(CA_BUNDLE):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo ">> installing ca-certificates (Debian package) for the image"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 ca-certificates >/dev/null; \
	else \
		echo "make image needs the CA certificates at $(CA_BUNDLE): install ca-certificates ('sudo apt-get install ca-certificates'), or set CA_BUNDLE"; exit 1; \
	fi

# chromium and fonts-liberation: the dashboard's browser test (CHROMIUM), as root (CI
# and these machines) or through sudo.
deps-chromium:
	@test -x $(CHROMIUM) || { echo ">> installing chromium from Debian's packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null; }

# The packages the test bed's nodes run, which hack/node-packages.sh lists: containerd,
# runc, the CNI plugins, iptables, util-linux, iproute2 and podman. Without root, it
# names what is missing and the apt-get line, and fails.
deps-nodes:
	@hack/node-packages.sh

# The caching resolvers the bed runs in front of its DNS (testbed.StartResolver):
# Unbound and dnsmasq, two of the nodes' packages, for make test-integration, and for
# the strategies benchmark (make test-e2e, make bench).
deps-resolvers:
	@hack/node-packages.sh unbound dnsmasq-base

# OpenJDK 17, whose java runs the JVM clients (test/clients, JVMFleet) from their
# source file, which needs the JDK's compiler: for make test-unit and the strategies
# benchmark. As root (CI and these machines) or through sudo.
deps-jdk:
	@command -v javac >/dev/null || { echo ">> installing openjdk-17-jdk-headless from Debian's packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 openjdk-17-jdk-headless >/dev/null; }

##@ Debian packages (hack/make/deps.mk)

.PHONY: chromium
chromium: deps-chromium ## Install Debian's chromium for the dashboard's browser test, when it is missing.
