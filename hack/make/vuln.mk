# vuln.mk: the vulnerability check of make verify (included by the Makefile, after
# tools.mk, whose cache and build-tool it uses).
#
# make vulncheck runs govulncheck (golang.org/x/vuln) offline on the programs we ship,
# against the Go vulnerability database's own OSV entries, which the module
# golang.org/x/vulndb carries in data/osv and the Go module proxy serves: vuln.go.dev is
# never reached. Both modules are pinned in hack/tools/vuln/go.mod. govulncheck is built
# into the tools cache like the test bed's programs; it reads data/osv in the module
# cache as it is (a -db file:// folder without index/modules.json is read as a folder
# of OSV entries and indexed in memory), so no database is built. To refresh the
# entries, bump golang.org/x/vulndb (docs/development.md, "The vulnerability check").

VULN_VERSION := $(call version-of,vuln,golang.org/x/vuln)
VULNDB_VERSION := $(call version-of,vuln,golang.org/x/vulndb)
# govulncheck reads the code with go/types: it builds with GO_TOOLCHAIN, as the code
# generators do (tools.mk).
GOVULNCHECK := $(TOOLS_DIR)/$(GO_TOOLCHAIN)/govulncheck-$(VULN_VERSION)
# What govulncheck analyses: the mains of the two binaries we ship, so that a finding
# is a vulnerable function that our binaries can call, and hack/release, which writes
# the release's archives, krew manifest and checksums. ./... would also take every
# exported function of pkg/ and the test bed's programs as entry points.
VULNCHECK_PACKAGES ?= ./cmd/traffic-migration ./cmd/traffic-migration-agent ./hack/release

##@ Vulnerabilities (hack/make/vuln.mk)

# govulncheck's default, symbol-level analysis: it fails (exit status 3) only on a
# vulnerable function that VULNCHECK_PACKAGES can call, and counts the vulnerable
# packages that are linked but not called, and the vulnerable modules only required,
# without failing. It analyses the code as make build compiles it (CGO_ENABLED=0), and
# the standard library as of the Go that builds it: the go of GO, first on its PATH. A
# finding there is fixed by building with a newer Go, which the last line says.
.PHONY: vulncheck
vulncheck: $(GOVULNCHECK) ## Fail on known vulnerable code the binaries can call: govulncheck, offline, against golang.org/x/vulndb (hack/tools/vuln).
	@echo ">> govulncheck $(VULN_VERSION), database golang.org/x/vulndb@$(VULNDB_VERSION) (offline): $(VULNCHECK_PACKAGES)"
	@start=$$(date +%s); out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
		db=$$(cd hack/tools/vuln && $(GO) mod download golang.org/x/vulndb && $(GO) list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv; \
		test -f "$$db/GO-2020-0001.json" || { echo "golang.org/x/vulndb@$(VULNDB_VERSION) has no OSV entries in data/osv"; exit 1; }; \
		export PATH="$$($(GO) env GOROOT)/bin:$$PATH"; \
		CGO_ENABLED=0 $(GOVULNCHECK) -db "file://$$db" $(VULNCHECK_PACKAGES) | tee "$$out" || { status=$$?; \
			if grep -q '^  Standard library$$' "$$out"; then \
				echo ">> the standard library's findings are those of $$(go env GOVERSION), which builds the binaries: build with a Go at their 'Fixed in' version or later (GO=<that go>, or GOTOOLCHAIN=go1.x.y, which the go command fetches from the module proxy)"; \
			fi; exit $$status; }; \
		echo ">> govulncheck: no vulnerable function called, in $$(( $$(date +%s) - start )) s"

$(GOVULNCHECK):
	$(call build-tool,vuln,golang.org/x/vuln/cmd/govulncheck,$@,,,GOTOOLCHAIN=$(GO_TOOLCHAIN))
