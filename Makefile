# The test command of README.md; .ci/run calls exactly this target.
GO ?= go

.PHONY: test build vet image bench

build:
	$(GO) build -o bin/ironic ./cmd/ironic

# The race detector runs on every package: the conductor and the store are
# where it matters, and the rest is cheap enough to include.
# The Helm chart's tests are a module of their own (deploy/helm/chart-test)
# so that Helm and Kubernetes stay out of the service's dependencies. It
# replaces the service's module with this tree, so its go.sum may lag the
# service's dependencies: -mod=mod lets go fill it in.
# test/galera drives separate ironic and mariadbd processes; its own code
# is a black-box harness, so the race detector would only slow its
# linearizability check (porcupine, several times slower under -race)
# past its budget. It runs after the rest, without -race.
RACE_PKGS = $(shell $(GO) list ./... | grep -v '/test/galera$$')

# The allocation budgets (issue 29) skip under -race, which changes
# allocations: they run once more without it.
ALLOC_PKGS = ./internal/api/node ./internal/conductor

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 25m $(RACE_PKGS)
	$(GO) test -count=1 -run '^TestAllocsPer' $(ALLOC_PKGS)
	$(GO) test -count=1 -timeout 15m ./test/galera/
	cd deploy/helm/chart-test && $(GO) vet -mod=mod ./... && $(GO) test -mod=mod -count=1 ./...

vet:
	$(GO) vet ./...

# The container image (Dockerfile); IMAGE names the tag to build.
image:
	docker build --build-arg VERSION=$$(git describe --always --dirty 2>/dev/null || echo dev) -t $(or $(IMAGE),openkeel-ironic:dev) .

# Measures the service against upstream Ironic (run beside it when
# Debian's python3-ironic is installed) and the floor, over fleets of
# 2,000 to 100,000 nodes, and regenerates its section of BENCHMARKS.md
# with the charts in docs/bench (raw figures in docs/bench/results.json);
# not run by CI. Every listener takes a free port; the power sync is off
# during the request windows and measured on its own. BENCH_* variables
# tune it (bench/main.go, BENCHMARKS.md); BENCH_MARKDOWN= only prints.
bench: build
	$(GO) build -o bin/ironic-bench ./bench
	BENCH_MARKDOWN=$${BENCH_MARKDOWN-BENCHMARKS.md} BENCH_JSON=$${BENCH_JSON-docs/bench/results.json} ./bin/ironic-bench -binary bin/ironic
