SHELL := /bin/bash
# Skyhook. `make sandbox` and `make test` are the two entry points; both work
# on a machine with only Go, git and make: everything else (controller-gen,
# kube-apiserver, kube-controller-manager, kubectl, etcd, KWOK) is built from
# the Go module proxy and cached (see cmd/skyhook/sandbox/binaries). The agent's
# tests chroot into a root filesystem made from Debian's busybox-static,
# which they fetch with apt-get (they run as root, as CI does); the real-node
# tests run a real kubelet with Debian's containerd, runc and CNI plugins,
# which `make real-node-deps` installs.
# `make images` builds the operator and agent images with Go alone, no
# container daemon (config/images, docs/images.md). `make release VERSION=1.2.3`
# makes a release in dist/ (config/release, docs/release.md).

GO ?= go
STATE_DIR ?= .sandbox
NODES ?= 10
# SANDBOX_FLAGS=--flux also runs Flux's source-controller, a Git server and an OCI registry;
# --real-node also runs a real node, containerd and a kubelet on this machine (root; make real-node-deps);
# --real-nodes=N runs N real nodes on a network with the operator installed by its chart, and Prometheus.
SANDBOX_FLAGS ?=
TEST_FLAGS ?= -count=1
# The whole suite; the first run also builds the control plane (several
# minutes), which `prepare` does before the test binaries start their clocks.
# One package's limit: test/vmnode, emulated virtual machines beside the
# other packages, is the longest (docs/testing.md says how long: 30 to 48
# minutes on machines of this kind); the limit is a net for a hang, well
# above it, and within CI's 90 minutes with prepare and fuzz.
TEST_TIMEOUT ?= 65m
# The longest packages start first (go test runs them in the order given),
# so that they do not run alone at the end: on 2026-12-07 test/upstreame2e,
# left in name order, started 50 minutes in and ran alone for 8.
TEST_FIRST = ./test/vmnode ./reconcile ./test/upstreame2e ./test/installed
# Packages run at once. Most integration packages spend much of their time
# waiting (on a pod, a boot, a poll), so one more package than cores keeps
# the cores busy; docs/testing.md has the measured runs.
TEST_PARALLEL ?= 3
# What the binaries and images say they are: the version and the git commit.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)

# The Helm chart; `make generate` copies the CRDs, RBAC rules and webhooks into
# its files/ and renders the kustomize bases config/default and
# config/certmanager from it.
CHART = config/helm/skyhook-operator
GENERATED = find api config -name 'zz_generated.*.go' -o -path 'config/crd/bases/*.yaml' -o -path 'config/rbac/*.yaml' -o -path 'config/webhook/manifests.yaml' -o -path '$(CHART)/files/*' -o -name skyhook-operator.yaml -o -name skyhook-dashboard.json | LC_ALL=C sort | xargs sha256sum

.PHONY: all build agent images push agent-image release test test-race test-k8s-matrix fuzz generate verify-generated verify-fmt prepare sandbox sandbox-down sandbox-status real-node-deps vm-node-deps test-chaos bench bench-rollout bench-agent bench-gitops clean

all: build

build:
	$(GO) build -o bin/skyhook ./cmd/skyhook
	ln -sf skyhook bin/kubectl-skyhook
	ln -sf skyhook bin/kubectl-nodewright

## agent: the node agent, a static binary for this machine (`make images` builds the image's own).
agent:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w -X main.Version=$(VERSION)" -o bin/skyhook-agent ./cmd/skyhook-agent

## images: the operator and agent images for linux/amd64 and linux/arm64, OCI image layouts in bin/images (docs/images.md).
IMAGE_REGISTRY ?= ghcr.io/skyhook-go
IMAGE_TAG ?= $(VERSION)
IMAGE_FLAGS = -registry $(IMAGE_REGISTRY) -tag $(IMAGE_TAG) -version $(VERSION) -revision $(REVISION) -o bin/images
images:
	$(GO) run ./config/images/build $(IMAGE_FLAGS)

## push: build the images and push them to $(IMAGE_REGISTRY) (credentials of ~/.docker/config.json).
push:
	$(GO) run ./config/images/build $(IMAGE_FLAGS) -push

## agent-image: the agent image alone (as `make images` builds it).
agent-image:
	$(GO) run ./config/images/build $(IMAGE_FLAGS) -images agent

## release: a release in $(DIST), VERSION=1.2.3 (or v1.2.3, 1.2.3-rc.1) required: the chart stamped with it, install.yaml, install-certmanager.yaml, the CLI archives, the krew manifest, checksums.txt and the images' OCI layouts; PUSH=1 also pushes the images and the chart to $(IMAGE_REGISTRY); with SIGN_KEY=cosign.key (password in $COSIGN_PASSWORD) it signs them and attaches SLSA provenance, and an SBOM and OpenVEX document per platform (BUILDER_ID, VEX optional) (docs/release.md).
DIST ?= dist
PUSH ?=
# Where the CLI archives will be downloaded from (the krew manifest's uri); empty: the GitHub release of the tag v<version>.
DOWNLOAD_URL ?=
release:
	$(GO) run ./config/release/build -version='$(VERSION)' -tag='$(IMAGE_TAG)' -registry='$(IMAGE_REGISTRY)' -revision='$(REVISION)' -o='$(DIST)' $(if $(DOWNLOAD_URL),-download-url='$(DOWNLOAD_URL)') $(if $(PUSH),-push) $(if $(SIGN_KEY),-sign-key='$(SIGN_KEY)') $(if $(BUILDER_ID),-builder-id='$(BUILDER_ID)') $(if $(VEX),-vex='$(VEX)')

## generate: regenerate deepcopy code, CRDs, RBAC and webhook configurations from the Go markers, copy them into the Helm chart and render the kustomize bases from it.
generate:
	$(GO) tool controller-gen object paths=./api/...
	$(GO) tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(GO) tool controller-gen rbac:roleName=skyhook-manager paths=./reconcile/... output:rbac:artifacts:config=config/rbac
	$(GO) tool controller-gen webhook paths=./webhook/... output:webhook:artifacts:config=config/webhook
	rm -rf $(CHART)/files && mkdir -p $(CHART)/files/crds $(CHART)/files/rbac
	cp config/crd/bases/*.yaml $(CHART)/files/crds/
	cp config/rbac/role.yaml $(CHART)/files/rbac/role.yaml
	cp config/webhook/manifests.yaml $(CHART)/files/webhooks.yaml
	$(GO) run ./config/grafana/gen config/grafana/skyhook-dashboard.json
	cp config/grafana/skyhook-dashboard.json $(CHART)/files/
	$(GO) run ./config/helm/render -config config

## verify-generated: fail when the generated files differ from what `make generate` writes.
verify-generated:
	@before="$$($(GENERATED))"; \
	$(MAKE) --no-print-directory generate >/dev/null; \
	after="$$($(GENERATED))"; \
	if [ "$$before" != "$$after" ]; then \
		echo "generated files were stale and have been regenerated; review and commit them:"; \
		diff <(echo "$$before") <(echo "$$after") || true; \
		exit 1; \
	fi

## verify-fmt: fail when a Go file is not gofmt-ed.
verify-fmt:
	@unformatted="$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go'))"; if [ -n "$$unformatted" ]; then echo "not gofmt-ed: $$unformatted"; exit 1; fi

## prepare: build the control-plane binaries, the real nodes' kubelet and kube-proxy, the virtual machine nodes' disk image (where make vm-node-deps has what it needs), Prometheus and promtool, and Flux's source-controller, kustomize-controller and flux CLI into the cache.
prepare: build
	bin/skyhook sandbox prepare --flux --real-node --prometheus --vm-node

## real-node-deps: containerd, runc and the CNI plugins from Debian's packages, when missing, for the real node (test/realnode, `sandbox up --real-node`). Without root or apt-get it installs nothing and the real-node tests skip, saying why.
REAL_NODE_PACKAGES = containerd runc containernetworking-plugins
real-node-deps:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "real-node-deps: not root or no apt-get; the real-node tests will skip"; exit 0; \
	fi; \
	if command -v containerd >/dev/null && command -v containerd-shim-runc-v2 >/dev/null && command -v runc >/dev/null && \
		{ [ -x /usr/lib/cni/bridge ] || [ -x /opt/cni/bin/bridge ]; }; then exit 0; fi; \
	echo "installing $(REAL_NODE_PACKAGES) for the real node"; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(REAL_NODE_PACKAGES) >/dev/null; } || \
		echo "real-node-deps: apt-get could not install $(REAL_NODE_PACKAGES); the real-node tests will skip"

## vm-node-deps: qemu, qemu-img, mmdebstrap and mkfs.ext4 from Debian's packages, when missing, for the virtual machine nodes (test/vmnode, package vmnode). Without root or apt-get it installs nothing and the virtual machine tests skip, saying why.
VM_NODE_PACKAGES = qemu-system-x86 qemu-utils mmdebstrap e2fsprogs
vm-node-deps:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "vm-node-deps: not root or no apt-get; the virtual machine tests will skip"; exit 0; \
	fi; \
	if command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null && command -v mmdebstrap >/dev/null && command -v mkfs.ext4 >/dev/null; then exit 0; fi; \
	echo "installing $(VM_NODE_PACKAGES) for the virtual machine nodes"; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(VM_NODE_PACKAGES) >/dev/null; } || \
		echo "vm-node-deps: apt-get could not install $(VM_NODE_PACKAGES); the virtual machine tests will skip"

## test: everything CI runs.
test: verify-generated verify-fmt real-node-deps vm-node-deps prepare
	$(GO) vet ./...
	$(GO) test -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(TEST_FIRST) ./...
	$(MAKE) --no-print-directory fuzz FUZZ_TIME=3000x

## fuzz: every fuzz target (a func Fuzz... in a tracked _test.go file) for $(FUZZ_TIME) (a duration, or Nx executions: make test uses a count, because a duration's deadline can race a worker's last call and fail a run with a bare "context deadline exceeded", golang/go#75804), one after another (go test fuzzes one target a run); the corpora are in each package's testdata/fuzz/<target>, what a run finds too (docs/testing.md). Minimization is off by default (it stalls a short run); FUZZ_MINIMIZE_TIME=30s minimizes what fails.
FUZZ_TIME ?= 10s
FUZZ_MINIMIZE_TIME ?= 0
fuzz:
	@failed=""; \
	targets="$$(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -H -o -E '^func Fuzz[A-Za-z0-9_]*' | sed -E 's|^(.*)/[^/]*:func (Fuzz.*)$$|\1 \2|' | LC_ALL=C sort -u)"; \
	echo "fuzz: $$(echo "$$targets" | wc -l) targets, $(FUZZ_TIME) each"; \
	while read -r pkg name; do \
		echo "--- fuzz ./$$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_TIME) -fuzzminimizetime $(FUZZ_MINIMIZE_TIME) ./$$pkg/ || failed="$$failed ./$$pkg:$$name"; \
	done <<< "$$targets"; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi

## test-race: the tests under reconcile/ with the race detector (a pass sends its API requests from a pool of goroutines); about 8 minutes.
test-race: prepare
	$(GO) test -race $(TEST_FLAGS) ./reconcile/...

## test-chaos: the full chaos run (test/chaos): 80 nodes, 20 operator kills, every other fault 3 times; the table goes to the output and $(CHAOS_REPORT)/chaos-report.md (docs/reliability.md). `make test` runs its short form. CHAOS_SEED=n replays a run.
CHAOS_SEED ?=
CHAOS_REPORT ?= bin
test-chaos: prepare
	mkdir -p $(CHAOS_REPORT)
	SKYHOOK_CHAOS=full SKYHOOK_CHAOS_REPORT=$(abspath $(CHAOS_REPORT)) $(if $(CHAOS_SEED),SKYHOOK_CHAOS_SEED=$(CHAOS_SEED)) $(GO) test -count=1 -timeout 60m -v -run TestRolloutKeepsItsPromisesUnderFaults ./test/chaos/

## test-k8s-matrix: test/k8smatrix once per Kubernetes release of $(K8S_VERSIONS) (CRDs, webhooks, CEL rules, a rollout with a reboot, the server version), verbose so the refusals of each release can be compared; a release not in the cache is built first, about 7 minutes on 2 cores (docs/testing.md#kubernetes-versions).
K8S_VERSIONS ?= v1.30.14 v1.32.2 v1.34.4 v1.36.3
K8S_MATRIX_TIMEOUT ?= 30m
test-k8s-matrix:
	@passed=; failed=; for v in $(K8S_VERSIONS); do \
		echo "== Kubernetes $$v"; \
		if SKYHOOK_K8S_VERSION=$$v $(GO) test -v -timeout $(K8S_MATRIX_TIMEOUT) $(TEST_FLAGS) ./test/k8smatrix/; then passed="$$passed $$v"; else failed="$$failed $$v"; fi; \
	done; \
	echo "test-k8s-matrix: passed on:$${passed:- none}; failed on:$${failed:- none}"; \
	[ -z "$$failed" ]

## bench: admission latency, in process and through the apiserver (docs/admission.md).
bench: prepare
	$(GO) test -run XXX -bench InProcess -benchtime 3000x -count 3 ./webhook/inprocess/
	$(GO) test -run XXX -bench ThroughAPIServer -benchtime 1000x -count 2 ./webhook/

## bench-gitops: new artifact revision to 50 Skyhooks applied (docs/gitops.md).
bench-gitops: prepare
	$(GO) test -run XXX -bench PackageSetRevisionToApplied -benchtime 5x -count 3 ./reconcile/packageset/

## bench-agent: the agent's cost per step (docs/agent.md).
bench-agent:
	$(GO) test -run XXX -bench TwentyTrueSteps -benchtime 50x -count 3 ./agent/run/

## bench-rollout: rollout at fleet scale, a table (docs/rollout.md). BENCH_NODES=1000,5000,10000 for more, BENCH_PACKAGES=1,5 for more packages (both comma lists).
BENCH_NODES ?= 100,1000
BENCH_PACKAGES ?= 1
bench-rollout: prepare
	$(GO) run ./test/bench/rollout -nodes $(BENCH_NODES) -packages $(BENCH_PACKAGES)

## sandbox: a local control plane with $(NODES) simulated nodes, state in $(STATE_DIR).
sandbox: build
	bin/skyhook sandbox up --nodes $(NODES) --state-dir $(STATE_DIR) $(SANDBOX_FLAGS)

sandbox-status: build
	bin/skyhook sandbox status --state-dir $(STATE_DIR)

sandbox-down: build
	bin/skyhook sandbox down --state-dir $(STATE_DIR)

clean:
	rm -rf bin
