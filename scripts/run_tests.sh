#!/usr/bin/env bash
# Runs every test against one build folder: unit tests (ctest), CLI tests, the ONNX backend
# conformance suites (ONNX 1.12 and 1.23) against their expected-failures lists. Prints a final
# "N passed, M failed".
# Usage: scripts/run_tests.sh BUILD_DIR      (CORT_LANE=asan|tsan selects the sanitizer lane's subset;
# CORT_LANE=aarch64 with CORT_TEST_EMULATOR="qemu-aarch64 -L /usr/aarch64-linux-gnu" runs a cross build's
# unit tests, conformance and real-world models at the generic level: make check-aarch64;
# CORT_LANE=avx2-cpu with CORT_TEST_EMULATOR="qemu-x86_64 -cpu EPYC-Milan" the same at every level of
# an emulated AVX2-only CPU: make check-avx2-cpu)
# Per-ISA lanes: the unit tests, the conformance suite and the real-world models run once per ISA
# level this CPU supports (the "levels:" line of `cort --version`) with CORT_ISA set to it: every
# level in the release lane; generic and the highest for the asan lane's unit tests (its conformance
# and model runs, and the tsan lane, use the highest). CORT_ISA_LEVELS="avx2 ..." picks the levels
# instead (docs/isa.md). A CORT_ISA of the calling environment is ignored: each step sets its own.
set -uo pipefail
build=${1:-build}
lane=${CORT_LANE:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
passed=0; failed=0
step() {   # name, command...
    local name=$1; shift
    local t0=$SECONDS
    echo "=== $name"
    if "$@"; then passed=$((passed+1)); echo "--- ok ($((SECONDS-t0)) s): $name"; else failed=$((failed+1)); echo "--- FAILED ($((SECONDS-t0)) s): $name"; fi
}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp}
unset CORT_ISA
emu=${CORT_TEST_EMULATOR:-}   # runs the build's binaries (ctest uses CMake's crosscompiling emulator itself)
levels=$($emu "$build/bin/cort" --version 2>/dev/null | sed -n 's/^levels: //p')
if [ -z "$levels" ]; then levels=generic; echo "warning: no 'levels:' line from $build/bin/cort --version; testing generic only"; fi
top=${levels##* }
if [ -n "${CORT_ISA_LEVELS:-}" ]; then
    unit_isas=$CORT_ISA_LEVELS; suite_isas=$CORT_ISA_LEVELS
else
    case "$lane" in
        release) unit_isas=$levels; suite_isas=$levels ;;
        aarch64) unit_isas=generic; suite_isas=generic ;;
        avx2-cpu) unit_isas=$levels; suite_isas=$levels ;;
        asan)    unit_isas=$(echo generic "$top" | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' '); suite_isas=$top ;;
        *)       unit_isas=$top; suite_isas=$top ;;
    esac
fi
echo "ISA levels of this CPU: $levels; unit tests at: $unit_isas; suites at: $suite_isas"
# The fresh-process race tests (200 trials of 32 threads each, the longest unit tests under the
# sanitizers and qemu) test one-time initialization, which no kernel table changes: they run at the
# first level only.
first=1
for isa in $unit_isas; do
    skip=(); if [ $first = 0 ]; then skip=(-E '^test_(xnnpack_)?race$'); fi
    step "unit tests ($lane, isa $isa)" env CORT_ISA="$isa" ctest --test-dir "$build" --output-on-failure -j2 --timeout 900 "${skip[@]}"
    first=0
done
if [ -x tests/test_cli.sh ] && [ -z "$emu" ]; then step "cli ($lane)" tests/test_cli.sh "$build"; fi
for isa in $suite_isas; do
    if [ "$lane" != tsan ] && [ -x scripts/conformance.sh ]; then
        step "conformance ($lane, isa $isa)" env CORT_ISA="$isa" scripts/conformance.sh "$build"
        suites123=""   # every folder; the light model-zoo models take minutes each under sanitizers or emulation
        case "$lane" in asan|aarch64|avx2-cpu) suites123="node pytorch-converted pytorch-operator simple" ;; esac
        step "conformance 1.23 ($lane, isa $isa)" env CORT_ISA="$isa" CORT_CONFORMANCE_SUITES="$suites123" \
            scripts/conformance.sh "$build" 1.23
    fi
    # expected outputs from ONNX Runtime 1.30 (tests/models/make_realworld_models.py + bench/ort_reference.js)
    if [ "$lane" != tsan ]; then
        step "real-world models vs ONNX Runtime ($lane, isa $isa)" env CORT_ISA="$isa" $emu "$build/bin/cort" test \
            tests/models/realworld/ocr_tiny_det tests/models/realworld/vad_if_lstm
        # Winograd paths (3x1, 1x3, 1-D): outputs of magnitude ~1 whose rounding differs from ORT's by
        # a few float ulps, so the absolute floor is 1e-5 rather than the backend suite's 1e-7
        step "real-world models vs ONNX Runtime, Winograd ($lane, isa $isa)" env CORT_ISA="$isa" $emu "$build/bin/cort" \
            test --atol 1e-5 tests/models/realworld/kws_conv
        # ai.onnx.ml models vs scikit-learn's own predictions (tests/models/ml/make_ml_models.py)
        step "scikit-learn models ($lane, isa $isa)" env CORT_ISA="$isa" $emu "$build/bin/cort" test tests/models/ml/*/
        # operator versions after opset 17 against numpy / torch (tests/models/make_version_models.py)
        step "operator versions models ($lane, isa $isa)" env CORT_ISA="$isa" $emu "$build/bin/cort" test tests/models/versions/*
    fi
done
if [ "$lane" = release ]; then
    step "make install, then build and run against the installed copy" scripts/test_install.sh
    step "conformance at optimization level 0" env CORT_CONFORMANCE_ARGS="--optimization 0" scripts/conformance.sh "$build"
    step "conformance 1.23 at optimization level 0" env CORT_CONFORMANCE_ARGS="--optimization 0" scripts/conformance.sh "$build" 1.23
    step "steady-state allocations over the ONNX backend tests" scripts/steady_allocs.sh "$build"
    step "race test negative control" scripts/negative_control.sh 200
fi
if [ -z "$emu" ] && [ -x "$build/bin/test_xnnpack" ] && grep -q "CORT_XNNPACK_ENABLED:INTERNAL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
    # under ASan the provider's glue runs through ONNX 1.23's suites only (they hold the 1.12 tests' ops
    # at newer opsets; the release lane runs both)
    if [ "$lane" = release ]; then
        step "conformance with the xnnpack provider ($lane)" env CORT_CONFORMANCE_ARGS="--provider xnnpack" scripts/conformance.sh "$build"
    fi
    if [ "$lane" != tsan ]; then
        suites123=""; case "$lane" in asan) suites123="node pytorch-converted pytorch-operator simple" ;; esac
        step "conformance 1.23 with the xnnpack provider ($lane)" env CORT_CONFORMANCE_ARGS="--provider xnnpack" \
            CORT_CONFORMANCE_SUITES="$suites123" scripts/conformance.sh "$build" 1.23
    fi
    if [ "$lane" = release ]; then step "xnnpack race test negative control" scripts/xnnpack_negative_control.sh; fi
fi
# cort-serve (KServe v2 REST) against real clients on loopback, in every lane but the emulated ones;
# under the sanitizers the server runs instrumented and any report fails its exit status
if [ -z "$emu" ] && [ -x "$build/bin/cort-serve" ]; then
    slow=1; case "$lane" in asan|tsan) slow=4 ;; esac
    step "serve: KServe v2 REST server ($lane)" env CORT_SERVE_BIN="$root/$build/bin/cort-serve" CORT_BIN="$root/$build/bin/cort" \
        CORT_SERVE_TEST_SLOWDOWN=$slow /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/serve
fi
# the regression inputs of every fuzz target, then a short run of each (CORT_FUZZ_SECONDS each)
if [ "$lane" = release ]; then step "fuzz (every target x ${CORT_FUZZ_SECONDS:-10} s)" make --no-print-directory fuzz FUZZ_SECONDS="${CORT_FUZZ_SECONDS:-10}"; fi
if [ "$lane" = release ] && [ -d python/tests ]; then
    step "python" env CORT_LIBRARY="$root/$build/lib/libcort.so" PYTHONPATH="$root/python" /usr/bin/python3 -m pytest -q python/tests
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
