# kubectl gitops-preflight
#
#   make demo           the stories on local clusters: install (report, --fix, helm install, --post), upgrade 0.26 → 0.30, a runtime Argo CD syncs (a commit judged), then fleet
#                       (--all-contexts on two clusters, --bundle and replay; about six minutes once built, Argo CD's own sync most of it)
#   make test           vet, lint, unit tests, fuzz targets and end-to-end tests, 4 at a time (builds the control plane on first use);
#                       a line per phase, per end-to-end test and at least one a minute (full output: bin/unit.log, bin/e2e.log),
#                       then a table of each phase's seconds and the ten slowest tests
#   make lint           golangci-lint (pinned, built once per machine into the tool cache) with .golangci.yaml
#   make fuzz           each fuzz target for FUZZTIME (default 3000x: executions), from its checked-in seeds
#   make build          bin/kubectl-gitops_preflight
#   make install        copy the binary to $(go env GOPATH)/bin
#   make dist           release archives, the container image (an OCI layout tar), checksums.txt, the krew manifest and
#                       release-notes.md (the image pinned by digest) in dist/
#   make docs           regenerate docs/checks.md and the tables of the README and docs/*.md from docs/checks/*.md, the registry and the flags
#   make fixtures       download the upstream manifests and charts the tests, demo and bench read into .fixtures/upstream
#                       (checked against hack/fixtures/fixtures.lock.json; not needed where ../shared/fixtures/upstream exists)
#   make test-binaries  build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok once per machine into the
#                       tool cache (~/.cache/kubectl-gitops-preflight on Linux), linked as bin/k8s
#   make distclean      make clean, and everything built or fetched for the tests and the demo: bin/, .fixtures/ and the
#                       tool cache (the control plane, golangci-lint, the Helm 3 and 4 clients; shared by every clone)
#   make bench          Go benchmarks, then time the plugin on a large seeded cluster (not part of make test; BENCH_FLAGS=-runs 7 ...)

# bash: the recipes use pipefail and $${PIPESTATUS}.
SHELL     := bash
GO        ?= go
BIN       := bin
# Each phase of make test runs under hack/progress.sh: a line when it starts
# and ends, and one a minute while it runs.
PROGRESS  := hack/progress.sh
PLUGIN    := $(BIN)/kubectl-gitops_preflight
K8S_BIN   := $(BIN)/k8s
# The tools make builds from the Go module proxy (the test control plane,
# golangci-lint; the tests build Helm 3 and 4 there too) live in the user cache
# directory (internal/toolcache: $$XDG_CACHE_HOME or ~/.cache on Linux,
# ~/Library/Caches on macOS), each under its version, so that every clone on
# the machine shares one build of each.
TOOL_CACHE := $(shell $(GO) run ./hack/toolcache)
# The test control plane: kube-apiserver, kube-controller-manager and
# kube-scheduler from k8s.io/kubernetes and etcd from go.etcd.io/etcd/server/v3
# (one module set, hack/tools/go.mod), and kwok (hack/tools/kwok/go.mod): the
# versions are those the modules require.
K8S_VERSION  := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2 }' hack/tools/go.mod)
ETCD_VERSION := $(shell awk '$$1 == "go.etcd.io/etcd/server/v3" { print $$2 }' hack/tools/go.mod)
KWOK_VERSION := $(shell awk '$$1 == "sigs.k8s.io/kwok" || ($$1 == "require" && $$2 == "sigs.k8s.io/kwok") { print $$NF }' hack/tools/kwok/go.mod)
# Built once per machine into K8S_ASSETS; bin/k8s in the checkout is a link to
# it (what `go test ./test/e2e/...`, make bench and the demo read).
K8S_ASSETS   := $(TOOL_CACHE)/control-plane-k8s-$(K8S_VERSION)-etcd-$(ETCD_VERSION)-kwok-$(KWOK_VERSION)

# A v-semver (krew and the Helm plugin need one): the nearest vX.Y.Z tag, else v0.0.0-dev.
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG       := github.com/gitops-preflight/kubectl-gitops-preflight
# vet, golangci-lint's type information, the plugin, hack/testreport, the
# unit tests run without the race detector and the end-to-end test binary
# are built with the same settings
# (no cgo, -trimpath), so that the packages vet compiles first are the ones
# the others link: on a new machine each package is compiled once for all of
# them, and a second clone at another path compiles none again (without
# -trimpath the build cache keys a package by its folder). The race
# detector needs cgo: the unit tests under it are built apart, with
# -trimpath too, and so are the fuzz targets' instrumented builds.
SHARED_ENV   := env CGO_ENABLED=0
SHARED_BUILD := $(SHARED_ENV) $(GO)
SHARED_FLAGS := -trimpath
# The test binaries (unit, fuzz, end-to-end) are linked without the symbol
# table and DWARF (-s -w): a stack trace and the race detector's reports
# read the pc-line table, which stays; each race-instrumented test binary
# links in less CPU (8.6 CPU-s instead of 13.8 for ./checks), on
# a new machine about forty of them. The compiled packages are the same.
TEST_FLAGS   := $(SHARED_FLAGS) -ldflags="-s -w"
LDFLAGS   := -s -w -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT) -X $(PKG)/internal/version.Date=$(DATE)

.PHONY: all build install test unit fuzz e2e test-binaries argocd demo bench lint fmt vet clean distclean dist docs fixtures

all: build

build:
	@$(PROGRESS) "build the plugin ($(PLUGIN), $(VERSION) $(COMMIT))" $(SHARED_BUILD) build $(SHARED_FLAGS) -ldflags '$(LDFLAGS)' -o $(PLUGIN) ./cmd/kubectl-gitops_preflight

install: build
	install -m 0755 $(PLUGIN) "$$($(GO) env GOPATH)/bin/kubectl-gitops_preflight"
	@echo "installed: kubectl gitops-preflight --help"

# Cross-compiled archives (+ completion helper, LICENSE), checksums.txt and
# dist/gitops-preflight.yaml rendered from .krew.yaml and checked with krew's rules.
# With SIGN_KEYRING (an OpenPGP secret keyring holding the release key; its
# passphrase in the variable SIGN_PASSPHRASE_ENV names) each archive also gets
# a Helm 4 provenance file <archive>.prov (hack/sign, Helm's provenance code).
# The container image (linux/amd64 and linux/arm64: the static plugin, a static
# Helm client built from the Go module proxy, CA certificates, a non-root user;
# no container daemon, FROM scratch) is written as an OCI image layout tar, and
# dist/release-notes.md pins it by digest (hack/dist/image.go, internal/image).
SIGN_KEYRING        ?=
SIGN_PASSPHRASE_ENV ?=
dist:
	$(GO) run ./hack/dist -version '$(VERSION)' -ldflags '$(LDFLAGS)' -out dist \
		-mtime "$$(git log -1 --format=%ct 2>/dev/null || echo 0)" -revision "$$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
		-sign-keyring '$(SIGN_KEYRING)' -sign-passphrase-env '$(SIGN_PASSPHRASE_ENV)'

# docs/checks.md is generated: one section per registered check from docs/checks/<id>.md;
# so are the check and flag tables of the README and docs/*.md, between their markers.
docs:
	$(GO) run ./hack/docgen -out docs/checks.md -pages 'README.md,docs/*.md'

# The upstream fixtures, into the checkout's cache (internal/fixtures says
# where the tests look). FIXTURES_FLAGS: -mirror URL, -base-url URL, -jobs N.
FIXTURES_FLAGS ?=
fixtures:
	$(GO) run ./hack/fixtures fetch $(FIXTURES_FLAGS)

# Each tool is built into a temporary file beside its place and renamed
# into it: a build that stops half-way leaves nothing a later make takes for
# built, and two clones building at once each rename a whole binary.
$(K8S_ASSETS)/etcd:
	@mkdir -p $(K8S_ASSETS)
	@echo "building etcd $(ETCD_VERSION) (once per machine; cached in $(K8S_ASSETS))"
	@$(PROGRESS) "build etcd" bash -c 'cd hack/tools && $(GO) build -o $@.tmp.$$$$ go.etcd.io/etcd/server/v3 && mv -f $@.tmp.$$$$ $@'

# kube-apiserver, kube-controller-manager and kube-scheduler: one module set
# (hack/tools/go.mod), one version stamp.
K8S_MINOR   := $(word 2,$(subst ., ,$(K8S_VERSION)))
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(K8S_MINOR)

$(K8S_ASSETS)/kube-apiserver:
	@mkdir -p $(K8S_ASSETS)
	@echo "building kube-apiserver $(K8S_VERSION) (once per machine, ~5-8 minutes on 2 cores; cached in $(K8S_ASSETS))"
	@$(PROGRESS) "build kube-apiserver" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $@.tmp.$$$$ k8s.io/kubernetes/cmd/kube-apiserver && mv -f $@.tmp.$$$$ $@"

$(K8S_ASSETS)/kube-controller-manager:
	@mkdir -p $(K8S_ASSETS)
	@echo "building kube-controller-manager $(K8S_VERSION) (once per machine; cached in $(K8S_ASSETS))"
	@$(PROGRESS) "build kube-controller-manager" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $@.tmp.$$$$ k8s.io/kubernetes/cmd/kube-controller-manager && mv -f $@.tmp.$$$$ $@"

$(K8S_ASSETS)/kube-scheduler:
	@mkdir -p $(K8S_ASSETS)
	@echo "building kube-scheduler $(K8S_VERSION) (once per machine; cached in $(K8S_ASSETS))"
	@$(PROGRESS) "build kube-scheduler" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $@.tmp.$$$$ k8s.io/kubernetes/cmd/kube-scheduler && mv -f $@.tmp.$$$$ $@"

# kwok ("Kubernetes WithOut Kubelet") keeps the tests' simulated nodes Ready and moves
# scheduled pods through their phases; its own module (hack/tools/kwok/go.mod).
$(K8S_ASSETS)/kwok:
	@mkdir -p $(K8S_ASSETS)
	@echo "building kwok $(KWOK_VERSION) (once per machine; cached in $(K8S_ASSETS))"
	@$(PROGRESS) "build kwok" bash -c 'cd hack/tools/kwok && $(GO) build -o $@.tmp.$$$$ sigs.k8s.io/kwok/cmd/kwok && mv -f $@.tmp.$$$$ $@'

K8S_TOOLS := $(addprefix $(K8S_ASSETS)/,etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# Argo CD's application controller and repo-server, for the end-to-end tests
# that sync with Argo CD itself: the module hack/tools/argocd (its main runs
# as the component its name says), at the version it requires, with the
# version stamped as Argo CD's Makefile does. Argo CD v3.6 needs Go 1.27:
# GOTOOLCHAIN=auto takes that toolchain (hack/tools/argocd/go.mod) from the
# Go module proxy when the machine's go is older.
ARGOCD_VERSION := $(shell awk '$$1 == "github.com/argoproj/argo-cd/v3" || ($$1 == "require" && $$2 == "github.com/argoproj/argo-cd/v3") { print $$NF }' hack/tools/argocd/go.mod)
ARGOCD_DIR     := $(TOOL_CACHE)/argocd-sync-$(ARGOCD_VERSION)
ARGOCD         := $(ARGOCD_DIR)/argocd
ARGOCD_COMMON  := github.com/argoproj/argo-cd/v3/common
$(ARGOCD):
	@mkdir -p $(ARGOCD_DIR)
	@echo "building Argo CD $(ARGOCD_VERSION) application controller and repo-server (once per machine; cached in $(ARGOCD_DIR))"
	@$(PROGRESS) "build argocd" bash -c "cd hack/tools/argocd && CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=auto $(GO) build \
		-ldflags '-X $(ARGOCD_COMMON).version=$(ARGOCD_VERSION:v%=%) -X $(ARGOCD_COMMON).gitTreeState=clean' \
		-o $@.tmp.$$$$ . && mv -f $@.tmp.$$$$ $@"

argocd: $(ARGOCD)

# bin/k8s: a link to the machine's build (a folder of an older checkout's
# own build is replaced by it).
test-binaries: $(K8S_TOOLS)
	@mkdir -p $(BIN)
	@if [ -d $(K8S_BIN) ] && [ ! -L $(K8S_BIN) ]; then rm -rf $(K8S_BIN); fi
	@ln -sfn $(K8S_ASSETS) $(K8S_BIN)

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@$(PROGRESS) vet $(SHARED_BUILD) vet $(SHARED_FLAGS) ./...

# hack/testreport turns go test -json into what the terminal shows and
# records each top-level test's time for the summary that ends make test.
TESTREPORT := $(BIN)/testreport
TEST_TIMES := $(BIN)/test-times.tsv
$(TESTREPORT): $(wildcard hack/testreport/*.go)
	@mkdir -p $(BIN)
	@$(SHARED_BUILD) build $(SHARED_FLAGS) -o $@ ./hack/testreport

# The terminal gets "ok <package>" as each package passes and the whole
# output of a test that fails; bin/unit.log all of it.
# UNIT_WITHOUT_RACE are the tests that render the real chart lines dozens of
# times and start no goroutine of their own: under the race detector each
# render of the 2 MB chart takes seconds (internal/chart alone came to 8
# minutes, near go test's 10-minute limit), so they run in a second go test
# without -race; the chart package's concurrency (Start, Pending) stays
# under -race in its other tests.
UNIT_WITHOUT_RACE := ^(TestChartWorkloadValues|TestShortcutKeysAreRead|TestIgnoredValuesByRender|TestIgnoredValuesReadThroughB64enc|TestReleaseShapeOfTheMultiRuntimeValues|TestLoadLocalAndRender|TestKeysOnEveryChartLine|TestSplitDocumentsAsHelm|TestImagePlanOnEveryChartLine|TestIgnoredValuesIngressShortcuts|TestMarkersThroughTheEngineAsThroughTheInstall|TestRulesReadFromTheRenderedHooks|TestImagePullSecretsOnEveryChartLine|TestEgressConfigOnEveryChartLine)$$
unit: $(TESTREPORT)
	@$(PROGRESS) "unit tests (full output: $(BIN)/unit.log)" bash -c 'set -o pipefail; \
		{ $(GO) test $(TEST_FLAGS) -json -race -count=1 -skip "$(UNIT_WITHOUT_RACE)" $$($(GO) list ./... | grep -v /test/e2e); race=$$?; \
		  $(SHARED_BUILD) test $(TEST_FLAGS) -json -count=1 -run "$(UNIT_WITHOUT_RACE)" ./internal/chart ./checks; plain=$$?; \
		  exit $$((race | plain)); } 2>&1 \
		| $(TESTREPORT) stream -mode unit -log $(BIN)/unit.log -times $(TEST_TIMES)'

# The end-to-end tests: E2E_PARALLEL at a time, each on control planes of its
# own, in the suite's slots (go test -parallel; testcluster.Parallel admits the
# long tests first), after the few that run alone; chosen from the suite's wall
# time measured on 2 cores (docs/development.md). E2E_TIMEOUT keeps room above
# the measured suite: the last measurement ran past 30 minutes (see
# docs/development.md), so it is 60m until the suite is brought back.
# The terminal gets each test's RUN and PASS/FAIL lines, the tests' log lines
# (file.go:line: ..., with the test's name while tests run in parallel) and
# the Helm builds; bin/e2e.log all of it. E2E_FLAGS adds go test flags
# (E2E_FLAGS='-shuffle on -run TestGate').
E2E_PARALLEL ?= 4
E2E_TIMEOUT  ?= 60m
E2E_FLAGS    ?=
e2e: test-binaries $(ARGOCD) build $(TESTREPORT)
	@$(PROGRESS) "end-to-end tests (full output: $(BIN)/e2e.log)" bash -c 'set -o pipefail; \
		KUBEBUILDER_ASSETS=$(K8S_ASSETS) ARGOCD_E2E_BIN=$(ARGOCD) PREFLIGHT_BIN=$(CURDIR)/$(PLUGIN) $(SHARED_BUILD) test $(TEST_FLAGS) -json -count=1 \
			-parallel $(E2E_PARALLEL) -timeout $(E2E_TIMEOUT) $(E2E_FLAGS) ./test/e2e/... 2>&1 \
		| $(TESTREPORT) stream -mode e2e -log $(BIN)/e2e.log -times $(TEST_TIMES)'

# Fuzz targets (go test -fuzz takes one target of one package at a time): the
# seeds in each target run with the unit tests; here each target also
# explores for FUZZTIME, a number of executions (3000x: 1-5 s each here)
# rather than a duration: when a duration runs out while the fuzzing engine
# is minimizing a new input, go test fails the target with "context deadline
# exceeded" though nothing failed (seen on a loaded machine).
FUZZTIME ?= 3000x
FUZZ_TARGETS := \
	./internal/plan:FuzzLoad \
	./internal/plan:FuzzSet \
	./internal/cluster:FuzzDecodeHelmRelease \
	./internal/probe:FuzzAppendPEM \
	./internal/redact:FuzzString \
	./internal/chart:FuzzSplitDocuments \
	./internal/versionof:FuzzHelmOutput \
	./internal/versionof:FuzzServer

# One phase in make test's table; a line per target.
fuzz:
	@$(PROGRESS) "fuzz ($(words $(FUZZ_TARGETS)) targets, $(FUZZTIME) each)" bash -c 'set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		PROGRESS_LOG= $(PROGRESS) "fuzz $$name ($$pkg)" $(GO) test $(TEST_FLAGS) -run "^\$$" -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done'

# golangci-lint, pinned, built once per machine from the Go module proxy into
# the tool cache by `go install ...@version` with GOBIN (into a temporary
# folder, then renamed): the project's go.mod is untouched. The linters and
# their rules are in .golangci.yaml.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT_DIR     := $(TOOL_CACHE)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOLANGCI_LINT         := $(GOLANGCI_LINT_DIR)/golangci-lint

$(GOLANGCI_LINT):
	@mkdir -p $(GOLANGCI_LINT_DIR)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) (once per machine, a few minutes; cached in $(GOLANGCI_LINT_DIR))"
	@GOBIN=$(GOLANGCI_LINT_DIR)/tmp.$$$$ $(PROGRESS) "build golangci-lint" bash -c '$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) \
		&& mv -f $$GOBIN/golangci-lint $@ && rmdir $$GOBIN'

# It lints with the shared build settings (no cgo, -trimpath through
# GOFLAGS): the dependencies' export data it asks go list for are then the
# packages vet compiled, not a second build of them (on a new machine lint
# took 163 s after vet with its own settings, 23 s with these).
lint: $(GOLANGCI_LINT)
	@GOFLAGS="$(SHARED_FLAGS) $$GOFLAGS" $(PROGRESS) lint $(SHARED_ENV) $(GOLANGCI_LINT) run ./...

# make test: its phases, then (whether they passed or not) the table of
# each phase's seconds and of the ten slowest tests. hack/progress.sh
# appends each phase to PROGRESS_LOG.
TEST_PHASES := $(BIN)/test-phases.tsv
test:
	@mkdir -p $(BIN) && rm -f $(TEST_PHASES) $(TEST_TIMES)
	@PROGRESS_LOG=$(CURDIR)/$(TEST_PHASES) $(MAKE) --no-print-directory vet lint unit fuzz e2e; rc=$$?; \
		$(MAKE) --no-print-directory $(TESTREPORT) >/dev/null && \
		$(TESTREPORT) summary -phases $(TEST_PHASES) -times $(TEST_TIMES) -top 10; exit $$rc

# make bench: first the Go benchmarks of the per-object work at that scale
# (BENCH_GO_PKGS; make test compiles them but never runs them), then, for each
# size of -scales (1,2,4), fills a fresh test control plane with 5,000 nodes,
# 30,000 bound pods, 20,000 Services, 10,000 Deployments... times the factor
# and writes bench/results.md, bench/sweep.json, the charts bench/sweep.svg and
# bench/sweep-rss.svg (hack/plot) and the bench block of docs/performance.md (hack/bench).
BENCH_GO_PKGS ?= ./internal/cluster ./checks ./internal/chart
bench: test-binaries build
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_GO_PKGS)
	$(GO) run ./hack/bench -assets $(K8S_ASSETS) -plugin $(abspath $(PLUGIN)) -out bench/results.md -readme docs/performance.md $(BENCH_FLAGS)

# The Argo CD story runs Argo CD's application controller and repo-server
# ($(ARGOCD), built once per machine like the control plane).
demo: test-binaries $(ARGOCD) build
	@KUBEBUILDER_ASSETS=$(K8S_ASSETS) ARGOCD_E2E_BIN=$(ARGOCD) $(GO) run ./hack/demo -plugin $(CURDIR)/$(PLUGIN)

clean:
	rm -rf $(PLUGIN) dist

# Everything the tests and the demo built: bin/ (the plugin, the logs) and
# the tool cache (the control plane, golangci-lint, the Helm 3 and 4
# clients), which every clone on the machine shares.
distclean: clean
	rm -rf $(BIN) .fixtures
	@if [ -n "$(TOOL_CACHE)" ]; then echo "rm -rf $(TOOL_CACHE)"; rm -rf "$(TOOL_CACHE)"; fi
