# liqo-go: a Liqo-compatible multi-cluster federation in Go.
GO            ?= go
BIN           := $(CURDIR)/bin
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
CONTROLLER_GEN:= sigs.k8s.io/controller-tools/cmd/controller-gen@v0.19.0
# Test timeout: the first run builds the testbed binaries (~8 min on 2 cores).
TEST_TIMEOUT  ?= 40m

.PHONY: all build liqoctl test fuzz docs playground playground-down bench generate lint testbed-binaries images

all: build

build:
	$(GO) build ./...

liqoctl:
	$(GO) build -o $(BIN)/liqoctl ./cmd/liqoctl

# Builds (once, cached under ~/.cache/liqo-go/testbed) the control-plane
# binaries the tests and the playground run.
testbed-binaries: liqoctl
	$(BIN)/liqoctl playground build

# Packages with native fuzz targets (what a peer's input reaches).
FUZZ_PKGS     := ./test/fuzz ./pkg/ipam
FUZZTIME      ?= 1m

## test: every test, unit and against real testbed clusters, then each fuzz target briefly.
test: testbed-binaries
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	FUZZTIME=3s GO=$(GO) hack/fuzz.sh $(FUZZ_PKGS)

## fuzz: each fuzz target for FUZZTIME (default 1m).
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) hack/fuzz.sh $(FUZZ_PKGS)

## playground: two local clusters, rome and milan, ready for kubectl.
playground: liqoctl
	$(BIN)/liqoctl playground up --clusters rome,milan

playground-down: liqoctl
	$(BIN)/liqoctl playground down

## bench: performance figures (cluster start, time to all pods Running, peering, offloading, reflection).
bench: testbed-binaries
	$(GO) run ./test/bench

## docs: liqoctl's command reference in docs/liqoctl (a test checks it is up to date).
docs:
	$(GO) run ./hack/gendocs docs/liqoctl

## generate: deepcopy and CRD manifests (controller-gen, pinned).
generate:
	$(GO) run $(CONTROLLER_GEN) object crd paths=./apis/... output:crd:artifacts:config=deploy/charts/liqo/crds

## images: OCI images of the server components into _output/images (IMAGES_FLAGS="--registry host:port --tag v1" also pushes them).
images:
	$(GO) run ./hack/images $(IMAGES_FLAGS)

lint:
	$(GO) vet ./...
	$(GO) run $(GOLANGCI_LINT) run ./...
