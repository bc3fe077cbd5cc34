# traffic-migration: build, generate, verify and test.
#
# The test bed's programs (etcd, kube-apiserver, Prometheus, OCM, clusteradm, helm) are
# built from the Go module proxy out of the pinned tools modules in hack/tools and
# cached outside the checkout, keyed by name and version, so a fresh clone on a warm
# machine rebuilds nothing.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
BIN_DIR ?= bin
CACHE_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
TOOLS_DIR ?= $(CACHE_HOME)/traffic-migration/tools
IMAGE ?= quay.io/open-cluster-management/traffic-migration:latest
# PAUSE_IMAGE is the test bed's pod sandbox image, built here like IMAGE.
PAUSE_IMAGE ?= localhost/traffic-migration/pause:latest
# IMAGES_DIR holds the images as OCI archives, which the test bed's nodes import.
IMAGES_DIR := $(abspath $(BIN_DIR))/images
# CA_BUNDLE is the CA certificates the image carries (Debian's ca-certificates).
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X open-cluster-management.io/traffic-migration/pkg/version.Version=$(VERSION)
# Every build but the race detector's is static and trimmed, with the same flags
# (GO_BUILD and GO_BUILD_FLAGS), so that verify's go vet, make build, the images, the
# end-to-end tests, the benchmarks and the demo compile each package once into the
# build cache. The race detector needs cgo: the unit and integration tests, which run
# the product's code in-process, build apart with GO_TEST_FLAGS. The end-to-end tests
# run the product as separate programs and pods, and the benchmarks measure it, built
# without it (GO_BUILD_TEST_FLAGS). -w leaves DWARF out of the test binaries (each
# links a second faster); stack traces keep their files and lines.
GO_BUILD := CGO_ENABLED=0 $(GO)
GO_BUILD_FLAGS := -trimpath
GO_TEST_FLAGS ?= -race -ldflags=-w
GO_BUILD_TEST_FLAGS ?= $(GO_BUILD_FLAGS) -ldflags=-w
INTEGRATION_TIMEOUT ?= 40m
E2E_TIMEOUT ?= 30m

# version-of reads the pinned version of a module from a tools module's go.mod.
version-of = $(shell awk '$$1=="$(2)" || ($$1=="require" && $$2=="$(2)") {print ($$1=="require" ? $$3 : $$2); exit}' hack/tools/$(1)/go.mod)

KUBE_VERSION := $(call version-of,kube,k8s.io/kubernetes)
ETCD_VERSION := $(call version-of,etcd,go.etcd.io/etcd/server/v3)
PROMETHEUS_VERSION := $(call version-of,prometheus,github.com/prometheus/prometheus)
OCM_VERSION := $(call version-of,ocm,open-cluster-management.io/ocm)
CLUSTERADM_VERSION := $(call version-of,clusteradm,open-cluster-management.io/clusteradm)
HELM_VERSION := $(call version-of,helm,helm.sh/helm/v3)
TRAEFIK_VERSION := $(call version-of,traefik,github.com/traefik/traefik/v3)
COREDNS_VERSION := $(call version-of,coredns,github.com/coredns/coredns)
EXTERNALDNS_VERSION := $(call version-of,externaldns,sigs.k8s.io/external-dns)
CODEGEN_VERSION := $(call version-of,codegen,k8s.io/code-generator)
CONTROLLER_TOOLS_VERSION := $(call version-of,codegen,sigs.k8s.io/controller-tools)

ETCD := $(TOOLS_DIR)/etcd-$(ETCD_VERSION)
KUBE_APISERVER := $(TOOLS_DIR)/kube-apiserver-$(KUBE_VERSION)
KUBE_CONTROLLER_MANAGER := $(TOOLS_DIR)/kube-controller-manager-$(KUBE_VERSION)
KUBELET := $(TOOLS_DIR)/kubelet-$(KUBE_VERSION)
KUBE_PROXY := $(TOOLS_DIR)/kube-proxy-$(KUBE_VERSION)
KUBE_SCHEDULER := $(TOOLS_DIR)/kube-scheduler-$(KUBE_VERSION)
# Prometheus is built with only the service discoveries that need no cloud SDK (static,
# file and HTTP: Prometheus's build tag remove_all_sd), which is all the bed configures.
# It halves the Go files that a cold build compiles.
PROMETHEUS_TAGS := remove_all_sd
PROMETHEUS := $(TOOLS_DIR)/prometheus-$(PROMETHEUS_VERSION)-$(PROMETHEUS_TAGS)
PROMTOOL := $(TOOLS_DIR)/promtool-$(PROMETHEUS_VERSION)-$(PROMETHEUS_TAGS)
DEEPCOPY_GEN := $(TOOLS_DIR)/deepcopy-gen-$(CODEGEN_VERSION)
CLIENT_GEN := $(TOOLS_DIR)/client-gen-$(CODEGEN_VERSION)
LISTER_GEN := $(TOOLS_DIR)/lister-gen-$(CODEGEN_VERSION)
INFORMER_GEN := $(TOOLS_DIR)/informer-gen-$(CODEGEN_VERSION)
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_TOOLS_VERSION)

OCM_PLACEMENT := $(TOOLS_DIR)/ocm-placement-$(OCM_VERSION)
OCM_REGISTRATION := $(TOOLS_DIR)/ocm-registration-$(OCM_VERSION)
OCM_WORK := $(TOOLS_DIR)/ocm-work-$(OCM_VERSION)
OCM_ADDON := $(TOOLS_DIR)/ocm-addon-$(OCM_VERSION)
CLUSTERADM := $(TOOLS_DIR)/clusteradm-$(CLUSTERADM_VERSION)
HELM := $(TOOLS_DIR)/helm-$(HELM_VERSION)
# TRAEFIK is the Gateway API implementation the spokes of the e2e tests and the demo
# run, as a pod from an image built here (make traefik-image).
TRAEFIK := $(TOOLS_DIR)/traefik-$(TRAEFIK_VERSION)
# The test bed's DNS: CoreDNS with the few plugins it uses (hack/tools/coredns), serving
# zones from etcd, and the loop that feeds external-dns's engine (plan, TXT registry,
# CoreDNS provider) from DNSEndpoints (hack/tools/externaldns). Both mains are ours, so
# their binaries are keyed by a digest of their tools module too: an edit rebuilds them.
# external-dns's go.mod asks for Go 1.27, a toolchain the go command fetches from the
# module proxy (EXTERNALDNS_TOOLCHAIN).
tools-source-key = $(shell cat hack/tools/$(1)/*.go hack/tools/$(1)/go.mod hack/tools/$(1)/go.sum | sha256sum | cut -c1-8)
COREDNS := $(TOOLS_DIR)/coredns-$(COREDNS_VERSION)-$(call tools-source-key,coredns)
EXTERNALDNS_TOOLCHAIN := $(call version-of,externaldns,toolchain)
EXTERNALDNS := $(TOOLS_DIR)/externaldns-$(EXTERNALDNS_VERSION)-$(call tools-source-key,externaldns)
TESTBED_TOOLS := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(PROMETHEUS) $(PROMTOOL) $(OCM_PLACEMENT) \
	$(OCM_REGISTRATION) $(OCM_WORK) $(OCM_ADDON) $(CLUSTERADM) $(HELM) $(COREDNS) $(EXTERNALDNS)
# The programs of the test bed's nodes (NODE_TOOLS), which only the tests that ask for
# nodes need, and the Debian packages those nodes run (hack/node-packages.sh).
NODE_TOOLS := $(KUBELET) $(KUBE_PROXY) $(KUBE_SCHEDULER)
CODEGEN_TOOLS := $(DEEPCOPY_GEN) $(CLIENT_GEN) $(LISTER_GEN) $(INFORMER_GEN) $(CONTROLLER_GEN)

# The test bed finds its programs through these variables.
export TESTBED_ETCD := $(ETCD)
export TESTBED_KUBE_APISERVER := $(KUBE_APISERVER)
export TESTBED_PROMETHEUS := $(PROMETHEUS)
export TESTBED_PROMTOOL := $(PROMTOOL)
export TESTBED_OCM_PLACEMENT := $(OCM_PLACEMENT)
export TESTBED_KUBE_CONTROLLER_MANAGER := $(KUBE_CONTROLLER_MANAGER)
export TESTBED_OCM_REGISTRATION := $(OCM_REGISTRATION)
export TESTBED_OCM_WORK := $(OCM_WORK)
export TESTBED_OCM_ADDON := $(OCM_ADDON)
export TESTBED_CLUSTERADM := $(CLUSTERADM)
export TESTBED_HELM := $(HELM)
export TESTBED_COREDNS := $(COREDNS)
export TESTBED_EXTERNALDNS := $(EXTERNALDNS)
export TESTBED_KUBELET := $(KUBELET)
export TESTBED_KUBE_PROXY := $(KUBE_PROXY)
export TESTBED_KUBE_SCHEDULER := $(KUBE_SCHEDULER)
# The test image of the nodes' own test, which 'make testbed-node-images' builds into
# TESTBED_IMAGES_DIR/incluster.tar.
export TESTBED_INCLUSTER_IMAGE := localhost/traffic-migration-incluster:test
# Traefik's image, which 'make traefik-image' builds into TESTBED_IMAGES_DIR/traefik.tar.
export TESTBED_TRAEFIK_IMAGE := localhost/traffic-migration/traefik:$(TRAEFIK_VERSION)
# The spokes' metrics agents' image (the bed's Prometheus), which 'make
# prometheus-image' builds into TESTBED_IMAGES_DIR/prometheus.tar.
export TESTBED_PROMETHEUS_IMAGE := localhost/traffic-migration/prometheus:$(PROMETHEUS_VERSION)
export TESTBED_TRAFFIC_MIGRATION := $(abspath $(BIN_DIR))/traffic-migration
export TESTBED_TRAFFIC_MIGRATION_AGENT := $(abspath $(BIN_DIR))/traffic-migration-agent
# The images of make image: OCI archives in TESTBED_IMAGES_DIR (traffic-migration.tar,
# pause.tar), and the references they carry.
export TESTBED_IMAGES_DIR := $(IMAGES_DIR)
export TESTBED_IMAGE := $(IMAGE)
export TESTBED_PAUSE_IMAGE := $(PAUSE_IMAGE)

# UPGRADE_FROM is the release that the lifecycle test (test/lifecycle) upgrades from:
# the commit before the check history, whose chart still shipped its CRD in crds/.
# make image-upgrade-from builds that commit's binaries with its own Makefile into
# UPGRADE_FROM_DIR, with its chart beside them, and its image with today's Dockerfile
# (that commit's Dockerfile builds in a golang base image, and nothing here pulls).
UPGRADE_FROM ?= fc6ebfa
UPGRADE_FROM_DIR := $(abspath $(BIN_DIR))/upgrade-from-$(UPGRADE_FROM)
export TESTBED_UPGRADE_FROM_DIR := $(UPGRADE_FROM_DIR)
export TESTBED_UPGRADE_FROM_IMAGE := $(patsubst %:latest,%,$(IMAGE)):$(UPGRADE_FROM)

# ARGOCD_VERSION is the Argo CD module whose ApplicationSet CRD (manifests/crds) the
# docs' ApplicationSet example is checked against; make applicationset-crd downloads the
# module from the Go module proxy into the module cache (58 MB, once).
ARGOCD_VERSION ?= v3.4.0
APPLICATIONSET_CRD := $(shell $(GO) env GOMODCACHE)/github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)/manifests/crds/applicationset-crd.yaml
export TESTBED_APPLICATIONSET_CRD := $(APPLICATIONSET_CRD)

# The DNSEndpoint CRD (externaldns.k8s.io/v1alpha1) that the test bed's DNS reads, from
# the external-dns module of hack/tools/externaldns; make dnsendpoint-crd downloads the
# module into the module cache, as make applicationset-crd does Argo CD's (with the
# toolchain its go.mod asks for: an older go refuses to download it).
DNSENDPOINT_CRD := $(shell $(GO) env GOMODCACHE)/sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml
export TESTBED_DNSENDPOINT_CRD := $(DNSENDPOINT_CRD)

# The dashboard's browser test drives Debian's Chromium; make chromium installs it.
CHROMIUM ?= /usr/bin/chromium
export TESTBED_CHROMIUM := $(CHROMIUM)

# uPlot, the chart library the dashboard embeds; make update-uplot replaces its files.
UPLOT_VERSION ?= 1.6.32
UPLOT_DIR := pkg/cmd/dashboard/assets/vendor/uplot

# build-tool builds one program of a tools module into the cache. It writes to a
# temporary name first so an interrupted build never leaves a broken binary behind.
# It downloads the module's dependencies first: go mod download fetches them in
# parallel, where go build fetches each one as its loader reaches it (cold, Traefik's
# took 62 s, against about 7 minutes inside the build); with them cached it does nothing.
# Every program is linked without symbol table and DWARF (-s -w), which shortens the
# links of these large programs; their panics still name files and lines.
# $(1): tools module, $(2): package, $(3): output path, $(4): optional -ldflags,
# $(5): optional build flags, $(6): optional environment (NAME=value ...).
define build-tool
	@mkdir -p $(dir $(3))
	@echo ">> building $(notdir $(3)) (cached in $(TOOLS_DIR))"
	@start=$$(date +%s) && cd hack/tools/$(1) && export GONOSUMDB=sigs.k8s.io/about-api $(6) && $(GO) mod download && \
		CGO_ENABLED=0 $(GO) build -trimpath $(5) -ldflags '-s -w $(4)' -o $(3).tmp $(2) && \
		echo ">> built $(notdir $(3)) in $$(( $$(date +%s) - start )) s"
	@mv $(3).tmp $(3)
endef

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-24s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CODEGEN_TOOLS) ## Generate deepcopy functions, the clientset, listers and informers.
	DEEPCOPY_GEN=$(DEEPCOPY_GEN) CLIENT_GEN=$(CLIENT_GEN) LISTER_GEN=$(LISTER_GEN) INFORMER_GEN=$(INFORMER_GEN) hack/update-codegen.sh

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD from the API types.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./pkg/apis/... output:crd:artifacts:config=manifests/crd
	@cp manifests/crd/*.yaml charts/traffic-migration/files/crds/

.PHONY: verify
verify: ## Regenerate everything and fail on any difference; vet and format checks.
	$(GO) mod download
	$(MAKE) generate manifests
	@git diff --exit-code -- pkg manifests charts || { echo "generated files are out of date: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- pkg manifests charts)" || { git status --porcelain -- pkg manifests charts; echo "untracked generated files: commit them"; exit 1; }
	@test -z "$$(gofmt -l cmd pkg test)" || { gofmt -l cmd pkg test; echo "gofmt needed"; exit 1; }
	$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO_BUILD) vet $(GO_BUILD_FLAGS) ./...

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w cmd pkg test

##@ Build

# traffic-migration has every command; traffic-migration-agent is the spoke agent alone,
# without the hub's code, which the add-on deploys on the spokes.
.PHONY: build
build: ## Build the static binaries traffic-migration and traffic-migration-agent under bin/.
	@mkdir -p $(BIN_DIR)
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/ ./cmd/traffic-migration ./cmd/traffic-migration-agent

PLUGIN_DIR ?= $(HOME)/.local/bin

.PHONY: install-kubectl-plugin
install-kubectl-plugin: build ## Install the binary as the kubectl plugin kubectl-traffic_migration into PLUGIN_DIR (default ~/.local/bin).
	@mkdir -p "$(PLUGIN_DIR)"
	install -m 0755 "$(BIN_DIR)/traffic-migration" "$(PLUGIN_DIR)/kubectl-traffic_migration"
	@echo ">> installed $(PLUGIN_DIR)/kubectl-traffic_migration: run 'kubectl traffic-migration status' (with $(PLUGIN_DIR) on PATH)"

# The images are built from contexts staged under bin/, with only what each COPYs:
# no registry is reached (every Dockerfile starts FROM scratch). hack/image.sh finds
# podman or docker, installs podman as root when there is neither, and saves each image
# as an OCI archive in IMAGES_DIR.
.PHONY: image
image: build $(CA_BUNDLE) ## Build the image IMAGE and the test bed's pause image with podman or docker, as OCI archives in bin/images.
	@rm -rf $(BIN_DIR)/image-context $(BIN_DIR)/pause-context
	@mkdir -p $(BIN_DIR)/image-context $(BIN_DIR)/pause-context
	@cp $(BIN_DIR)/traffic-migration $(BIN_DIR)/traffic-migration-agent $(BIN_DIR)/image-context/
	@cp $(CA_BUNDLE) $(BIN_DIR)/image-context/ca-certificates.crt
	hack/image.sh $(IMAGE) Dockerfile $(BIN_DIR)/image-context $(IMAGES_DIR)/traffic-migration.tar VERSION=$(VERSION)
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $(BIN_DIR)/pause-context/pause ./test/images/pause
	hack/image.sh $(PAUSE_IMAGE) test/images/pause/Dockerfile $(BIN_DIR)/pause-context $(IMAGES_DIR)/pause.tar

.PHONY: applicationset-crd
applicationset-crd: $(APPLICATIONSET_CRD) ## Download Argo CD's module (ARGOCD_VERSION) for its ApplicationSet CRD, which the docs' examples are checked against.

# Outside this module, so that its go.mod and go.sum stay as they are.
$(APPLICATIONSET_CRD):
	@echo ">> downloading github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION) from the Go module proxy, for its ApplicationSet CRD"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && GOFLAGS= $(GO) mod download github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)
	@test -f $@ || { echo "$@ is not in github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)"; exit 1; }

.PHONY: dnsendpoint-crd
dnsendpoint-crd: $(DNSENDPOINT_CRD) ## Download external-dns's module (hack/tools/externaldns) for its DNSEndpoint CRD, which the test bed's DNS reads.

$(DNSENDPOINT_CRD):
	@echo ">> downloading sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION) from the Go module proxy, for its DNSEndpoint CRD"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && GOFLAGS= GOTOOLCHAIN=$(EXTERNALDNS_TOOLCHAIN) $(GO) mod download sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)
	@test -f $@ || { echo "$@ is not in sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)"; exit 1; }

.PHONY: image-upgrade-from
image-upgrade-from: $(UPGRADE_FROM_DIR)/traffic-migration.tar ## Build the release UPGRADE_FROM's binaries, chart and image (for the lifecycle test's upgrade) under bin/.

# The archive comes last: once it is there, the whole directory is.
$(UPGRADE_FROM_DIR)/traffic-migration.tar: | $(CA_BUNDLE)
	@git cat-file -e $(UPGRADE_FROM)^{commit} 2>/dev/null || { echo "the lifecycle test upgrades from commit $(UPGRADE_FROM), which this clone lacks: fetch the history ('git fetch --unshallow')"; exit 1; }
	@rm -rf $(UPGRADE_FROM_DIR) && mkdir -p $(UPGRADE_FROM_DIR)/src $(UPGRADE_FROM_DIR)/image-context
	@echo ">> building traffic-migration as of $(UPGRADE_FROM) in $(UPGRADE_FROM_DIR)"
	git archive $(UPGRADE_FROM) | tar -x -C $(UPGRADE_FROM_DIR)/src
	$(MAKE) --no-print-directory -C $(UPGRADE_FROM_DIR)/src build VERSION=$(UPGRADE_FROM) BIN_DIR=$(UPGRADE_FROM_DIR)/image-context
	@cp $(CA_BUNDLE) $(UPGRADE_FROM_DIR)/image-context/ca-certificates.crt
	hack/image.sh $(TESTBED_UPGRADE_FROM_IMAGE) Dockerfile $(UPGRADE_FROM_DIR)/image-context $@ VERSION=$(UPGRADE_FROM)

$(CA_BUNDLE):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo ">> installing ca-certificates (Debian package) for the image"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 ca-certificates >/dev/null; \
	else \
		echo "make image needs the CA certificates at $(CA_BUNDLE): install ca-certificates ('sudo apt-get install ca-certificates'), or set CA_BUNDLE"; exit 1; \
	fi

##@ Test

.PHONY: test
test: tools test-unit test-integration test-e2e ## Run all tests: unit, integration and end-to-end (builds the test bed on first use).

.PHONY: test-unit
test-unit: ## Run the unit tests.
	$(GO) test $(GO_TEST_FLAGS) ./cmd/... ./pkg/...

# The tests that run real programs are never taken from the test cache (-count=1).
# The benchmarks' small case is built as make bench builds them, so that it checks
# what make bench runs.
.PHONY: test-integration
test-integration: testbed build chromium applicationset-crd dnsendpoint-crd ## Run the integration tests on the local test bed.
	$(GO) test $(GO_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) ./test/integration/... ./test/chart/...
	$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) ./test/bench/...

# One package at a time: each starts an OCM hub, whose add-on webhook binds fixed ports.
# test/nodes tests the test bed's nodes themselves (pods, in-cluster access, cleanup).
# test/lifecycle upgrades the chart from UPGRADE_FROM, installs by Placement and uninstalls.
E2E_PACKAGES ?= ./test/nodes/... ./test/e2e/... ./test/lifecycle/... ./test/demo/...

.PHONY: test-e2e
test-e2e: testbed testbed-nodes testbed-node-images traefik-image prometheus-image build image image-upgrade-from dnsendpoint-crd ## Run the end-to-end tests and the demo's short form: a real OCM hub and klusterlets on the local test bed, and the test bed's nodes.
	$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -p 1 -timeout $(E2E_TIMEOUT) $(E2E_PACKAGES)

# The benchmarks report numbers and never fail on a slow machine; make test-integration
# runs their small case.
.PHONY: bench
bench: testbed build ## Run the benchmarks at full size on the local test bed; the report goes to bench/results/.
	TRAFFIC_MIGRATION_BENCH=full $(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout 60m -run '^TestBench$$' -v ./test/bench/

DEMO_FLAGS ?=

.PHONY: demo
demo: testbed testbed-nodes testbed-node-images traefik-image prometheus-image build image dnsendpoint-crd ## Move a Gateway from cluster1 to cluster2 of a local OCM fleet, live, dropping no request (DEMO_FLAGS=-short: the short form).
	$(GO_BUILD) run $(GO_BUILD_FLAGS) ./test/demo $(DEMO_FLAGS)

# The fleet runs as a binary of its own, not under 'go run', so that the SIGTERM make
# passes on reaches it and it stops everything it started.
.PHONY: fleet
fleet: testbed testbed-nodes testbed-node-images traefik-image prometheus-image build image dnsendpoint-crd ## Start the demo's local fleet and leave it running to try the product by hand: prints the KUBECONFIG and commands to try; Ctrl-C stops it all.
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -o $(BIN_DIR)/traffic-migration-fleet ./test/demo
	exec $(BIN_DIR)/traffic-migration-fleet -fleet

.PHONY: testbed
testbed: $(TESTBED_TOOLS) ## Build (or find cached) the test bed's programs.

# Every program the tests run, in two lanes at once: Traefik, whose modules share
# nothing with the others, beside the rest one at a time. A cold Go build leaves a core
# idle while it downloads modules and while it links, which the other lane fills.
# Within the second lane the programs share packages (the Kubernetes binaries, OCM's),
# which one build at a time compiles once into the build cache: that lane runs a make
# of its own, outside the jobserver.
.PHONY: tools tools-lane-traefik tools-lane-rest
tools: ## Build (or find cached) every program of the test bed, its nodes and its spokes, two builds at a time.
	@$(GO) mod download
	@$(MAKE) -s --no-print-directory -j2 tools-lane-traefik tools-lane-rest
tools-lane-traefik: $(TRAEFIK)
tools-lane-rest:
	@MAKEFLAGS='$(filter-out -j% --jobserver-auth=% --jobserver-fds=%,$(MAKEFLAGS))' $(MAKE) -s --no-print-directory $(TESTBED_TOOLS) $(NODE_TOOLS)

# Debian's package, as root (CI and these machines) or through sudo.
.PHONY: chromium
chromium: ## Install Debian's chromium for the dashboard's browser test, when it is missing.
	@test -x $(CHROMIUM) || { echo ">> installing chromium from Debian's packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null; }

# The built files are committed (see $(UPLOT_DIR)/README.md), so that go build needs
# neither npm nor a network; this only refreshes them.
.PHONY: update-uplot
update-uplot: ## Replace the embedded uPlot with UPLOT_VERSION from the npm registry (needs npm).
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && tar xzf uplot-$(UPLOT_VERSION).tgz) && \
		cp "$$tmp/package/dist/uPlot.iife.min.js" "$$tmp/package/dist/uPlot.min.css" "$$tmp/package/LICENSE" $(UPLOT_DIR)/ && \
		sha256sum $(UPLOT_DIR)/uPlot.iife.min.js $(UPLOT_DIR)/uPlot.min.css
	@echo ">> uPlot $(UPLOT_VERSION) in $(UPLOT_DIR): update the version and checksums in its README.md"

.PHONY: testbed-nodes
testbed-nodes: $(NODE_TOOLS) ## Install the Debian packages of the test bed's nodes (as root) and build (or find cached) their programs.
	@hack/node-packages.sh

.PHONY: testbed-node-images
testbed-node-images: ## Build the test image of the nodes' test (an in-cluster client) into TESTBED_IMAGES_DIR, like make image.
	@rm -rf $(BIN_DIR)/incluster-context && mkdir -p $(BIN_DIR)/incluster-context
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $(BIN_DIR)/incluster-context/incluster ./test/images/incluster
	hack/image.sh $(TESTBED_INCLUSTER_IMAGE) test/images/incluster/Dockerfile $(BIN_DIR)/incluster-context $(IMAGES_DIR)/incluster.tar

.PHONY: traefik
traefik: $(TRAEFIK) ## Build (or find cached) Traefik, the spokes' Gateway API implementation.

.PHONY: testbed-dns
testbed-dns: $(COREDNS) $(EXTERNALDNS) dnsendpoint-crd ## Build (or find cached) the test bed's DNS: CoreDNS and the loop that feeds external-dns's engine.

.PHONY: traefik-image
traefik-image: $(TRAEFIK) ## Build Traefik's image for the test bed's spokes into TESTBED_IMAGES_DIR, like make image.
	@rm -rf $(BIN_DIR)/traefik-context && mkdir -p $(BIN_DIR)/traefik-context
	@cp $(TRAEFIK) $(BIN_DIR)/traefik-context/traefik
	hack/image.sh $(TESTBED_TRAEFIK_IMAGE) test/images/traefik/Dockerfile $(BIN_DIR)/traefik-context $(IMAGES_DIR)/traefik.tar

.PHONY: prometheus-image
prometheus-image: $(PROMETHEUS) ## Build the spokes' metrics agents' image (the bed's Prometheus) into TESTBED_IMAGES_DIR, like make image.
	@rm -rf $(BIN_DIR)/prometheus-context && mkdir -p $(BIN_DIR)/prometheus-context
	@cp $(PROMETHEUS) $(BIN_DIR)/prometheus-context/prometheus
	hack/image.sh $(TESTBED_PROMETHEUS_IMAGE) test/images/prometheus/Dockerfile $(BIN_DIR)/prometheus-context $(IMAGES_DIR)/prometheus.tar

.PHONY: codegen-tools
codegen-tools: $(CODEGEN_TOOLS)

$(ETCD):
	$(call build-tool,etcd,go.etcd.io/etcd/server/v3,$@)
$(KUBE_APISERVER):
	$(call build-tool,kube,k8s.io/kubernetes/cmd/kube-apiserver,$@)
$(KUBE_CONTROLLER_MANAGER):
	$(call build-tool,kube,k8s.io/kubernetes/cmd/kube-controller-manager,$@)
$(KUBELET):
	$(call build-tool,kube,k8s.io/kubernetes/cmd/kubelet,$@)
$(KUBE_PROXY):
	$(call build-tool,kube,k8s.io/kubernetes/cmd/kube-proxy,$@)
$(KUBE_SCHEDULER):
	$(call build-tool,kube,k8s.io/kubernetes/cmd/kube-scheduler,$@)
$(PROMETHEUS):
	$(call build-tool,prometheus,github.com/prometheus/prometheus/cmd/prometheus,$@,,-tags=$(PROMETHEUS_TAGS))
$(PROMTOOL):
	$(call build-tool,prometheus,github.com/prometheus/prometheus/cmd/promtool,$@,,-tags=$(PROMETHEUS_TAGS))
$(OCM_PLACEMENT):
	$(call build-tool,ocm,open-cluster-management.io/ocm/cmd/placement,$@)
$(OCM_REGISTRATION):
	$(call build-tool,ocm,open-cluster-management.io/ocm/cmd/registration,$@)
$(OCM_WORK):
	$(call build-tool,ocm,open-cluster-management.io/ocm/cmd/work,$@)
$(OCM_ADDON):
	$(call build-tool,ocm,open-cluster-management.io/ocm/cmd/addon,$@)
$(CLUSTERADM):
	$(call build-tool,clusteradm,open-cluster-management.io/clusteradm/cmd/clusteradm,$@)
$(HELM):
	$(call build-tool,helm,helm.sh/helm/v3/cmd/helm,$@,-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION))
# Only cmd/traefik: its dependencies (every DNS provider of lego, the cloud SDKs) make
# it the largest program of the bed.
$(TRAEFIK):
	$(call build-tool,traefik,github.com/traefik/traefik/v3/cmd/traefik,$@,-X github.com/traefik/traefik/v3/pkg/version.Version=$(TRAEFIK_VERSION))
$(COREDNS):
	$(call build-tool,coredns,.,$@)
$(EXTERNALDNS):
	$(call build-tool,externaldns,.,$@,,,GOTOOLCHAIN=$(EXTERNALDNS_TOOLCHAIN))
$(DEEPCOPY_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/deepcopy-gen,$@)
$(CLIENT_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/client-gen,$@)
$(LISTER_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/lister-gen,$@)
$(INFORMER_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/informer-gen,$@)
$(CONTROLLER_GEN):
	$(call build-tool,codegen,sigs.k8s.io/controller-tools/cmd/controller-gen,$@)

.PHONY: clean
clean: ## Remove build output (the tools cache stays).
	rm -rf $(BIN_DIR)
