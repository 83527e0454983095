# Nearcard — the two commands a new machine needs: `make demo` and `make test`.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=

.PHONY: all deps build test demo bench fuzz clean help

all: build

help:
	@echo "make demo   two nodes on this machine find each other and exchange cards"
	@echo "make test   install what is missing, build, run every test"
	@echo "make fuzz   run every libFuzzer target 10 min or 5M runs (FUZZ_SECONDS, FUZZ_RUNS, FUZZ_TARGETS)"
	@echo "make bench  run the benchmarks (benchmarks/), print the tables for docs/PERFORMANCE.md [GROUPS=\"exchange throughput …\"]"

# System packages (apt-get only when something is missing) and the Python test peers (.venv).
deps:
	@scripts/install-deps.sh --with-python

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

demo: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	@scripts/demo.sh "$$($(SWIFT) build --show-bin-path $(SWIFT_BUILD_FLAGS))/nearcard"

# All groups take about 15 minutes; one group: make bench GROUPS="exchange memory".
GROUPS ?=
bench: deps
	scripts/setup-bench-python.sh
	$(SWIFT) build -c release --product nearcard
	cd benchmarks && $(SWIFT) run -c release nearcard-bench $(GROUPS)

# libFuzzer targets for the parsers and state machines (fuzz/): not part of `make test`.
fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf .build benchmarks/.build fuzz/.build
