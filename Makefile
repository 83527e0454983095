# Nearcard — the two commands a new machine needs: `make demo` and `make test`.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
PREFIX ?= /usr/local
# The installed binary carries the Swift runtime and Foundation inside it (no Swift toolchain needed
# where it runs, only the Debian libraries README.md lists); the exported symbol table it does not need
# is left out. Idle resident size 29.6 MB against 36.4 MB linked to the shared Swift libraries.
# Full RELRO (-z now: every symbol bound at start, the GOT read-only after), as Debian's hardening asks.
RELEASE_FLAGS = -c release --product nearcard --static-swift-stdlib -Xlinker --no-export-dynamic -Xlinker -z -Xlinker now

.PHONY: all deps build test check lint demo release install deb walk bench fuzz faults outages soak soak-faults screenshots clean help

all: build

help:
	@echo "make demo     two nodes on this machine find each other and exchange cards"
	@echo "make test     install what is missing, build, run every test"
	@echo "make check    the quick loop, no root needed: format lint, build, every suite but the LAN ones (namespaces)"
	@echo "make lint     swift format lint --strict with the repository's .swift-format; ESLint on the web app's script"
	@echo "make install  build the release binary and install it in \$$PREFIX (default /usr/local): bin, man pages, completions, docs"
	@echo "make deb      build the Debian package (build/nearcard_VERSION_ARCH.deb), checked with lintian"
	@echo "make fuzz     run every libFuzzer target 10 min or 5M runs (FUZZ_SECONDS, FUZZ_RUNS, FUZZ_TARGETS)"
	@echo "make faults   the fault lab's report: an exchange cut at every frame, and at 5/20/50 % loss [FAULT_LOSS=\"5,20,50\" FAULT_RUNS=10]"
	@echo "make outages  a bot's PostgreSQL frozen and stopped mid-exchange, 960 runs: no exchange may end split (~10 min)"
	@echo "make walk     a new person's first hour on the package make deb built, as an ordinary account (installs it, then removes it)"
	@echo "make screenshots  README's pictures of the web app, taken by the Chromium test from the real pages (docs/images/ui-*.png)"
	@echo "make soak     one listener serving an hour of honest, flooding and faulty traffic; fails on growth or a lost message [SOAK_MINUTES=60]"
	@echo "make soak-faults  the soak against a listener broken on purpose, once per fault: each run must catch its fault"
	@echo "make bench    run the benchmarks (benchmarks/), print the tables for docs/PERFORMANCE.md [GROUPS=\"exchange throughput …\"]"

# System packages (apt-get only when something is missing) and the Python test peers (.venv).
deps:
	@scripts/install-deps.sh --with-python

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build --product generate-manual $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

# The suites that need no root and no network namespace: everything but NearcardLANTests (a minute or two
# once built). Warnings are errors in every build (Package.swift).
check: deps lint
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build --product generate-manual $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --skip NearcardLANTests

# Formatting is the formatter's job: .swift-format holds the style, CI refuses a tree it would change. The
# web app's script is checked by ESLint (Debian's, which finds its modules through NODE_PATH). The catalogs
# (docs/TRANSLATING.md): po/nearcard.pot is what the sources say, each po/LANG.po compiles, is complete and
# holds the template's messages, and the catalogs built into the binary are po/'s.
ESLINT = NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs eslint --no-eslintrc -f unix -c Sources/NearcardWeb/Assets/.eslintrc.json
lint: deps
	$(SWIFT) format lint --strict --recursive Sources Tests benchmarks Package.swift
	$(ESLINT) Sources/NearcardWeb/Assets/app.js
	scripts/po-extract.py --check
	scripts/po-embed.py --check

demo: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	@scripts/demo.sh "$$($(SWIFT) build --show-bin-path $(SWIFT_BUILD_FLAGS))/nearcard"

# The release binary (the one `make install` installs and the benchmarks measure).
release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# The binary (stripped), a man page per command, bash/zsh/fish completions, docs and example units.
install: release
	scripts/install.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/nearcard" "$(DESTDIR)" "$(PREFIX)"

# A Debian package of the release build: apt install ./build/nearcard_*.deb
deb: release
	@scripts/install-deps.sh --with-packaging
	scripts/make-deb.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/nearcard" build

# All groups take about 35 minutes; one group: make bench GROUPS="exchange memory".
GROUPS ?=
# The benchmarks are a target of this package (benchmarks/Sources), built with the shipped binary's flags.
BENCH_FLAGS = -c release --product nearcard-bench --static-swift-stdlib -Xlinker --no-export-dynamic
bench: deps
	scripts/setup-bench-python.sh
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) build $(BENCH_FLAGS)
	cd benchmarks && "$$($(SWIFT) build $(BENCH_FLAGS) --show-bin-path)/nearcard-bench" $(GROUPS)

# The fault lab (Tests/NearcardLANTests/FaultLabTests.swift, Tests/Interop/fault_relay.py): the link cut
# after every frame of an exchange, and random loss, with both books compared after each run.
FAULT_LOSS ?= 5,20,50
FAULT_RUNS ?= 10
faults: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	NEARCARD_FAULT_LOSS=$(FAULT_LOSS) NEARCARD_FAULT_RUNS=$(FAULT_RUNS) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter "FaultLabTests|halfOpenFlood" 2>&1 \
		| sed -n '/^fault lab/,/^[^ ]/p' | grep -v '^[◇✔✘━↳]'

# A bot's database that stalls (Tests/NearcardLANTests/StoreOutageTests.swift): PostgreSQL frozen and
# stopped for 5, 15, 40 and 120 s at four steps of an exchange, ten runs each, alone, beside a node and
# with a fleet of two bots; no exchange may end split. `make test` runs 5 and 40 s, twice each. About 10 minutes.
outages: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	NEARCARD_OUTAGE_MATRIX=full $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter StoreOutageTests

# The soak run (scripts/soak.py): one listener as an ordinary user for SOAK_MINUTES under honest exchanges,
# follow-ups, floods and faulty links, sampled every minute; it fails on growth past its bounds, a lost or
# doubled message, or a one-sided contact. It copies the debug binary at start.
SOAK_MINUTES ?= 60
soak: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	NEARCARD="$$($(SWIFT) build --show-bin-path $(SWIFT_BUILD_FLAGS))/nearcard" SOAK_MINUTES=$(SOAK_MINUTES) scripts/soak.py

# Proof the soak can fail: a 2-minute run per fault a debug build can be given (scripts/soak.py --fault;
# Sources/NearcardNode/TestFault.swift), each of which must end in the violation that fault causes.
SOAK_FAULTS ?= decline stale-edge hold-messages leak no-eviction
soak-faults: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	@for f in $(SOAK_FAULTS); do \
		NEARCARD="$$($(SWIFT) build --show-bin-path $(SWIFT_BUILD_FLAGS))/nearcard" scripts/soak.py --minutes 2 --fault $$f \
			> /tmp/nearcard-soak-fault-$$f.log 2>&1 || { tail -5 /tmp/nearcard-soak-fault-$$f.log; exit 1; }; \
		tail -1 /tmp/nearcard-soak-fault-$$f.log; \
	done

# A new person's first and second hour (Tests/Interop/new_user_walk.py): installs the newest build/nearcard_*.deb,
# walks init with a passphrase, listen, qr make at 80×24, a second ui, exchanges both ways and the packaged
# bot as the account nearcard-test, then removes the package. Run make deb first (CI does).
walk: deps
	.venv/bin/python3 Tests/Interop/new_user_walk.py

# README's pictures of the web app: the Chromium test (two laptops in namespaces) saves each page it drives.
screenshots: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	NEARCARD_UI_SHOTS="$(CURDIR)/docs/images" $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter twoPagesExchangeCardsInChromium

# libFuzzer targets for the parsers and state machines (fuzz/): not part of `make test`.
fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf .build fuzz/.build build
