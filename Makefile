# The test command of README.md; .ci/run calls exactly this target.
GO ?= go

.PHONY: test build vet

build:
	$(GO) build -o bin/ironic ./cmd/ironic

# The race detector runs on every package: the conductor and the store are
# where it matters, and the rest is cheap enough to include.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 25m ./...

vet:
	$(GO) vet ./...
