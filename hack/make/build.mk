# build.mk: how this project's own Go code is built (included by the Makefile).
#
# Every build but the race detector's is static and trimmed, with the same flags
# (GO_BUILD and GO_BUILD_FLAGS), so that verify's go vet, make build, the images, the
# end-to-end tests, the benchmarks and the demo compile each package once into the
# build cache. The race detector needs cgo: the unit and integration tests, which run
# the product's code in-process, build apart with GO_TEST_FLAGS. The end-to-end tests
# run the product as separate programs and pods, and the benchmarks measure it, built
# without it (GO_BUILD_TEST_FLAGS). -w leaves DWARF out of the test binaries (each
# links a second faster); stack traces keep their files and lines. -trimpath keeps
# the checkout's folder out of every build, so that a fresh clone elsewhere (as CI
# makes) finds the race detector's builds in the cache instead of compiling them
# again (2026-12-06: the unit tests took 165 s in a new folder).

GO ?= go
# GO_TOOLCHAIN is the Go release that builds, vets and tests this module, whatever Go
# the machine has: the go command fetches it from the module proxy on first use
# (GOTOOLCHAIN). It is at least the go line of go.mod, the oldest release without a
# known vulnerability that our binaries reach (make vulncheck). The test bed's programs
# build with the machine's own Go (TOOLS_GOTOOLCHAIN in tools.mk): we ship none of them.
GO_TOOLCHAIN ?= go1.27.3
export GOTOOLCHAIN := $(GO_TOOLCHAIN)
BIN_DIR ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# REVISION is the commit the binaries are built from.
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
# The version is the project's (pkg/version: traffic-migration version, the User-Agent)
# and client_golang's version collector's (github.com/prometheus/common/version: the
# manager's traffic_migration_build_info), with the commit; not the branch nor the build
# time, so that a commit builds the same bytes wherever it is built.
PROMETHEUS_VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -s -w -X open-cluster-management.io/traffic-migration/pkg/version.Version=$(VERSION) \
	-X $(PROMETHEUS_VERSION_PKG).Version=$(VERSION) -X $(PROMETHEUS_VERSION_PKG).Revision=$(REVISION)
GO_BUILD := CGO_ENABLED=0 $(GO)
GO_BUILD_FLAGS := -trimpath
GO_TEST_FLAGS ?= -race -trimpath -ldflags=-w
GO_BUILD_TEST_FLAGS ?= $(GO_BUILD_FLAGS) -ldflags=-w

# make install-kubectl-plugin installs the binary into PLUGIN_DIR.
PLUGIN_DIR ?= $(HOME)/.local/bin

# uPlot, the chart library the dashboard embeds; make update-uplot replaces its files.
UPLOT_VERSION ?= 1.6.32
UPLOT_DIR := pkg/cmd/dashboard/assets/vendor/uplot
