# images.mk: the images (included by the Makefile).
#
# The images are built from contexts staged under bin/, with only what each COPYs:
# no registry is reached (every Dockerfile starts FROM scratch). hack/image.sh finds
# podman or docker, installs podman as root when there is neither, and saves each image
# as an OCI archive in IMAGES_DIR, which the test bed's nodes import. make image (in the
# Makefile) builds the product's image and the pause image; the rules below build the
# test bed's other images and the release the lifecycle test upgrades from. The
# references the images carry are the TESTBED_*_IMAGE variables of tests.mk, which the
# tests read too.

# IMAGE is the product's image as make image tags it: the repository the chart and
# manifests/ name, with the chart's appVersion, the release they run by default (no
# image we ship is named latest).
IMAGE_REPOSITORY := quay.io/open-cluster-management/traffic-migration
APP_VERSION := $(shell awk '$$1 == "appVersion:" {gsub(/"/, "", $$2); print $$2}' charts/traffic-migration/Chart.yaml)
IMAGE ?= $(IMAGE_REPOSITORY):$(APP_VERSION)
# PAUSE_IMAGE is the test bed's pod sandbox image, built here like IMAGE.
PAUSE_IMAGE ?= localhost/traffic-migration/pause:latest
# IMAGES_DIR holds the images as OCI archives, which the test bed's nodes import.
IMAGES_DIR := $(abspath $(BIN_DIR))/images
# CA_BUNDLE is the CA certificates the image carries (Debian's ca-certificates, which
# make deps installs: hack/make/deps.mk).
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt

# UPGRADE_FROM is the release that the lifecycle test (test/lifecycle) upgrades from:
# the commit before the check history, whose chart still shipped its CRD in crds/.
# make image-upgrade-from builds that commit's binaries with its own Makefile into
# UPGRADE_FROM_DIR, with its chart beside them, and its image with today's Dockerfile
# (that commit's Dockerfile builds in a golang base image, and nothing here pulls).
UPGRADE_FROM ?= fc6ebfa
UPGRADE_FROM_DIR := $(abspath $(BIN_DIR))/upgrade-from-$(UPGRADE_FROM)

##@ Test bed images (hack/make/images.mk)

.PHONY: testbed-node-images
testbed-node-images: ## Build the test image of the nodes' test (an in-cluster client) into TESTBED_IMAGES_DIR, like make image.
	@rm -rf $(BIN_DIR)/incluster-context && mkdir -p $(BIN_DIR)/incluster-context
	$(GO_BUILD) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $(BIN_DIR)/incluster-context/incluster ./test/images/incluster
	hack/image.sh $(TESTBED_INCLUSTER_IMAGE) test/images/incluster/Dockerfile $(BIN_DIR)/incluster-context $(IMAGES_DIR)/incluster.tar

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
