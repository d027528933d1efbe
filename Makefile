# latscope — build, test, demo and benchmarks. `make help` lists the targets.
GO       ?= go
BIN      := bin/latscope
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.buildVersion=$(VERSION)
FUZZTIME ?= 30s
# Pipelines fail when any part fails (go test | testsummary).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c

.PHONY: help build test unit fuzz demo bench clean

help:
	@echo "make build   build the static binary $(BIN)"
	@echo "make demo    storage latency sweep (1-8 readers, ~30 s) with live heat map, then demo.html"
	@echo "make test    vet, all tests (real files, servers, browser, fuzz corpora), then what was skipped and why"
	@echo "make fuzz    explore with every fuzz target for FUZZTIME each (default 30s); crashers land in testdata/fuzz"
	@echo "make bench   benchmarks side by side with peer tools (docs/benchmarks.md)"

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/latscope

# The demo measures this directory's storage: a short sweep from 1 to 8
# concurrent readers of a 256 MiB scratch file (created here, removed
# afterwards, also on Ctrl-C) with the live heat map, then the report.
demo: build
	./$(BIN) iotest . --steps 1,2,4,8 --duration 5s --warmup 1s --size 256M -o demo.html
	@echo "open demo.html in a browser for the whole sweep's heat maps"

# Deterministic: every fuzz target runs its committed corpus (seeds and every
# input that ever failed, testdata/fuzz) as a plain test; nothing random.
test: build unit

unit:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m -json ./... | $(GO) run ./scripts/testsummary

# Exploratory fuzzing, not part of make test: every target for FUZZTIME.
# A crasher is written to the package's testdata/fuzz; commit it with its fix.
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

bench: build
	scripts/bench.sh

clean:
	rm -rf bin demo.html bench-out
