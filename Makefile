# kro-agent. `make demo` and `make test` are the two commands a newcomer needs;
# the rest are the parts they are made of. The local cluster's binaries are
# built from Go modules into ~/.cache/kro-agent (see hack/cluster), once.

SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
# gotestsum runs `go test` and ends with a one-line summary.
GOTESTSUM := $(GO) run gotest.tools/gotestsum@v1.13.0
CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build test unit e2e lint fuzz generate generated snapshot cluster cluster-down kubeconfig demo demo-down image dist bench

VERSION ?= v0.1.0-dev
LDFLAGS := -s -w -X github.com/kro-agent/kro-agent/pkg/version.Version=$(VERSION)
# Static binaries, built as the image and the krew archives ship them, so what
# runs (and is benchmarked) here is what runs in a cluster: no libc to map.
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'

## build: the agent and the kubectl plugin into bin/, with the plugin's completion for kubectl
build:
	$(GOBUILD) -o $(BIN)/kro-agent ./cmd/agent
	$(GOBUILD) -o $(BIN)/kubectl-kro ./cmd/kubectl-kro
	install -m 0755 cmd/kubectl-kro/kubectl_complete-kro $(BIN)/kubectl_complete-kro

## demo: build, start the local cluster, run the agent in the background, apply examples/webapp
demo: build cluster-binaries
	@hack/demo/up.sh

## demo-down: stop the demo agent and delete the local cluster
demo-down:
	@hack/demo/down.sh

## dist: kubectl-kro archives for linux/darwin amd64/arm64 into dist/, and krew.yaml with their sha256
dist:
	$(GO) run ./hack/dist -version $(VERSION) -o dist -manifest krew.yaml

## image: an OCI image tarball of the agent (bin/kro-agent-image.tar), no container engine needed
image:
	GOOS=linux GOARCH=amd64 $(GOBUILD) -o $(BIN)/linux-amd64/kro-agent ./cmd/agent
	$(GO) run ./hack/image -binary $(BIN)/linux-amd64/kro-agent -tag kro-agent:$(VERSION) -o $(BIN)/kro-agent-image.tar

# The end-to-end tests run one after another against one local cluster and
# take about fifteen minutes together on two cores, more under the race
# detector: go test's default limit of ten minutes a package would cut them
# off.
TEST_TIMEOUT ?= 30m
# Every test runs under the race detector. The agent's workers, informers
# and webhook server share state, and the e2e tests run the agent in-process
# against a real API server: there -race found workers reading a kind's
# graph while the RGD reconciler replaced it, which no assertion saw. It
# makes make test about a fifth slower (19 minutes instead of 16 on two
# cores); RACE= runs without it.
RACE ?= -race

## test: lint, then every unit and end-to-end test (e2e tests start their own local cluster)
test: lint cluster-binaries
	$(GOTESTSUM) --format testname -- -tags e2e -count=1 $(RACE) -timeout $(TEST_TIMEOUT) ./...

## unit: unit tests only, no cluster
unit:
	$(GOTESTSUM) --format testname -- $(RACE) ./...

## e2e: end-to-end tests only
e2e: cluster-binaries
	$(GOTESTSUM) --format testname -- -tags e2e -count=1 $(RACE) -timeout $(TEST_TIMEOUT) ./test/...

## lint: gofmt, generated files current, go vet and staticcheck (unused code, deprecated APIs, bugs), with and without the e2e tag (so `make unit` builds)
lint: generated
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	cd hack/cluster && $(GO) vet ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags e2e ./test/...
	cd hack/cluster && $(STATICCHECK) ./...

## fuzz: run each fuzz target for FUZZTIME (the seed corpora also run in `make test`)
FUZZTIME ?= 30s
# Each input that finds new code is shrunk for up to a minute by default; an
# RGD takes milliseconds to compile, so FuzzCompile spent whole runs shrinking
# (14 inputs tried in 90 s). A hundred tries each leaves the time to fuzz.
FUZZMINIMIZE ?= 100x
FUZZ := -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) -fuzz
fuzz:
	$(GO) test ./pkg/simpleschema $(FUZZ) FuzzBuild
	$(GO) test ./pkg/expr $(FUZZ) FuzzParse
	$(GO) test ./pkg/jsonscan $(FUZZ) FuzzMembers
	$(GO) test ./pkg/jsonscan $(FUZZ) FuzzElements
	$(GO) test ./pkg/graph $(FUZZ) FuzzCompile
	$(GO) test ./pkg/resolve $(FUZZ) FuzzResolve
	$(GO) test ./pkg/webhook $(FUZZ) FuzzAdmissionDecoding
	$(GO) test ./pkg/plugin $(FUZZ) FuzzReadFile
	$(GO) test ./pkg/plugin $(FUZZ) FuzzCheckInstances
	$(GO) test ./pkg/managedfields $(FUZZ) FuzzDroppedAndMerged

## generate: deepcopy and the RGD CRD from the API types
generate:
	$(CONTROLLER_GEN) object crd paths=./pkg/apis/... output:crd:dir=manifests/crds

# generated: fails when `make generate` changes what it writes, so that an API
# type changed without it, or one controller-gen cannot read, is caught here
# rather than by the next person to run it. The files are left regenerated.
GENERATED = manifests/crds/*.yaml pkg/apis/*/*/zz_generated.deepcopy.go
generated:
	@before=$$(cat $(GENERATED) | sha256sum); \
	  $(MAKE) -s generate || exit 1; \
	  if [ "$$before" != "$$(cat $(GENERATED) | sha256sum)" ]; then \
	    echo "generated files were not current; make generate rewrote them:"; git status --short $(GENERATED); exit 1; fi

## bench: kro-agent side by side with upstream kro on fresh local clusters (SPEC §10); see bench/README.md
BENCH_FLAGS ?=
bench: build
	$(GO) run ./hack/bench $(BENCH_FLAGS)

## snapshot: re-record the built-in kinds' OpenAPI schemas from a fresh local cluster
snapshot: cluster
	$(GO) run ./hack/openapi-snapshot -kubeconfig "$$(hack/cluster/up.sh)" -o pkg/kinds/builtin.json.gz

## cluster-binaries: build etcd, kube-*, kubectl and kwok into the cache (once)
.PHONY: cluster-binaries
cluster-binaries:
	@hack/cluster/build.sh >/dev/null

## cluster: start the local cluster (idempotent) and print its kubeconfig path
cluster:
	@hack/cluster/up.sh

## cluster-down: delete the local cluster
cluster-down:
	@hack/cluster/down.sh

## kubeconfig: print only the path of the local cluster's kubeconfig
kubeconfig:
	@source hack/cluster/env.sh; \
	  if [ ! -f "$$kubeconfig_path" ]; then echo "no local cluster: run make cluster" >&2; exit 1; fi; \
	  echo "$$kubeconfig_path"
