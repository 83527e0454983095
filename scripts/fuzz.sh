#!/bin/sh
# Runs Nearcard's libFuzzer targets (fuzz/), each until FUZZ_SECONDS pass or FUZZ_RUNS inputs have
# been tried, whichever is first, starting from the seeds in fuzz/corpus/<target>/.
#
#   make fuzz                                  # every target, 10 minutes or 5 million runs each
#   FUZZ_SECONDS=60 FUZZ_TARGETS="fuzz-frame fuzz-txt" scripts/fuzz.sh
#
# Built with -sanitize=fuzzer,address: a crash, an AddressSanitizer report, a leak, a hang (more than
# FUZZ_TIMEOUT seconds on one input) or more than 2 GB of memory stops the target, leaves the input in
# fuzz/artifacts/<target>/ and makes this script exit 1. What the fuzzer learns goes to
# fuzz/corpus-work/<target>/ (not committed); logs to fuzz/logs/. A summary line per target is printed
# at the end, in the form docs/SECURITY.md records.
set -eu
cd "$(dirname "$0")/../fuzz"
SECONDS_EACH=${FUZZ_SECONDS:-600}
RUNS=${FUZZ_RUNS:-5000000}
TIMEOUT=${FUZZ_TIMEOUT:-10}
TARGETS=${FUZZ_TARGETS:-"fuzz-frame fuzz-noise fuzz-session fuzz-payload fuzz-qr fuzz-jwt fuzz-route fuzz-txt"}
# One combined -sanitize value: given `--sanitize=fuzzer --sanitize=address`, swift-driver 6.3 hands
# the compiler only one of them, at random, so a build could lack coverage or AddressSanitizer.
FLAGS="--scratch-path .build/fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address"
SWIFT=${SWIFT:-swift}

build() {
    for t in $TARGETS; do
        echo "fuzz: building $t…"
        $SWIFT build $FLAGS --product "$t" >/dev/null || { $SWIFT build $FLAGS --product "$t"; exit 1; }
    done
}
# Both instrumentations must be in the code under test, or the run proves nothing.
instrumented() {
    o="$bin/NearcardProtocol.build/Framing.swift.o"
    [ -f "$o" ] && objdump -h "$o" | grep -q sancov && objdump -h "$o" | grep -q asan
}
bin=$($SWIFT build $FLAGS --show-bin-path)
build
if ! instrumented; then
    echo "fuzz: the build lacks coverage or AddressSanitizer instrumentation; rebuilding from scratch"
    rm -rf .build/fuzz
    build
    instrumented || { echo "fuzz: still not instrumented (see $bin/NearcardProtocol.build)"; exit 1; }
fi
mkdir -p logs
summary=""
failed=0
for t in $TARGETS; do
    mkdir -p "corpus-work/$t" "artifacts/$t"
    echo "fuzz: $t for ${SECONDS_EACH} s or $RUNS runs…"
    status=0
    "$bin/$t" -max_total_time="$SECONDS_EACH" -runs="$RUNS" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 "corpus-work/$t" "corpus/$t" >"logs/$t.log" 2>&1 || status=$?
    runs=$(grep -E '^stat::number_of_executed_units' "logs/$t.log" | awk '{print $2}')
    secs=$(grep -E '^stat::' "logs/$t.log" >/dev/null && grep -E 'Done [0-9]+ runs in [0-9]+ second' "logs/$t.log" | sed -E 's/.* in ([0-9]+) second.*/\1/')
    cov=$(grep -E '^#[0-9]+' "logs/$t.log" | tail -1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
    corpus=$(ls "corpus-work/$t" | wc -l)
    if [ "$status" -eq 0 ]; then
        line="$t: ${runs:-?} runs in ${secs:-$SECONDS_EACH} s, coverage ${cov:-?} edges, corpus $corpus inputs, no crash, leak or hang"
    else
        line="$t: FAILED (exit $status) after ${runs:-?} runs: see fuzz/logs/$t.log and fuzz/artifacts/$t/"
        failed=1
    fi
    echo "  $line"
    summary="$summary$line
"
done
echo
echo "fuzz summary ($(date -u +%Y-%m-%d), $(nproc) cores):"
printf '%s' "$summary"
exit $failed
