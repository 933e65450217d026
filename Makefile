# liqo-go: a Liqo-compatible multi-cluster federation in Go.
GO            ?= go
BIN           := $(CURDIR)/bin
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
CONTROLLER_GEN:= sigs.k8s.io/controller-tools/cmd/controller-gen@v0.19.0
# Test timeout: the first run builds the testbed binaries (~8 min on 2 cores).
TEST_TIMEOUT  ?= 40m

.PHONY: all build liqoctl ctl test test-faults test-conformance fuzz docs playground playground-down bench generate lint testbed-binaries images release

all: build

build:
	$(GO) build ./...

# liqoctl and, next to it, the playground it runs for `liqoctl playground`
# and the controller manager the playground runs as a local process on
# simulated-only clusters (neither liqoctl nor the playground links it).
liqoctl:
	$(GO) build -o $(BIN)/liqoctl ./cmd/liqoctl
	$(GO) build -o $(BIN)/liqo-playground ./cmd/liqo-playground
	$(GO) build -o $(BIN)/liqo-controller-manager ./cmd/liqo-controller-manager

## ctl: liqoctl alone, as ./liqoctl, as the v0.5 manual's "make ctl" then
## "mv liqoctl /usr/local/bin/liqoctl" expect (liqoctl playground then
## needs liqo-playground on PATH: make liqoctl builds it into bin/).
ctl:
	$(GO) build -o $(CURDIR)/liqoctl ./cmd/liqoctl

# Builds (once, cached under ~/.cache/liqo-go/testbed) the control-plane
# binaries the tests and the playground run.
testbed-binaries: liqoctl
	$(BIN)/liqo-playground build

# Test packages run three at a time, the slowest (the testbed packages,
# 1-5 minutes each) first. They spend much of their time waiting for
# clusters to converge: two at a time left half of the 2 cores idle, and
# started last (go test runs packages in the order given) they ran on
# long after the short ones had ended.
TEST_PARALLEL ?= 3
TEST_FIRST    := ./test/peering ./test/install ./test/networking ./test/storage ./test/e2e ./test/realnodes ./test/examples ./test/dashboard

# Packages with native fuzz targets (what a peer's input reaches).
FUZZ_PKGS     := ./test/fuzz ./pkg/ipam ./pkg/twinname ./pkg/mover ./pkg/placement/fit ./deploy/charts/liqo/crds
FUZZTIME      ?= 1m

## test: every test, unit and against real testbed clusters, then each fuzz target briefly.
test: testbed-binaries
	$(GO) test -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(TEST_FIRST) ./...
	# A count, not a duration: Go 1.26's fuzz coordinator can fail a target
	# with "context deadline exceeded" when a duration ends (go.dev/issue/75804).
	FUZZTIME=2000x GO=$(GO) hack/fuzz.sh $(FUZZ_PKGS)

## test-faults: the slow fault scenarios (test/faults: a provider frozen for
## a minute, partitioned for 330 s, a manager killed under 1,000 pods),
## about 8 minutes of mostly waiting. Built only with the faults tag so that
## make test stays short; .ci/run runs both.
test-faults: testbed-binaries
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -tags faults ./test/faults

## test-conformance: the upstream Multi-Cluster Services conformance suite
## (../shared/mcs-conformance, or $MCS_CONFORMANCE_DIR), unmodified, on
## four real-node clusters: two whose pod CIDRs differ, then two and three
## with the same pod CIDR; about 20 minutes, reports in
## _output/mcs-conformance. Built only with the conformance tag, run alone
## so that its pods start on a quiet machine; .ci/run runs it.
test-conformance: testbed-binaries
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -tags conformance -run TestMCSConformance ./test/networking

## fuzz: each fuzz target for FUZZTIME (default 1m).
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) hack/fuzz.sh $(FUZZ_PKGS)

## playground: two local clusters, rome and milan, ready for kubectl.
playground: liqoctl
	$(BIN)/liqo-playground up --clusters rome,milan

playground-down: liqoctl
	$(BIN)/liqo-playground down

## bench: performance figures (cluster start, time to all pods Running, peering, offloading, reflection).
bench: testbed-binaries
	$(GO) run ./test/bench

## docs: liqoctl's command reference in docs/liqoctl (a test checks it is up to date).
docs:
	$(GO) run ./hack/gendocs docs/liqoctl

# ClusterRoles generated from +kubebuilder:rbac markers, one file each in
# RBAC_DIR: the controller manager's own from the packages it runs
# (MANAGER_RBAC, which leaves pkg/rbac out), and each role it hands out to
# peers and gateways from its package under pkg/rbac (PEERING_RBAC, as
# name=package).
RBAC_DIR      := deploy/charts/liqo/files/rbac
MANAGER_RBAC  := ./pkg/controllermanager/...;./pkg/mcs/...;./pkg/placement/...;./pkg/identity/...;./pkg/virtualkubelet/...;./pkg/webhook/...;./pkg/storage/...
PEERING_RBAC  := liqo-remote-controlplane=remotecontrolplane liqo-remote-offloading=remoteoffloading liqo-gateway=gateway liqo-gateway-nodes=gatewaynodes

## generate: deepcopy, CRD manifests and ClusterRoles (controller-gen, pinned); the chart's webhook configurations and the values reference (docs/helm-values.md).
generate:
	$(GO) run $(CONTROLLER_GEN) object crd paths=./apis/... output:crd:artifacts:config=deploy/charts/liqo/crds
	$(GO) run $(CONTROLLER_GEN) rbac:roleName=liqo-controller-manager paths="$(MANAGER_RBAC)" output:rbac:stdout > $(RBAC_DIR)/liqo-controller-manager.yaml.tmp
	mv $(RBAC_DIR)/liqo-controller-manager.yaml.tmp $(RBAC_DIR)/liqo-controller-manager.yaml
	set -e; for r in $(PEERING_RBAC); do \
		$(GO) run $(CONTROLLER_GEN) rbac:roleName=$${r%%=*} paths=./pkg/rbac/$${r#*=} output:rbac:stdout > $(RBAC_DIR)/$${r%%=*}.yaml.tmp; \
		mv $(RBAC_DIR)/$${r%%=*}.yaml.tmp $(RBAC_DIR)/$${r%%=*}.yaml; \
	done
	$(GO) run ./hack/genchart

## images: OCI images of the server components into _output/images (IMAGES_FLAGS="--registry host:port --tag v1" also pushes them).
images:
	$(GO) run ./hack/images $(IMAGES_FLAGS)

# The release: its version (SemVer, the tag it is published under), where
# it is written, the URL its archives are published under (the krew
# manifest points there; empty: the GitHub release of VERSION), and the
# platforms of the images and of liqoctl (empty: hack/images' and
# hack/release's defaults, every platform each is released for).
VERSION           ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null || echo v0.0.0-dev)
DIST              ?= $(CURDIR)/dist
RELEASE_URL       ?=
IMAGE_PLATFORMS   ?=
RELEASE_PLATFORMS ?=

## release: into DIST (dist/), liqoctl's archives for Linux, macOS and Windows on amd64 and arm64, the chart's .tgz, the images as an OCI layout (images/), the krew manifest (plugin.yaml) and SHA256SUMS.
release:
	rm -rf $(DIST)
	$(GO) run ./hack/images --output $(DIST)/images --tag $(VERSION) $(if $(IMAGE_PLATFORMS),--platforms $(IMAGE_PLATFORMS))
	$(GO) run ./hack/release --version $(VERSION) --output $(DIST) $(if $(RELEASE_URL),--url $(RELEASE_URL)) $(if $(RELEASE_PLATFORMS),--platforms $(RELEASE_PLATFORMS))

lint:
	$(GO) vet -tags faults,conformance ./...
	$(GO) run $(GOLANGCI_LINT) run ./...
