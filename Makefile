# kubectl gitops-preflight
#
#   make demo           the stories on local clusters: install (report, --fix, helm install, --post), upgrade 0.26 → 0.30, a runtime Argo CD syncs (a commit judged), then fleet
#                       (--all-contexts on two clusters, --bundle and replay; about two and a half minutes once built)
#   make test           vet, lint, unit tests, fuzz targets (5 s each) and end-to-end tests (builds the control plane on first use);
#                       a line per phase, per end-to-end test and at least one a minute (full e2e output: bin/e2e.log)
#   make lint           golangci-lint (pinned, built once into bin/) with .golangci.yaml
#   make fuzz           each fuzz target for FUZZTIME (default 3000x: executions), from its checked-in seeds
#   make build          bin/kubectl-gitops_preflight
#   make install        copy the binary to $(go env GOPATH)/bin
#   make dist           release archives, the container image (an OCI layout tar), checksums.txt, the krew manifest and
#                       release-notes.md (the image pinned by digest) in dist/
#   make docs           regenerate docs/checks.md and the tables of the README and docs/*.md from docs/checks/*.md, the registry and the flags
#   make fixtures       download the upstream manifests and charts the tests, demo and bench read into .fixtures/upstream
#                       (checked against hack/fixtures/fixtures.lock.json; not needed where ../shared/fixtures/upstream exists)
#   make test-binaries  build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into bin/k8s (cached)
#   make distclean      make clean, and everything built or fetched for the tests and the demo: bin/, .fixtures/ and the
#                       Helm 3 and 4 clients in the user cache (~/.cache/kubectl-gitops-preflight on Linux)
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
# The test control plane: kube-apiserver from k8s.io/kubernetes, etcd from
# go.etcd.io/etcd/server/v3, both built from the Go module proxy by hack/tools.
K8S_VERSION := v1.36.3

# A v-semver (krew and the Helm plugin need one): the nearest vX.Y.Z tag, else v0.0.0-dev.
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG       := github.com/gitops-preflight/kubectl-gitops-preflight
LDFLAGS   := -s -w -X $(PKG)/internal/version.Version=$(VERSION) -X $(PKG)/internal/version.Commit=$(COMMIT) -X $(PKG)/internal/version.Date=$(DATE)

.PHONY: all build install test unit fuzz e2e test-binaries demo bench lint fmt vet clean distclean dist docs fixtures

all: build

build:
	@echo "go build -o $(PLUGIN) ($(VERSION) $(COMMIT))"
	@$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(PLUGIN) ./cmd/kubectl-gitops_preflight

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

$(K8S_BIN)/etcd:
	@mkdir -p $(K8S_BIN)
	@echo "building etcd (once; cached in $(K8S_BIN))"
	@$(PROGRESS) "build etcd" bash -c 'cd hack/tools && $(GO) build -o $(CURDIR)/$(K8S_BIN)/etcd go.etcd.io/etcd/server/v3'

# kube-apiserver, kube-controller-manager and kube-scheduler: one module set
# (hack/tools/go.mod), one version stamp.
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36
# kwok ("Kubernetes WithOut Kubelet") keeps the tests' simulated nodes Ready and moves
# scheduled pods through their phases; its own module (hack/tools/kwok/go.mod).
KWOK_VERSION := v0.8.0

$(K8S_BIN)/kube-apiserver:
	@mkdir -p $(K8S_BIN)
	@echo "building kube-apiserver $(K8S_VERSION) (once, ~5-8 minutes on 2 cores; cached in $(K8S_BIN))"
	@$(PROGRESS) "build kube-apiserver" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $(CURDIR)/$(K8S_BIN)/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver"

$(K8S_BIN)/kube-controller-manager:
	@mkdir -p $(K8S_BIN)
	@echo "building kube-controller-manager $(K8S_VERSION) (once; cached in $(K8S_BIN))"
	@$(PROGRESS) "build kube-controller-manager" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $(CURDIR)/$(K8S_BIN)/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager"

$(K8S_BIN)/kube-scheduler:
	@mkdir -p $(K8S_BIN)
	@echo "building kube-scheduler $(K8S_VERSION) (once; cached in $(K8S_BIN))"
	@$(PROGRESS) "build kube-scheduler" bash -c "cd hack/tools && $(GO) build -ldflags '$(K8S_LDFLAGS)' \
		-o $(CURDIR)/$(K8S_BIN)/kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler"

$(K8S_BIN)/kwok:
	@mkdir -p $(K8S_BIN)
	@echo "building kwok $(KWOK_VERSION) (once; cached in $(K8S_BIN))"
	@$(PROGRESS) "build kwok" bash -c 'cd hack/tools/kwok && $(GO) build \
		-o $(CURDIR)/$(K8S_BIN)/kwok sigs.k8s.io/kwok/cmd/kwok'

test-binaries: $(K8S_BIN)/etcd $(K8S_BIN)/kube-apiserver $(K8S_BIN)/kube-controller-manager $(K8S_BIN)/kube-scheduler $(K8S_BIN)/kwok

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@$(PROGRESS) vet $(GO) vet ./...

# go test prints "ok <package>" as each package passes.
unit:
	@$(PROGRESS) "unit tests" $(GO) test -race -count=1 $$($(GO) list ./... | grep -v /test/e2e)

# The end-to-end tests run with -v; the terminal gets each test's RUN and
# PASS/FAIL lines, the tests' log lines (file.go:line: ...) and the Helm
# builds, and bin/e2e.log all of it.
E2E_LINES := ^(=== RUN|[[:space:]]*--- (PASS|FAIL|SKIP)|ok |FAIL|PASS$$|panic:|testcluster: )|[a-z_]+\.go:[0-9]+: 
e2e: test-binaries build
	@$(PROGRESS) "end-to-end tests (full output: $(BIN)/e2e.log)" bash -c 'set -o pipefail; \
		KUBEBUILDER_ASSETS=$(CURDIR)/$(K8S_BIN) PREFLIGHT_BIN=$(CURDIR)/$(PLUGIN) $(GO) test -v -count=1 -timeout 40m ./test/e2e/... 2>&1 \
		| tee $(BIN)/e2e.log | { grep --line-buffered -E "$(E2E_LINES)" || true; }'

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
	./checks:FuzzHelmVersionOutput \
	./checks:FuzzServerSemver

fuzz:
	@echo "== fuzz"
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		$(PROGRESS) "fuzz $$name ($$pkg, $(FUZZTIME))" $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

# golangci-lint, pinned, built once from the Go module proxy into bin/ by
# `go install ...@version` with GOBIN: the project's go.mod is untouched.
# The linters and their rules are in .golangci.yaml.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT_DIR     := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOLANGCI_LINT         := $(GOLANGCI_LINT_DIR)/golangci-lint

$(GOLANGCI_LINT):
	@mkdir -p $(GOLANGCI_LINT_DIR)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) (once, a few minutes; cached in $(GOLANGCI_LINT_DIR))"
	@GOBIN=$(CURDIR)/$(GOLANGCI_LINT_DIR) $(PROGRESS) "build golangci-lint" $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT)
	@$(PROGRESS) lint $(GOLANGCI_LINT) run ./...

test: vet lint unit fuzz e2e

# make bench: first the Go benchmarks of the per-object work at that scale
# (BENCH_GO_PKGS; make test compiles them but never runs them), then, for each
# size of -scales (1,2,4), fills a fresh test control plane with 5,000 nodes,
# 30,000 bound pods, 20,000 Services, 10,000 Deployments... times the factor
# and writes bench/results.md, bench/sweep.json, the charts bench/sweep.svg and
# bench/sweep-rss.svg (hack/plot) and the bench block of docs/performance.md (hack/bench).
BENCH_GO_PKGS ?= ./internal/cluster ./checks ./internal/chart
bench: test-binaries build
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_GO_PKGS)
	$(GO) run ./hack/bench -assets $(abspath $(K8S_BIN)) -plugin $(abspath $(PLUGIN)) -out bench/results.md -readme docs/performance.md $(BENCH_FLAGS)

demo: test-binaries build
	@KUBEBUILDER_ASSETS=$(CURDIR)/$(K8S_BIN) $(GO) run ./hack/demo -plugin $(CURDIR)/$(PLUGIN)

clean:
	rm -rf $(PLUGIN) dist

# Everything the tests and the demo built: bin/ (the control plane, the
# linter, the plugin) and the Helm 3 and 4 clients in the user cache
# (Go's os.UserCacheDir: $$XDG_CACHE_HOME or ~/.cache on Linux,
# ~/Library/Caches on macOS).
TOOL_CACHE = $(shell $(GO) run ./hack/demo -tool-cache 2>/dev/null)
distclean: clean
	rm -rf $(BIN) .fixtures
	@if [ -n "$(TOOL_CACHE)" ]; then echo "rm -rf $(TOOL_CACHE)"; rm -rf "$(TOOL_CACHE)"; fi
