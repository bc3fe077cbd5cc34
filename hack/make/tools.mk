# tools.mk: the test bed's programs and the code generators (included by the Makefile).
#
# The test bed's programs (etcd, kube-apiserver, Prometheus, OCM, clusteradm, helm, ...)
# and the code generators are built from the Go module proxy out of the pinned tools
# modules in hack/tools and cached outside the checkout (TOOLS_DIR), keyed by name and
# version, so a fresh clone on a warm machine rebuilds nothing. Here: their versions,
# their paths in the cache, the rule that builds each, and the CRDs the test bed reads
# from modules of the same proxy.

CACHE_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
TOOLS_DIR ?= $(CACHE_HOME)/traffic-migration/tools

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
HELM_DOCS_VERSION := $(call version-of,helmdocs,github.com/norwoodj/helm-docs)
REGISTRY_VERSION := $(call version-of,registry,github.com/distribution/distribution/v3)

ETCD := $(TOOLS_DIR)/etcd-$(ETCD_VERSION)
# The Kubernetes programs carry their version, as Kubernetes' own build stamps it
# (hack/lib/version.sh: gitVersion, gitMajor, gitMinor of client-go's and
# component-base's version packages), so that the API servers answer /version with
# it: helm checks a chart's kubeVersion against that answer, and a build without it
# answers v0.0.0-master. Only the link differs from a build without it. The names say
# so (-stamped), so that a cached build without it is not taken.
KUBE_VERSION_WORDS := $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_LDFLAGS := $(foreach pkg,k8s.io/client-go/pkg/version k8s.io/component-base/version,-X $(pkg).gitVersion=$(KUBE_VERSION) -X $(pkg).gitMajor=$(word 1,$(KUBE_VERSION_WORDS)) -X $(pkg).gitMinor=$(word 2,$(KUBE_VERSION_WORDS)) -X $(pkg).gitTreeState=clean)
KUBE_APISERVER := $(TOOLS_DIR)/kube-apiserver-$(KUBE_VERSION)-stamped
KUBE_CONTROLLER_MANAGER := $(TOOLS_DIR)/kube-controller-manager-$(KUBE_VERSION)-stamped
KUBELET := $(TOOLS_DIR)/kubelet-$(KUBE_VERSION)-stamped
KUBE_PROXY := $(TOOLS_DIR)/kube-proxy-$(KUBE_VERSION)-stamped
KUBE_SCHEDULER := $(TOOLS_DIR)/kube-scheduler-$(KUBE_VERSION)-stamped
# Prometheus is built with only the service discoveries that need no cloud SDK (static,
# file and HTTP: Prometheus's build tag remove_all_sd), which is all the bed configures.
# It halves the Go files that a cold build compiles.
PROMETHEUS_TAGS := remove_all_sd
PROMETHEUS := $(TOOLS_DIR)/prometheus-$(PROMETHEUS_VERSION)-$(PROMETHEUS_TAGS)
PROMTOOL := $(TOOLS_DIR)/promtool-$(PROMETHEUS_VERSION)-$(PROMETHEUS_TAGS)
# The code generators read this module's code with go/types, whose Go must know the
# language of the Go that builds the module (GO_TOOLCHAIN's standard library has
# generic methods, which an older go/types cannot parse): they build with GO_TOOLCHAIN,
# and are cached in a folder named after it.
DEEPCOPY_GEN := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/deepcopy-gen-$(CODEGEN_VERSION)
CLIENT_GEN := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/client-gen-$(CODEGEN_VERSION)
LISTER_GEN := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/lister-gen-$(CODEGEN_VERSION)
INFORMER_GEN := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/informer-gen-$(CODEGEN_VERSION)
CONTROLLER_GEN := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
# helm-docs writes the chart's README (charts/traffic-migration/README.md) from its
# README.md.gotmpl and the "# --" comments of its values.yaml (make chart-docs).
HELM_DOCS := $(TOOLS_DIR)/helm-docs-$(HELM_DOCS_VERSION)

OCM_PLACEMENT := $(TOOLS_DIR)/ocm-placement-$(OCM_VERSION)
OCM_REGISTRATION := $(TOOLS_DIR)/ocm-registration-$(OCM_VERSION)
OCM_WORK := $(TOOLS_DIR)/ocm-work-$(OCM_VERSION)
OCM_ADDON := $(TOOLS_DIR)/ocm-addon-$(OCM_VERSION)
CLUSTERADM := $(TOOLS_DIR)/clusteradm-$(CLUSTERADM_VERSION)
# helm is built as helm's own Makefile builds it, with the Kubernetes version of the
# client-go it links (1.<its minor>) as the one helm template and helm lint assume
# without a cluster (--kube-version), which a chart's kubeVersion is checked against:
# left out, they would assume 1.20. The name carries it, so that a cached helm built
# without it is not taken.
HELM_CLIENT_GO_VERSION := $(call version-of,helm,k8s.io/client-go)
HELM_KUBE_MINOR := $(word 2,$(subst ., ,$(HELM_CLIENT_GO_VERSION)))
HELM := $(TOOLS_DIR)/helm-$(HELM_VERSION)-kube1.$(HELM_KUBE_MINOR)
# TRAEFIK is the Gateway API implementation the spokes of the e2e tests and the demo
# run, as a pod from an image built here (make traefik-image). It is built without lego's
# DNS-challenge providers (hack/traefik-modfile.sh), which the bed never uses: 40% less
# to compile. Its name carries a digest of that stub and script: an edit rebuilds it.
TRAEFIK := $(TOOLS_DIR)/traefik-$(TRAEFIK_VERSION)-nolegodns-$(shell cat hack/tools/traefik/legodns/*.go hack/traefik-modfile.sh | sha256sum | cut -c1-8)
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
# The bed's OCI registry: distribution's registry with only the filesystem storage
# driver (hack/tools/registry, whose main is ours, so keyed by its digest too), which
# the lifecycle test pushes the release to and the nodes pull from. Debian's
# docker-registry (2.8) is not taken: its package installs and starts a system service
# on port 5000, outside any bed, where several beds share the machine.
REGISTRY := $(TOOLS_DIR)/registry-$(REGISTRY_VERSION)-$(call tools-source-key,registry)
TESTBED_TOOLS := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(PROMETHEUS) $(PROMTOOL) $(OCM_PLACEMENT) \
	$(OCM_REGISTRATION) $(OCM_WORK) $(OCM_ADDON) $(CLUSTERADM) $(HELM) $(COREDNS) $(EXTERNALDNS) $(REGISTRY)
# The programs of the test bed's nodes (NODE_TOOLS), which only the tests that ask for
# nodes need, and the Debian packages those nodes run (hack/node-packages.sh).
NODE_TOOLS := $(KUBELET) $(KUBE_PROXY) $(KUBE_SCHEDULER)
# The programs that one go build makes together (build-tools), in the order of their
# packages: the Kubernetes programs of the bed and its nodes, OCM's, Prometheus'.
KUBE_TOOLS := $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBELET) $(KUBE_PROXY) $(KUBE_SCHEDULER)
KUBE_PACKAGES := $(addprefix k8s.io/kubernetes/cmd/,kube-apiserver kube-controller-manager kubelet kube-proxy kube-scheduler)
OCM_TOOLS := $(OCM_PLACEMENT) $(OCM_REGISTRATION) $(OCM_WORK) $(OCM_ADDON)
OCM_PACKAGES := $(addprefix open-cluster-management.io/ocm/cmd/,placement registration work addon)
PROMETHEUS_TOOLS := $(PROMETHEUS) $(PROMTOOL)
PROMETHEUS_PACKAGES := $(addprefix github.com/prometheus/prometheus/cmd/,prometheus promtool)
CODEGEN_TOOLS := $(DEEPCOPY_GEN) $(CLIENT_GEN) $(LISTER_GEN) $(INFORMER_GEN) $(CONTROLLER_GEN)

# ARGOCD_VERSION is the Argo CD module whose ApplicationSet CRD (manifests/crds) the
# docs' ApplicationSet example is checked against; make applicationset-crd downloads the
# module from the Go module proxy into the module cache (58 MB, once).
ARGOCD_VERSION ?= v3.4.0
APPLICATIONSET_CRD := $(shell $(GO) env GOMODCACHE)/github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)/manifests/crds/applicationset-crd.yaml

# The DNSEndpoint CRD (externaldns.k8s.io/v1alpha1) that the test bed's DNS reads, from
# the external-dns module of hack/tools/externaldns; make dnsendpoint-crd downloads the
# module into the module cache, as make applicationset-crd does Argo CD's (with the
# toolchain its go.mod asks for: an older go refuses to download it).
DNSENDPOINT_CRD := $(shell $(GO) env GOMODCACHE)/sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml

# build-tool builds one program of a tools module into the cache. It writes to a
# temporary name first so an interrupted build never leaves a broken binary behind.
# It downloads the module's dependencies first: go mod download fetches them in
# parallel, where go build fetches each one as its loader reaches it (cold, Traefik's
# took 62 s, against about 7 minutes inside the build); with them cached it does nothing.
# Every program is linked without symbol table and DWARF (-s -w), which shortens the
# links of these large programs; their panics still name files and lines.
# The programs build with TOOLS_GOTOOLCHAIN, the machine's own Go unless a module's
# $(6) names another (external-dns needs a newer one), not with GO_TOOLCHAIN: they are
# test programs, and each keeps the Go it was proven with.
# $(1): tools module, $(2): package, $(3): output path, $(4): optional -ldflags,
# $(5): optional build flags, $(6): optional environment (NAME=value ...).
# Each build reports its time and the CPU time of go and the compilers and linkers it
# ran (the shell's times: user and system), which tells where a cold build's time goes.
TOOLS_GOTOOLCHAIN ?= local
define build-tool
	@mkdir -p $(dir $(3))
	@echo ">> building $(notdir $(3)) (cached in $(TOOLS_DIR))"
	@start=$$(date +%s) && cd hack/tools/$(1) && export GONOSUMDB=sigs.k8s.io/about-api GOTOOLCHAIN=$(TOOLS_GOTOOLCHAIN) $(6) && $(GO) mod download && \
		CGO_ENABLED=0 $(GO) build -trimpath $(5) -ldflags '-s -w $(4)' -o $(3).tmp $(2) && \
		times > $(3).times && echo ">> built $(notdir $(3)) in $$(( $$(date +%s) - start )) s (CPU, user and system: $$(tail -n 1 $(3).times))" && rm -f $(3).times
	@mv $(3).tmp $(3)
endef

# build-tools builds several programs of one tools module in one go build, as build-tool
# builds one: go compiles the packages they share once and links the programs side by
# side, where one build after the other leaves a core idle in each build's last
# packages and its link. Into a temporary folder of the cache first, then each to its
# name. $(1): tools module, $(2): the main packages (each named by its last element),
# $(3): their output paths in the same order, $(4): optional build flags, $(5):
# optional -ldflags.
define build-tools
	@mkdir -p $(TOOLS_DIR)
	@echo ">> building $(notdir $(3)) together (cached in $(TOOLS_DIR))"
	@start=$$(date +%s) && tmp=$$(mktemp -d $(abspath $(TOOLS_DIR))/.build-$(1)-XXXXXX) && trap 'rm -rf "$$tmp"' EXIT && \
		cd hack/tools/$(1) && export GONOSUMDB=sigs.k8s.io/about-api GOTOOLCHAIN=$(TOOLS_GOTOOLCHAIN) && $(GO) mod download && \
		CGO_ENABLED=0 $(GO) build -trimpath $(4) -ldflags '-s -w $(5)' -o "$$tmp/" $(2) && \
		times > "$$tmp/times" && echo ">> built $(notdir $(3)) in $$(( $$(date +%s) - start )) s (CPU, user and system: $$(tail -n 1 "$$tmp/times"))" && \
		set -- $(3) && for pkg in $(2); do mv "$$tmp/$${pkg##*/}" "$$1" && shift || exit 1; done
endef

##@ Test bed programs (hack/make/tools.mk)

.PHONY: testbed
testbed: $(TESTBED_TOOLS) testbed-env ## Build (or find cached) the test bed's programs, and write their settings (make testbed-env).

# The nodes' Debian packages are a piece of make deps (hack/make/deps.mk).
.PHONY: testbed-nodes
testbed-nodes: $(NODE_TOOLS) deps-nodes ## Install the Debian packages of the test bed's nodes (as root) and build (or find cached) their programs.

.PHONY: traefik
traefik: $(TRAEFIK) ## Build (or find cached) Traefik, the spokes' Gateway API implementation.

.PHONY: testbed-dns
testbed-dns: $(COREDNS) $(EXTERNALDNS) dnsendpoint-crd ## Build (or find cached) the test bed's DNS: CoreDNS and the loop that feeds external-dns's engine.

.PHONY: applicationset-crd
applicationset-crd: $(APPLICATIONSET_CRD) ## Download Argo CD's module (ARGOCD_VERSION) for its ApplicationSet CRD, which the docs' examples are checked against.

.PHONY: dnsendpoint-crd
dnsendpoint-crd: $(DNSENDPOINT_CRD) ## Download external-dns's module (hack/tools/externaldns) for its DNSEndpoint CRD, which the test bed's DNS reads.

.PHONY: codegen-tools
codegen-tools: $(CODEGEN_TOOLS)

# tools-download fetches the dependencies of every tools module at once, before the
# builds start: a download waits on the network, not the processor, and the builds
# would otherwise take them one module at a time (cold, about 2,500 modules). With
# them cached it does nothing. A module that fails is named; its build fetches again.
.PHONY: tools-download
tools-download: ## Download the dependencies of every tools module (hack/tools) into the module cache, all at once.
	@echo ">> downloading the tools modules' dependencies ($(notdir $(wildcard hack/tools/*)))"
	@start=$$(date +%s); pids=(); mods=(); \
	for m in $(notdir $(wildcard hack/tools/*)); do \
		( cd hack/tools/$$m && export GONOSUMDB=sigs.k8s.io/about-api && \
		  if [ $$m = externaldns ]; then export GOTOOLCHAIN=$(EXTERNALDNS_TOOLCHAIN); fi && $(GO) mod download ) & \
		pids+=($$!); mods+=($$m); \
	done; failed=; \
	for i in "$${!pids[@]}"; do wait "$${pids[$$i]}" || failed="$$failed $${mods[$$i]}"; done; \
	if [ -n "$$failed" ]; then echo ">> could not download the dependencies of:$$failed"; exit 1; fi; \
	echo ">> downloaded the tools modules' dependencies in $$(( $$(date +%s) - start )) s"

# make tools builds every program the tests run in two lanes at once, each a make of
# its own outside the jobserver that builds one program (or one group of programs)
# after the other: a cold Go build leaves a core idle while it downloads modules, in its
# last packages and while it links, which the other lane fills. Programs that share
# packages are in the same lane, built together (build-tools), so that no two builds
# compile the same package at once. The lanes are about even in time, measured cold
# beside make verify (2026-12-02, seconds of wall time and of CPU): Traefik (1,333 and
# 810), Prometheus (506 and 517), CoreDNS (54 and 51), external-dns (163 and 164),
# etcd (83 and 79), clusteradm (177 and 341) and helm (109 and 206) in one; the
# Kubernetes programs (1,758 and 1,194), OCM's (577 and 763) and the registry (174 and
# 158, 2026-12-05) in the other.
TOOLS_LANE_TRAEFIK := $(TRAEFIK) $(PROMETHEUS_TOOLS) $(COREDNS) $(EXTERNALDNS) $(ETCD) $(CLUSTERADM) $(HELM)
TOOLS_LANE_REST := $(KUBE_TOOLS) $(OCM_TOOLS) $(REGISTRY)
tools-lane = @MAKEFLAGS='$(filter-out -j% --jobserver-auth=% --jobserver-fds=%,$(MAKEFLAGS))' $(MAKE) -s --no-print-directory $(1)
.PHONY: tools-lane-traefik tools-lane-rest
tools-lane-traefik:
	$(call tools-lane,$(TOOLS_LANE_TRAEFIK))
tools-lane-rest:
	$(call tools-lane,$(TOOLS_LANE_REST))

# Each program, built by build-tool into the cache when it is not there; the groups
# build every program of the group when one is missing (grouped targets, &:).
$(ETCD):
	$(call build-tool,etcd,go.etcd.io/etcd/server/v3,$@)
$(KUBE_TOOLS) &:
	$(call build-tools,kube,$(KUBE_PACKAGES),$(KUBE_TOOLS),,$(KUBE_LDFLAGS))
$(PROMETHEUS_TOOLS) &:
	$(call build-tools,prometheus,$(PROMETHEUS_PACKAGES),$(PROMETHEUS_TOOLS),-tags=$(PROMETHEUS_TAGS))
$(OCM_TOOLS) &:
	$(call build-tools,ocm,$(OCM_PACKAGES),$(OCM_TOOLS))
$(CLUSTERADM):
	$(call build-tool,clusteradm,open-cluster-management.io/clusteradm/cmd/clusteradm,$@)
$(HELM):
	$(call build-tool,helm,helm.sh/helm/v3/cmd/helm,$@,-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) $(foreach pkg,pkg/lint/rules pkg/chartutil,-X helm.sh/helm/v3/$(pkg).k8sVersionMajor=1 -X helm.sh/helm/v3/$(pkg).k8sVersionMinor=$(HELM_KUBE_MINOR)))
# Only cmd/traefik, the largest program of the bed, with the go.mod that
# hack/traefik-modfile.sh writes (lego without its DNS-challenge providers) in a work
# folder beside the binary, removed once it is built.
$(TRAEFIK):
	@mkdir -p $(dir $@) && cd hack/tools/traefik && export GONOSUMDB=sigs.k8s.io/about-api && $(GO) mod download
	@hack/traefik-modfile.sh $@.work
	$(call build-tool,traefik,github.com/traefik/traefik/v3/cmd/traefik,$@,-X github.com/traefik/traefik/v3/pkg/version.Version=$(TRAEFIK_VERSION),-modfile=$@.work/go.mod)
	@rm -rf $@.work
$(COREDNS):
	$(call build-tool,coredns,.,$@)
$(EXTERNALDNS):
	$(call build-tool,externaldns,.,$@,,,GOTOOLCHAIN=$(EXTERNALDNS_TOOLCHAIN))
$(REGISTRY):
	$(call build-tool,registry,.,$@)
$(DEEPCOPY_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/deepcopy-gen,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
$(CLIENT_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/client-gen,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
$(LISTER_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/lister-gen,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
$(INFORMER_GEN):
	$(call build-tool,codegen,k8s.io/code-generator/cmd/informer-gen,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
$(CONTROLLER_GEN):
	$(call build-tool,codegen,sigs.k8s.io/controller-tools/cmd/controller-gen,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
$(HELM_DOCS):
	$(call build-tool,helmdocs,github.com/norwoodj/helm-docs/cmd/helm-docs,$@,-X main.version=$(patsubst v%,%,$(HELM_DOCS_VERSION)))

# The CRDs' modules are downloaded outside this module, so that its go.mod and go.sum
# stay as they are.
$(APPLICATIONSET_CRD):
	@echo ">> downloading github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION) from the Go module proxy, for its ApplicationSet CRD"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && GOFLAGS= $(GO) mod download github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)
	@test -f $@ || { echo "$@ is not in github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION)"; exit 1; }

$(DNSENDPOINT_CRD):
	@echo ">> downloading sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION) from the Go module proxy, for its DNSEndpoint CRD"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && GOFLAGS= GOTOOLCHAIN=$(EXTERNALDNS_TOOLCHAIN) $(GO) mod download sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)
	@test -f $@ || { echo "$@ is not in sigs.k8s.io/external-dns@$(EXTERNALDNS_VERSION)"; exit 1; }
