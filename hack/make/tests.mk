# tests.mk: the tests' settings and the test bed's environment (included by the
# Makefile, after the files whose variables it exports).

INTEGRATION_TIMEOUT ?= 40m
# How many of the integration tests that call t.Parallel run at once. Most of their
# time is spent waiting for the manager's checks and drains, not computing, and go
# test's default (GOMAXPROCS, 2 on a CI machine of two cores) left a core idle half
# of the time. Measured on two cores (2026-12-06): 437 s at 2, 266 s at 4, 179 s at 8;
# 6 leaves some room for a slower machine.
INTEGRATION_PARALLEL ?= 6
E2E_TIMEOUT ?= 30m
# The end-to-end packages, which make test-e2e runs one at a time. test/lifecycle
# upgrades the chart from UPGRADE_FROM, installs by Placement and uninstalls.
# test/strategies is the strategies benchmark's small case (make bench runs it at
# full size).
E2E_PACKAGES ?= ./test/e2e/... ./test/lifecycle/... ./test/strategies/... ./test/demo/...
# The tests of the test bed's nodes themselves (pods, in-cluster access, cleanup),
# which start no OCM hub: make test-integration runs them beside the integration tests.
NODES_PACKAGES ?= ./test/nodes/...
# make demo passes DEMO_FLAGS to the demo (-short: the short form).
DEMO_FLAGS ?=

# The test bed finds its programs, images and inputs through these TESTBED_* settings
# (docs/development.md lists them), each set to what a target of this Makefile builds,
# downloads or installs. make testbed writes them all to one file, TESTBED_ENV (one
# NAME=value a line), which the test bed reads (test/testbed/env.go), so that 'go test'
# runs a test of the bed without make; one set in the environment wins, to use other
# builds.
TESTBED_ETCD := $(ETCD)
TESTBED_KUBE_APISERVER := $(KUBE_APISERVER)
TESTBED_PROMETHEUS := $(PROMETHEUS)
TESTBED_PROMTOOL := $(PROMTOOL)
TESTBED_OCM_PLACEMENT := $(OCM_PLACEMENT)
TESTBED_KUBE_CONTROLLER_MANAGER := $(KUBE_CONTROLLER_MANAGER)
TESTBED_OCM_REGISTRATION := $(OCM_REGISTRATION)
TESTBED_OCM_WORK := $(OCM_WORK)
TESTBED_OCM_ADDON := $(OCM_ADDON)
TESTBED_CLUSTERADM := $(CLUSTERADM)
TESTBED_HELM := $(HELM)
TESTBED_COREDNS := $(COREDNS)
TESTBED_EXTERNALDNS := $(EXTERNALDNS)
TESTBED_REGISTRY := $(REGISTRY)
TESTBED_KUBELET := $(KUBELET)
TESTBED_KUBE_PROXY := $(KUBE_PROXY)
TESTBED_KUBE_SCHEDULER := $(KUBE_SCHEDULER)
# The test image of the nodes' own test, which 'make testbed-node-images' builds into
# TESTBED_IMAGES_DIR/incluster.tar.
TESTBED_INCLUSTER_IMAGE := localhost/traffic-migration-incluster:test
# Traefik's image, which 'make traefik-image' builds into TESTBED_IMAGES_DIR/traefik.tar.
TESTBED_TRAEFIK_IMAGE := localhost/traffic-migration/traefik:$(TRAEFIK_VERSION)
# The spokes' metrics agents' image (the bed's Prometheus), which 'make
# prometheus-image' builds into TESTBED_IMAGES_DIR/prometheus.tar.
TESTBED_PROMETHEUS_IMAGE := localhost/traffic-migration/prometheus:$(PROMETHEUS_VERSION)
TESTBED_TRAFFIC_MIGRATION := $(abspath $(BIN_DIR))/traffic-migration
TESTBED_TRAFFIC_MIGRATION_AGENT := $(abspath $(BIN_DIR))/traffic-migration-agent
# The images of make image: OCI archives in TESTBED_IMAGES_DIR (traffic-migration.tar,
# pause.tar), and the references they carry.
TESTBED_IMAGES_DIR := $(IMAGES_DIR)
TESTBED_IMAGE := $(IMAGE)
TESTBED_PAUSE_IMAGE := $(PAUSE_IMAGE)
# The release the lifecycle test installs and upgrades to, as make release packages it
# (make test-release, in the Makefile): at the chart's appVersion, so that its image is
# IMAGE.
TEST_RELEASE_VERSION := $(APP_VERSION)
TESTBED_RELEASE_DIR := $(abspath $(BIN_DIR))/release/$(TEST_RELEASE_VERSION)
TESTBED_RELEASE_VERSION := $(TEST_RELEASE_VERSION)
TESTBED_RELEASE_IMAGE := $(IMAGE_REPOSITORY):$(TEST_RELEASE_VERSION)
# The release the lifecycle test upgrades from (make image-upgrade-from).
TESTBED_UPGRADE_FROM_DIR := $(UPGRADE_FROM_DIR)
TESTBED_UPGRADE_FROM_IMAGE := $(IMAGE_REPOSITORY):$(UPGRADE_FROM)
# The CRDs of make applicationset-crd and make dnsendpoint-crd (hack/make/tools.mk).
TESTBED_APPLICATIONSET_CRD := $(APPLICATIONSET_CRD)
TESTBED_DNSENDPOINT_CRD := $(DNSENDPOINT_CRD)
# Debian's Chromium, which make chromium installs (hack/make/deps.mk).
TESTBED_CHROMIUM := $(CHROMIUM)
# Debian's skopeo, which pushes an image's OCI archive to the bed's registry (make
# testbed-nodes installs it with the nodes' packages).
TESTBED_SKOPEO := /usr/bin/skopeo
# Debian's Unbound and dnsmasq, the caching resolvers the bed runs in front of its DNS
# (make testbed-nodes, or make deps-nodes, installs them with the nodes' packages).
TESTBED_UNBOUND := /usr/sbin/unbound
TESTBED_DNSMASQ := /usr/sbin/dnsmasq

# The file of the TESTBED_* settings above (and any set on make's command line), which
# make testbed writes and the test bed reads; make passes its path to the tests.
TESTBED_ENV := $(abspath $(BIN_DIR))/testbed.env
export TESTBED_ENV_FILE := $(TESTBED_ENV)
TESTBED_SETTINGS = $(sort $(filter-out TESTBED_TOOLS TESTBED_ENV TESTBED_ENV_FILE TESTBED_SETTINGS,\
	$(foreach v,$(filter TESTBED_%,$(.VARIABLES)),$(if $(filter file command,$(origin $(v))),$(v)))))

.PHONY: testbed-env
testbed-env: ## Write the test bed's TESTBED_* settings to bin/testbed.env, where the test bed (and plain 'go test') finds them.
	@mkdir -p $(dir $(TESTBED_ENV))
	@printf '%s\n' '# The test bed'"'"'s settings: written by make testbed-env (hack/make/tests.mk); do not edit.' \
		$(foreach v,$(TESTBED_SETTINGS),'$(v)=$($(v))') > $(TESTBED_ENV).tmp
	@mv $(TESTBED_ENV).tmp $(TESTBED_ENV)
