#!/bin/sh
# Fuzzes model loading (tests/fuzz/fuzz_model.c: session creation from memory + value .pb parsing)
# with libFuzzer, starting from a copy of the seed corpus tests/fuzz/corpus/ (the seeds are never
# modified; new interesting inputs stay in the temporary copy).
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS]      BUILD_DIR configured with -DCORT_FUZZ=ON and clang;
#                                            SECONDS defaults to 30.
#   make fuzz                                configures build-fuzz/, builds fuzz_model, runs 30 s.
#   make fuzz FUZZ_SECONDS=3600              runs for an hour (any number of seconds).
#
# Exit status is nonzero when the fuzzer finds a crash, a leak, a timeout or an out-of-memory;
# the reproducer is written to BUILD_DIR/fuzz-artifacts/ (replay it with
# `BUILD_DIR/bin/fuzz_model BUILD_DIR/fuzz-artifacts/crash-...`).
set -eu

BUILD=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS]}
SECONDS_TO_RUN=${2:-30}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$BUILD/bin/fuzz_model"

if [ ! -x "$BIN" ]; then
    echo "fuzz.sh: $BIN not found; build it with: make fuzz (or cmake -DCORT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14)" >&2
    exit 2
fi
case "$SECONDS_TO_RUN" in
    ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$SECONDS_TO_RUN'" >&2; exit 2 ;;
esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cort-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cp "$ROOT"/tests/fuzz/corpus/* "$WORK"/
mkdir -p "$BUILD/fuzz-artifacts"

echo "fuzz.sh: fuzzing for ${SECONDS_TO_RUN}s (corpus copy in $WORK, artifacts in $BUILD/fuzz-artifacts/)"
# Huge allocation requests come back NULL (as in production) instead of aborting inside ASan;
# libFuzzer still reports single allocations above -rss_limit_mb.
ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1}
export ASAN_OPTIONS
status=0
"$BIN" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/" "$WORK" || status=$?
if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: FAILED (status $status); reproducer in $BUILD/fuzz-artifacts/" >&2
    exit 1
fi
echo "fuzz.sh: no crash in ${SECONDS_TO_RUN}s"
