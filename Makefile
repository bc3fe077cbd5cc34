# traffic-migration: build, generate, verify and test. 'make help' lists the targets.
#
# This file holds the targets you run. Their settings and building blocks live in
# hack/make/, one file per concern, included below:
#
#   build.mk   how this project's Go code is built: the go command, its flags, VERSION
#   tools.mk   the test bed's programs and the code generators, built from the pinned
#              modules in hack/tools into a cache outside the checkout, and the CRDs
#              the test bed reads
#   images.mk  the test bed's images, as OCI archives its nodes import
#   deps.mk    the Debian packages the tests and the demo need (make deps)
#   tests.mk   the tests' settings, and the TESTBED_* variables the test bed reads
#   release.mk make release: the files of a release in bin/release/<VERSION>
#   vuln.mk    make vulncheck: govulncheck, offline, against the database of the
#              pinned golang.org/x/vulndb module (part of make verify)
#
# Every setting made with ?= can be overridden: make test-e2e E2E_PACKAGES=./test/e2e/...

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# In this order: each file reads the variables of the files before it.
include hack/make/build.mk
include hack/make/tools.mk
include hack/make/images.mk
include hack/make/deps.mk
include hack/make/tests.mk
include hack/make/release.mk
include hack/make/vuln.mk

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

# helm-docs (hack/tools/helmdocs) writes the chart's README from its README.md.gotmpl
# and the "# --" comment above each value of values.yaml, which becomes the value's
# row in the README's table; a value without one would get a row without a
# description, which fails here.
.PHONY: chart-docs
chart-docs: $(HELM_DOCS) ## Write the chart's README (charts/traffic-migration/README.md) and its values table from values.yaml's "# --" comments (helm-docs).
	$(HELM_DOCS) --log-level warning --chart-search-root charts --template-files README.md.gotmpl --sort-values-order file
	@! grep -nE '^\| .* \|  \|$$' charts/traffic-migration/README.md || { echo 'these values have no "# --" description in charts/traffic-migration/values.yaml'; exit 1; }

.PHONY: verify
verify: verify-source vulncheck ## Regenerate everything and fail on any difference; vet and format checks; govulncheck (make vulncheck).

# verify-source is make verify without govulncheck, which .ci/run runs after it, beside
# the unit tests (govulncheck loads the code the generators write).
.PHONY: verify-source
verify-source: ## make verify without govulncheck: generated code, formatting, go mod tidy, go vet.
	$(GO) mod download
	$(MAKE) generate manifests chart-docs
	@git diff --exit-code -- pkg manifests charts || { echo "generated files are out of date: run 'make generate manifests chart-docs' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- pkg manifests charts)" || { git status --porcelain -- pkg manifests charts; echo "untracked generated files: commit them"; exit 1; }
	@test -z "$$(gofmt -l cmd pkg test)" || { gofmt -l cmd pkg test; echo "gofmt needed"; exit 1; }
	$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO_BUILD) vet $(GO_BUILD_FLAGS) ./...

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w cmd pkg test

# The built files are committed (see $(UPLOT_DIR)/README.md), so that go build needs
# neither npm nor a network; this only refreshes them.
.PHONY: update-uplot
update-uplot: ## Replace the embedded uPlot with UPLOT_VERSION from the npm registry (needs npm).
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && tar xzf uplot-$(UPLOT_VERSION).tgz) && \
		cp "$$tmp/package/dist/uPlot.iife.min.js" "$$tmp/package/dist/uPlot.min.css" "$$tmp/package/LICENSE" $(UPLOT_DIR)/ && \
		sha256sum $(UPLOT_DIR)/uPlot.iife.min.js $(UPLOT_DIR)/uPlot.min.css
	@echo ">> uPlot $(UPLOT_VERSION) in $(UPLOT_DIR): update the version and checksums in its README.md"

##@ Build

# traffic-migration has every command; traffic-migration-agent is the spoke agent alone,
# without the hub's code, which the add-on deploys on the spokes.
.PHONY: build
build: ## Build the static binaries traffic-migration and traffic-migration-agent under bin/.
	@mkdir -p $(BIN_DIR)
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $(BIN_DIR)/ ./cmd/traffic-migration ./cmd/traffic-migration-agent

# Beside the plugin, its shell completion for kubectl (hack/kubectl_complete-traffic_migration),
# as the release's plugin archives carry it.
.PHONY: install-kubectl-plugin
install-kubectl-plugin: build ## Install the binary as the kubectl plugin kubectl-traffic_migration, and its completion kubectl_complete-traffic_migration, into PLUGIN_DIR (default ~/.local/bin).
	@mkdir -p "$(PLUGIN_DIR)"
	install -m 0755 "$(BIN_DIR)/traffic-migration" "$(PLUGIN_DIR)/kubectl-traffic_migration"
	install -m 0755 hack/kubectl_complete-traffic_migration "$(PLUGIN_DIR)/kubectl_complete-traffic_migration"
	@echo ">> installed $(PLUGIN_DIR)/kubectl-traffic_migration and $(PLUGIN_DIR)/kubectl_complete-traffic_migration: run 'kubectl traffic-migration status' (with $(PLUGIN_DIR) on PATH); kubectl's own completion completes it"

# Staged under bin/ and built offline by hack/image.sh, like the test bed's other
# images (hack/make/images.mk).
.PHONY: image
image: build $(CA_BUNDLE) ## Build the image IMAGE and the test bed's pause image with podman or docker, as OCI archives in bin/images.
	@rm -rf $(BIN_DIR)/image-context $(BIN_DIR)/pause-context
	@mkdir -p $(BIN_DIR)/image-context $(BIN_DIR)/pause-context
	@cp $(BIN_DIR)/traffic-migration $(BIN_DIR)/traffic-migration-agent $(BIN_DIR)/image-context/
	@cp $(CA_BUNDLE) $(BIN_DIR)/image-context/ca-certificates.crt
	hack/image.sh $(IMAGE) Dockerfile $(BIN_DIR)/image-context $(IMAGES_DIR)/traffic-migration.tar VERSION=$(VERSION)
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $(BIN_DIR)/pause-context/pause ./test/images/pause
	hack/image.sh $(PAUSE_IMAGE) test/images/pause/Dockerfile $(BIN_DIR)/pause-context $(IMAGES_DIR)/pause.tar

.PHONY: clean
clean: ## Remove build output (the tools cache stays).
	rm -rf $(BIN_DIR)

##@ Test

.PHONY: test
test: deps tools test-unit test-integration test-e2e ## Run all tests: unit, integration and end-to-end (builds the test bed on first use).

.PHONY: test-unit
test-unit: deps-jdk ## Run the unit tests.
	$(GO) test $(GO_TEST_FLAGS) ./cmd/... ./pkg/... ./test/clients/... ./test/testbed/... ./test/docs/... ./test/benchreport/... ./hack/benchcompare/... ./hack/release/...

# The tests that run real programs are never taken from the test cache (-count=1).
# The benchmarks' small case is built as make bench builds them, so that it checks
# what make bench runs. It and the test bed's nodes' tests (NODES_PACKAGES) run beside
# the integration tests, their output kept until they end: they mostly wait on their
# beds while the integration tests (built with -race) keep the cores busy, the
# benchmarks report figures without failing on a slow machine, and no integration
# test starts nodes. All run to their end; the target fails if one failed.
.PHONY: test-integration
test-integration: testbed testbed-nodes testbed-node-images image build chromium deps-resolvers applicationset-crd dnsendpoint-crd ## Run the integration tests, the benchmarks' small case and the nodes' tests on the local test bed.
	@bench_log=$$(mktemp); nodes_log=$$(mktemp); \
	echo "$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) ./test/bench/... (beside the integration tests)"; \
	$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) ./test/bench/... > $$bench_log 2>&1 & bench=$$!; \
	echo "$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) $(NODES_PACKAGES) (beside the integration tests)"; \
	$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -timeout $(INTEGRATION_TIMEOUT) $(NODES_PACKAGES) > $$nodes_log 2>&1 & nodes=$$!; \
	echo "$(GO) test $(GO_TEST_FLAGS) -count=1 -parallel $(INTEGRATION_PARALLEL) -timeout $(INTEGRATION_TIMEOUT) ./test/integration/... ./test/chart/..."; \
	status=0; \
	$(GO) test $(GO_TEST_FLAGS) -count=1 -parallel $(INTEGRATION_PARALLEL) -timeout $(INTEGRATION_TIMEOUT) ./test/integration/... ./test/chart/... || status=1; \
	wait $$bench || status=1; wait $$nodes || status=1; \
	cat $$bench_log $$nodes_log; rm -f $$bench_log $$nodes_log; \
	exit $$status

# One package at a time (-p 1): each starts an OCM hub, whose add-on webhook binds
# fixed ports.
.PHONY: test-e2e
test-e2e: testbed testbed-nodes deps-resolvers deps-jdk testbed-node-images traefik-image prometheus-image build image image-upgrade-from test-release dnsendpoint-crd ## Run the end-to-end tests and the demo's short form: a real OCM hub and klusterlets on the local test bed, and the test bed's nodes.
	$(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -p 1 -timeout $(E2E_TIMEOUT) $(E2E_PACKAGES)

# The release the lifecycle test installs from, as a user would: make release for this
# machine's platform only, at the chart's appVersion (TEST_RELEASE_VERSION, tests.mk),
# leaving the checkout's chart version as it is (RELEASE_BUMP=false).
.PHONY: test-release
test-release: ## Package the release the lifecycle test installs: make release VERSION=<the chart's appVersion> for this machine only.
	@$(MAKE) --no-print-directory release VERSION=$(TEST_RELEASE_VERSION) RELEASE_PLATFORMS=linux/$$($(GO) env GOHOSTARCH) RELEASE_BUMP=false

# The benchmarks report numbers and never fail on a slow machine; make test runs their
# small case (test/bench in make test-integration, test/strategies in make test-e2e).
# make bench runs the full size BENCH_RUNS times into BENCH_DIR/run-<n>, then writes
# each figure's median and range into BENCH_DIR/summary.json and summary.md;
# BENCH_TESTS picks benchmarks (go test -run), e.g. '^TestBench$$/^Neighbours$$'. Run
# <n> seeds the strategies benchmark's clients with <n>: its median and range are over
# seeds.
BENCH_RUNS ?= 3
# BENCH_FROM resumes a series: runs BENCH_FROM to BENCH_RUNS, beside the runs already
# in BENCH_DIR (after a failed run, for instance).
BENCH_FROM ?= 1
BENCH_TESTS ?= ^Test(Bench|Strategies)$$
BENCH_DIR ?= bench/results/$(shell date -u +%F)-$(shell git describe --always --dirty --abbrev=7 --exclude='*' 2>/dev/null || echo unknown)

.PHONY: bench
bench: testbed testbed-nodes deps-resolvers deps-jdk testbed-node-images traefik-image prometheus-image build image dnsendpoint-crd ## Run the benchmarks at full size on the local test bed, BENCH_RUNS times (3); the reports and their summary (median and range) go to bench/results/<date>-<commit>/.
	@for i in $$(seq $(BENCH_FROM) $(BENCH_RUNS)); do \
		echo "bench: run $$i of $(BENCH_RUNS) into $(BENCH_DIR)/run-$$i"; \
		TRAFFIC_MIGRATION_BENCH=full TRAFFIC_MIGRATION_BENCH_DIR=$(abspath $(BENCH_DIR))/run-$$i TRAFFIC_MIGRATION_BENCH_SEED=$$i $(GO_BUILD) test $(GO_BUILD_TEST_FLAGS) -count=1 -p 1 -timeout 90m -run '$(BENCH_TESTS)' -v ./test/bench/ ./test/strategies/ || exit 1; \
	done
	$(GO) run ./hack/benchcompare -summary $(BENCH_DIR) $(BENCH_DIR)/run-*

.PHONY: bench-check
bench-check: bench ## Run the benchmarks (make bench) and fail if a figure misses its goal; for a release, not for make test.
	$(GO) run ./hack/benchcompare -check $(BENCH_DIR)

.PHONY: bench-compare
bench-compare: ## Show what changed between two benchmark runs or series: make bench-compare OLD=<folder> NEW=<folder> (a run's, or a series' with its median, range and noise band).
	@test -n "$(OLD)" && test -n "$(NEW)" || { echo "usage: make bench-compare OLD=<folder or results file> NEW=<folder or results file>"; exit 2; }
	@$(GO) run ./hack/benchcompare $(OLD) $(NEW)

# Two lanes at once, Traefik beside the rest (hack/make/tools.mk).
.PHONY: tools
tools: ## Build (or find cached) every program of the test bed, its nodes and its spokes, two builds at a time.
	@$(GO) mod download
	@$(MAKE) -s --no-print-directory tools-download
	@$(MAKE) -s --no-print-directory -j2 tools-lane-traefik tools-lane-rest

# Only what is missing, so that on a machine that has it all this needs no root; each
# piece, and the targets that reach it themselves, are in hack/make/deps.mk.
.PHONY: deps
deps: deps-ca-certificates deps-chromium deps-nodes deps-jdk ## Install the missing Debian packages the tests and the demo need, as root: ca-certificates, chromium, the nodes' packages, OpenJDK 17.

##@ Demo

.PHONY: demo
demo: deps testbed testbed-nodes testbed-node-images traefik-image prometheus-image build image dnsendpoint-crd ## Move a Gateway from cluster1 to cluster2 of a local OCM fleet, live, dropping no request (DEMO_FLAGS=-short: the short form).
	$(GO_BUILD) run $(GO_BUILD_FLAGS) ./test/demo $(DEMO_FLAGS)

# The fleet runs as a binary of its own, not under 'go run', so that the SIGTERM make
# passes on reaches it and it stops everything it started.
.PHONY: fleet
fleet: deps testbed testbed-nodes testbed-node-images traefik-image prometheus-image build image dnsendpoint-crd ## Start the demo's local fleet and leave it running to try the product by hand: prints the KUBECONFIG and commands to try; Ctrl-C stops it all.
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -o $(BIN_DIR)/traffic-migration-fleet ./test/demo
	exec $(BIN_DIR)/traffic-migration-fleet -fleet
