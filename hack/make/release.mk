# release.mk: the files of a release (included by the Makefile, after the files whose
# variables it reads: build.mk's flags and VERSION, tools.mk's helm and build-tool,
# images.mk's image repository and CA bundle).
#
# make release VERSION=x.y.z builds them all into RELEASE_DIR, bin/release/<VERSION>/
# (docs/releasing.md says what each is and how to publish them):
#
#   traffic-migration-image-<VERSION>.tar     the image IMAGE_REPOSITORY:<VERSION>, an OCI
#                                             archive built like make image's
#   traffic-migration-<VERSION>.tgz           the chart, helm package'd with version and
#                                             appVersion <VERSION> (its image's default tag)
#   traffic-migration-manifests-<VERSION>.yaml  manifests/ in one file, image pinned
#   kubectl-traffic_migration_<VERSION>_<os>_<arch>.tar.gz  the kubectl plugin, one per
#                                             RELEASE_PLATFORMS, with the LICENSE and its
#                                             completion for kubectl,
#                                             kubectl_complete-traffic_migration (hack/)
#   traffic-migration.yaml                    the krew plugin manifest of those archives
#   SHA256SUMS                                the checksums of all of the above
#
# Every binary is built as make build builds them (static, trimmed, LDFLAGS with
# VERSION, so `traffic-migration version` prints it). What is assembled from them (the
# plugin archives, the manifests' file, the krew manifest, the checksums) is written by
# hack/release, a Go program with its unit tests, the same way on every machine: the
# archives are reproducible (owner 0:0, mtime RELEASE_MTIME, the last commit's time).
# The krew manifest is checked by krew's own validator
# (sigs.k8s.io/krew/cmd/validate-krew-manifest, pinned in hack/tools/krew and built
# into the tools cache like the test bed's programs), the packaged chart by rendering
# it with helm and finding every image pinned to VERSION.

# Before it builds anything, make release sets the release's version where the
# checkout names it (make release-bump, with hack/release bump): the chart's version
# and appVersion (charts/traffic-migration/Chart.yaml; the appVersion is the image's
# default tag), the image's tag in manifests/deployment.yaml, and the chart's README
# (make chart-docs), so that a checkout of the release's tag and the release agree.
# In a checkout of the tag this changes nothing; elsewhere it leaves the change in the
# work tree, to commit and tag. RELEASE_BUMP=false leaves the checkout as it is (make
# test-release, which packages the chart's own appVersion).
RELEASE_BUMP ?= true
RELEASE_BUMPED_FILES := charts/traffic-migration/Chart.yaml manifests/deployment.yaml manifests/addon-manager.yaml

# RELEASE_DIR holds the release's files, and nothing else; RELEASE_WORK_DIR what
# builds them (the binaries, the image's build context, hack/release's binary).
RELEASE_DIR = $(BIN_DIR)/release/$(VERSION)
RELEASE_WORK_DIR = $(BIN_DIR)/release-work/$(VERSION)
# RELEASE_PLATFORMS are the os/arch pairs of the kubectl plugin's archives, each a
# cross-compile (make release RELEASE_PLATFORMS=linux/amd64 builds one).
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# RELEASE_URL_BASE is where the krew manifest says the plugin's archives are
# downloaded from: the assets of the GitHub release of the tag v<VERSION>.
RELEASE_URL_BASE ?= https://github.com/open-cluster-management-io/traffic-migration/releases/download/v$(VERSION)
# RELEASE_IMAGE is the image's reference; it is built for this machine's architecture.
RELEASE_IMAGE = $(IMAGE_REPOSITORY):$(VERSION)
RELEASE_IMAGE_ARCH ?= $(shell $(GO) env GOHOSTARCH)
# RELEASE_MTIME is the time of every file in the plugin's archives: the last commit's.
RELEASE_MTIME ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
RELEASE_TOOL = $(RELEASE_WORK_DIR)/release

KREW_VERSION := $(call version-of,krew,sigs.k8s.io/krew)
KREW_VALIDATOR := $(TOOLS_DIR)/validate-krew-manifest-$(KREW_VERSION)

# make release needs a VERSION of its own (not build.mk's git describe), a release
# version: said before anything is built.
ifneq ($(filter release release-bump,$(MAKECMDGOALS)),)
ifeq ($(origin VERSION),file)
$(error make release needs the release's version: make release VERSION=x.y.z)
endif
# (make 4.3 passes $(shell) none of its exported variables: GOTOOLCHAIN is given.)
RELEASE_VERSION_ERROR := $(shell $(if $(GOTOOLCHAIN),GOTOOLCHAIN=$(GOTOOLCHAIN)) $(GO) run ./hack/release check-version '$(VERSION)' 2>&1 | sed '/^exit status/d')
ifneq ($(RELEASE_VERSION_ERROR),)
$(error $(RELEASE_VERSION_ERROR))
endif
endif

##@ Release (hack/make/release.mk)

# The image first (its binaries are also the plugin's for linux/RELEASE_IMAGE_ARCH),
# then the plugin for each platform, the chart, the manifests, the krew manifest, and
# the checksums of it all last.
.PHONY: release
release: $(HELM) $(KREW_VALIDATOR) | $(CA_BUNDLE) ## Build the files of a release into bin/release/VERSION: make release VERSION=x.y.z (image archive, chart, manifests, kubectl plugin archives, krew manifest, SHA256SUMS), after make release-bump.
	@rm -rf $(RELEASE_DIR) $(RELEASE_WORK_DIR) && mkdir -p $(RELEASE_DIR) $(RELEASE_WORK_DIR)/image-context
	@test -z "$$(git status --porcelain 2>/dev/null)" || echo ">> warning: the work tree has changes that are not committed: the release is built from them"
	$(GO) build -o $(RELEASE_TOOL) ./hack/release
	@if [ "$(RELEASE_BUMP)" = true ]; then $(MAKE) --no-print-directory release-bump VERSION=$(VERSION); fi
	@echo ">> building the image $(RELEASE_IMAGE) (linux/$(RELEASE_IMAGE_ARCH))"
	GOOS=linux GOARCH=$(RELEASE_IMAGE_ARCH) $(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $(RELEASE_WORK_DIR)/image-context/ ./cmd/traffic-migration ./cmd/traffic-migration-agent
	@cp $(CA_BUNDLE) $(RELEASE_WORK_DIR)/image-context/ca-certificates.crt
	hack/image.sh $(RELEASE_IMAGE) Dockerfile $(RELEASE_WORK_DIR)/image-context $(RELEASE_DIR)/traffic-migration-image-$(VERSION).tar VERSION=$(VERSION)
	@for platform in $(RELEASE_PLATFORMS); do \
		os=$${platform%/*} arch=$${platform#*/} && dir=$(RELEASE_WORK_DIR)/$${os}_$$arch && mkdir -p $$dir && \
		if [ "$$platform" = linux/$(RELEASE_IMAGE_ARCH) ]; then \
			cp $(RELEASE_WORK_DIR)/image-context/traffic-migration $$dir/kubectl-traffic_migration; \
		else \
			echo ">> building kubectl-traffic_migration for $$platform" && start=$$(date +%s) && \
			GOOS=$$os GOARCH=$$arch $(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $$dir/kubectl-traffic_migration ./cmd/traffic-migration && \
			echo ">> built it in $$(( $$(date +%s) - start )) s"; \
		fi && \
		$(RELEASE_TOOL) archive -o $(RELEASE_DIR)/kubectl-traffic_migration_$(VERSION)_$${os}_$$arch.tar.gz -mtime $(RELEASE_MTIME) \
			kubectl-traffic_migration=$$dir/kubectl-traffic_migration LICENSE=LICENSE \
			kubectl_complete-traffic_migration=hack/kubectl_complete-traffic_migration || exit 1; \
	done
	$(HELM) package charts/traffic-migration --version $(VERSION) --app-version $(VERSION) --destination $(RELEASE_DIR)
	$(HELM) template traffic-migration $(RELEASE_DIR)/traffic-migration-$(VERSION).tgz | $(RELEASE_TOOL) check-pinned -image $(IMAGE_REPOSITORY) -version $(VERSION)
	$(RELEASE_TOOL) manifests -kustomization manifests/kustomization.yaml -image $(IMAGE_REPOSITORY) -version $(VERSION) -o $(RELEASE_DIR)/traffic-migration-manifests-$(VERSION).yaml
	$(RELEASE_TOOL) krew -version $(VERSION) -url-base $(RELEASE_URL_BASE) -o $(RELEASE_DIR)/traffic-migration.yaml $(RELEASE_DIR)/kubectl-traffic_migration_*.tar.gz
	$(KREW_VALIDATOR) -manifest $(RELEASE_DIR)/traffic-migration.yaml -skip-install 2>&1 | sed 's/^/   krew: /'
	$(RELEASE_TOOL) checksums $(RELEASE_DIR)
	@echo ">> the release $(VERSION) is in $(RELEASE_DIR):" && cd $(RELEASE_DIR) && ls -l | sed 1d

# Only the files that the bump changes are named, each once; chart-docs rewrites the
# README only where it differs.
.PHONY: release-bump
release-bump: $(HELM_DOCS) ## Set the chart's version and appVersion, the image tag of manifests/' Deployments and the chart's README to VERSION: make release-bump VERSION=x.y.z (make release does it first).
	$(GO) run ./hack/release bump -version $(VERSION) -chart charts/traffic-migration/Chart.yaml -image $(IMAGE_REPOSITORY) $(filter-out %Chart.yaml,$(RELEASE_BUMPED_FILES))
	@$(MAKE) --no-print-directory chart-docs
	@if [ -n "$$(git status --porcelain -- $(RELEASE_BUMPED_FILES) charts/traffic-migration/README.md 2>/dev/null)" ]; then \
		echo ">> the checkout now names $(VERSION) (git diff -- $(RELEASE_BUMPED_FILES) charts/traffic-migration/README.md): commit it with the CHANGELOG and tag that commit v$(VERSION)"; fi

# krew's own validator of plugin manifests, from hack/tools/krew.
$(KREW_VALIDATOR):
	$(call build-tool,krew,sigs.k8s.io/krew/cmd/validate-krew-manifest,$@)
