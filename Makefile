# Nearcard — the two commands a new machine needs: `make demo` and `make test`.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
PREFIX ?= /usr/local
# The installed binary carries the Swift runtime and Foundation inside it (no Swift toolchain needed
# where it runs, only the Debian libraries README.md lists); the exported symbol table it does not need
# is left out. Idle resident size 29.6 MB against 36.4 MB linked to the shared Swift libraries.
RELEASE_FLAGS = -c release --product nearcard --static-swift-stdlib -Xlinker --no-export-dynamic

.PHONY: all deps build test demo release install bench fuzz clean help

all: build

help:
	@echo "make demo     two nodes on this machine find each other and exchange cards"
	@echo "make test     install what is missing, build, run every test"
	@echo "make install  build the release binary and install it in \$$PREFIX/bin (default /usr/local), docs in \$$PREFIX/share/doc/nearcard"
	@echo "make fuzz     run every libFuzzer target 10 min or 5M runs (FUZZ_SECONDS, FUZZ_RUNS, FUZZ_TARGETS)"
	@echo "make bench    run the benchmarks (benchmarks/), print the tables for docs/PERFORMANCE.md [GROUPS=\"exchange throughput …\"]"

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

# The release binary (the one `make install` installs and the benchmarks measure).
release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

install: release
	install -D -m 0755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/nearcard" "$(DESTDIR)$(PREFIX)/bin/nearcard"
	install -d -m 0755 "$(DESTDIR)$(PREFIX)/share/doc/nearcard"
	install -m 0644 README.md docs/*.md examples/bot/policy.json examples/bot/nearcard-bot.service "$(DESTDIR)$(PREFIX)/share/doc/nearcard/"

# All groups take about 15 minutes; one group: make bench GROUPS="exchange memory".
GROUPS ?=
bench: deps
	scripts/setup-bench-python.sh
	$(SWIFT) build $(RELEASE_FLAGS)
	cd benchmarks && $(SWIFT) run -c release nearcard-bench $(GROUPS)

# libFuzzer targets for the parsers and state machines (fuzz/): not part of `make test`.
fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf .build benchmarks/.build fuzz/.build
