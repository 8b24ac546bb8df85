#!/usr/bin/env bash
# Runs every test against one build folder: unit tests (ctest), CLI tests, the ONNX backend
# conformance suite against its expected-failures list. Prints a final "N passed, M failed".
# Usage: scripts/run_tests.sh BUILD_DIR      (CORT_LANE=asan|tsan selects the sanitizer lane's subset)
set -uo pipefail
build=${1:-build}
lane=${CORT_LANE:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
passed=0; failed=0
step() {   # name, command...
    local name=$1; shift
    echo "=== $name"
    if "$@"; then passed=$((passed+1)); echo "--- ok: $name"; else failed=$((failed+1)); echo "--- FAILED: $name"; fi
}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp}
step "unit tests ($lane)" ctest --test-dir "$build" --output-on-failure -j2 --timeout 900
if [ -x tests/test_cli.sh ]; then step "cli ($lane)" tests/test_cli.sh "$build"; fi
if [ "$lane" != tsan ] && [ -x scripts/conformance.sh ]; then step "conformance ($lane)" scripts/conformance.sh "$build"; fi
# expected outputs from ONNX Runtime 1.30 (tests/models/make_realworld_models.py + bench/ort_reference.js)
if [ "$lane" != tsan ]; then step "real-world models vs ONNX Runtime ($lane)" "$build/bin/cort" test tests/models/realworld/*; fi
if [ "$lane" = release ]; then
    step "make install, then build and run against the installed copy" scripts/test_install.sh
    step "conformance at optimization level 0" env CORT_CONFORMANCE_ARGS="--optimization 0" scripts/conformance.sh "$build"
    step "steady-state allocations over the ONNX backend tests" scripts/steady_allocs.sh "$build"
    step "race test negative control" scripts/negative_control.sh 200
fi
if [ -x "$build/bin/test_xnnpack" ] && grep -q "CORT_XNNPACK:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
    if [ "$lane" != tsan ]; then
        step "conformance with the xnnpack provider ($lane)" env CORT_CONFORMANCE_ARGS="--provider xnnpack" scripts/conformance.sh "$build"
    fi
    if [ "$lane" = release ]; then step "xnnpack race test negative control" scripts/xnnpack_negative_control.sh; fi
fi
if [ "$lane" = release ]; then step "fuzz (${CORT_FUZZ_SECONDS:-30} s)" make --no-print-directory fuzz FUZZ_SECONDS="${CORT_FUZZ_SECONDS:-30}"; fi
if [ "$lane" = release ] && [ -d python/tests ]; then
    step "python" env CORT_LIBRARY="$root/$build/lib/libcort.so" PYTHONPATH="$root/python" /usr/bin/python3 -m pytest -q python/tests
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
