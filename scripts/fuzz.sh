#!/bin/sh
# Fuzzes cort with libFuzzer (ASan + UBSan build, tests/fuzz/*.c):
#   fuzz_model   session creation from arbitrary bytes
#   fuzz_run     session creation, then two runs on generated inputs of the declared types
#   fuzz_values  the CLI's value readers: serialized TensorProto/SequenceProto/... (.pb) and .npy
#   fuzz_serve   cort-serve's KServe v2 request parser (JSON + binary data) and response builder
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS] [--long] [TARGET...]
#     BUILD_DIR configured with -DCORT_FUZZ=ON and clang-14 (make fuzz does it).
#     short (default; make check, make fuzz): first replays every regression input
#       (tests/fuzz/regressions/), then fuzzes each target SECONDS (default 15) one after the other,
#       seeded with the committed corpus and a sample of the backend-suite models.
#     --long (make fuzz-long FUZZ_SECONDS=N): all targets at once for SECONDS each, with -fork
#       (FUZZ_JOBS jobs per target, default: the cores shared out among the targets, at least 1),
#       crashes, timeouts and OOMs collected rather than stopping, seeded with every model and
#       every test input of both backend suites; niced (nice -n 19).
# Seeds from the ONNX backend suites are copied into BUILD_DIR/fuzz-seeds/ at the first run, never
# committed: Debian's ONNX 1.12 data (libonnx-testdata, CORT_TESTDATA overrides the folder) and
# ../shared/onnx-backend-1.23/ beside the repo (CORT_BACKEND_123 overrides the tarball); either is
# skipped when absent. Findings: BUILD_DIR/fuzz-findings/ (TARGET-crash-..., TARGET-oom-..., and
# TARGET.log for each target with libFuzzer's statistics). Replay one with
# `BUILD_DIR/bin/TARGET FILE`. A real finding, once fixed, goes to tests/fuzz/regressions/.
# FUZZ_TIMEOUT (default 20 s) is libFuzzer's -timeout per input: raise it for a niced campaign on a
# loaded machine, where a starved process can exceed it on inputs that take a second.
# Exit status: nonzero if anything was found (or a regression input fails).
set -eu

BUILD=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS] [--long] [TARGET...]}
shift
SECS=15
case "${1:-}" in ''|-*|fuzz_*) ;; *) SECS=$1; shift ;; esac
MODE=short
if [ "${1:-}" = "--long" ]; then MODE=long; shift; fi
TARGETS=${*:-fuzz_model fuzz_run fuzz_values}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$SECS" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$SECS'" >&2; exit 2 ;; esac
for t in $TARGETS; do
    if [ ! -x "$BUILD/bin/$t" ]; then
        echo "fuzz.sh: $BUILD/bin/$t not found; build it with: make fuzz (cmake -DCORT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14)" >&2
        exit 2
    fi
done

# Huge requests come back NULL as in production (OOM is a status, not an abort) but libFuzzer
# still reports any single allocation above -malloc_limit_mb: the size policy must refuse absurd
# shapes before they reach the allocator. A UBSan report stops the target like an ASan one.
# (appended to the caller's options: run_tests.sh exports its own)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:detect_leaks=1"
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS
FINDINGS="$BUILD/fuzz-findings"
SEEDS="$BUILD/fuzz-seeds"
mkdir -p "$FINDINGS"

# ---- seeds from the backend suites (copied once per build folder) ----
copy_suite() {   # DATA_DIR PREFIX
    [ -d "$1" ] || return 0
    for m in "$1"/*/*/model.onnx; do
        [ -f "$m" ] || continue
        t=$(dirname "$m"); s=$(basename "$(dirname "$t")"); n=$(basename "$t")
        cp "$m" "$SEEDS/models/$2_${s}_$n.onnx"
        for pb in "$t"/test_data_set_0/input_*.pb; do
            [ -f "$pb" ] && cp "$pb" "$SEEDS/values/$2_${s}_${n}_$(basename "$pb")"
        done
    done
}
if [ ! -f "$SEEDS/.complete" ]; then
    rm -rf "$SEEDS"; mkdir -p "$SEEDS/models" "$SEEDS/values"
    copy_suite "${CORT_TESTDATA:-/usr/share/libonnx-testdata/data}" onnx112
    TAR=${CORT_BACKEND_123:-$ROOT/../shared/onnx-backend-1.23/onnx-backend-data-6be0677.tar.gz}
    if [ -f "$TAR" ]; then
        rm -rf "$SEEDS/tmp123"; mkdir -p "$SEEDS/tmp123"
        tar -xzf "$TAR" -C "$SEEDS/tmp123" --wildcards '*/model.onnx' '*/test_data_set_0/input_*.pb'
        copy_suite "$SEEDS/tmp123/data" onnx123
        rm -rf "$SEEDS/tmp123"
    else
        echo "fuzz.sh: $TAR not found: seeding without the ONNX 1.23 backend suite"
    fi
    # the short runs start from every 12th of them (their first pass over the seeds must fit the budget)
    mkdir -p "$SEEDS/models-sample" "$SEEDS/values-sample"
    i=0; for f in "$SEEDS"/models/*; do [ -f "$f" ] || continue; i=$((i + 1)); [ $((i % 12)) -eq 0 ] && cp "$f" "$SEEDS/models-sample/"; done
    i=0; for f in "$SEEDS"/values/*; do [ -f "$f" ] || continue; i=$((i + 1)); [ $((i % 12)) -eq 0 ] && cp "$f" "$SEEDS/values-sample/"; done
    touch "$SEEDS/.complete"
fi
echo "fuzz.sh: seeds: $(ls "$SEEDS/models" | wc -l) suite models, $(ls "$SEEDS/values" | wc -l) suite values (in $SEEDS)"

kind() { case "$1" in fuzz_values) echo values ;; fuzz_serve) echo serve ;; *) echo models ;; esac; }
dict() { case "$1" in fuzz_values) echo "$ROOT/tests/fuzz/values.dict" ;; fuzz_serve) echo "$ROOT/tests/fuzz/serve.dict" ;;
         *) echo "$ROOT/tests/fuzz/onnx.dict" ;; esac; }
seed_dirs() {   # TARGET SUFFIX: the seed folders that exist (git keeps no empty folder)
    k=$(kind "$1")
    if [ "$k" = models ]; then set -- "$ROOT/tests/fuzz/corpus" "$ROOT/tests/fuzz/regressions/models" "$SEEDS/models$2"
    elif [ "$k" = serve ]; then set -- "$ROOT/tests/fuzz/corpus_serve" "$ROOT/tests/fuzz/regressions/serve"
    else set -- "$ROOT/tests/fuzz/corpus_values" "$ROOT/tests/fuzz/regressions/values" "$SEEDS/values$2"; fi
    for d in "$@"; do [ -d "$d" ] && echo "$d"; done
}
COMMON="-timeout=${FUZZ_TIMEOUT:-20} -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=262144 -print_final_stats=1"

# ---- regression inputs: each must pass (replayed, not fuzzed) ----
status=0
for t in $TARGETS; do
    k=$(kind "$t")
    set -- "$ROOT"/tests/fuzz/regressions/"$k"/*
    [ -f "$1" ] || continue
    if "$BUILD/bin/$t" $COMMON "$@" >"$FINDINGS/$t-regressions.log" 2>&1; then
        echo "fuzz.sh: $t: $# regression inputs pass"
    else
        echo "fuzz.sh: $t: a regression input FAILS (log: $FINDINGS/$t-regressions.log)" >&2
        tail -30 "$FINDINGS/$t-regressions.log" >&2
        status=1
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cort-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
summary() {   # TARGET: the last statistics line of its log
    grep -E '^#[0-9]+' "$FINDINGS/$1.log" | tail -1 || true
}

if [ "$MODE" = short ]; then
    for t in $TARGETS; do
        mkdir -p "$WORK/$t"
        echo "fuzz.sh: $t for ${SECS}s"
        # shellcheck disable=SC2046
        if "$BUILD/bin/$t" $COMMON -max_total_time="$SECS" -dict="$(dict "$t")" \
            -artifact_prefix="$FINDINGS/$t-" "$WORK/$t" $(seed_dirs "$t" -sample) >"$FINDINGS/$t.log" 2>&1; then
            echo "fuzz.sh: $t: nothing found. $(summary "$t")"
        else
            echo "fuzz.sh: $t FOUND something (log: $FINDINGS/$t.log):" >&2
            grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$FINDINGS/$t.log" | head -10 >&2
            status=1
        fi
    done
    exit $status
fi

# ---- long campaign: every target at once, -fork, findings collected ----
NT=$(echo $TARGETS | wc -w)
CORES=$(nproc 2>/dev/null || echo 2)
JOBS=${FUZZ_JOBS:-$(( CORES / NT > 0 ? CORES / NT : 1 ))}
echo "fuzz.sh: long campaign: $TARGETS, ${SECS}s each, -fork=$JOBS per target, niced; findings in $FINDINGS"
pids=""
for t in $TARGETS; do
    mkdir -p "$FINDINGS/$t-corpus"
    # shellcheck disable=SC2046
    nice -n 19 "$BUILD/bin/$t" $COMMON -max_total_time="$SECS" -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 \
        -ignore_ooms=1 -dict="$(dict "$t")" -artifact_prefix="$FINDINGS/$t-" "$FINDINGS/$t-corpus" $(seed_dirs "$t" "") \
        >"$FINDINGS/$t.log" 2>&1 &
    pids="$pids $!"
done
for p in $pids; do wait "$p" || true; done
for t in $TARGETS; do
    # crash-, leak-, oom-, timeout- files are findings; slow-unit- files (an input above 10 s, which a
    # niced run on a loaded machine produces on large seeds) are listed for triage only
    n=$(find "$FINDINGS" -maxdepth 1 -type f \( -name "$t-crash-*" -o -name "$t-leak-*" -o -name "$t-oom-*" \
        -o -name "$t-timeout-*" \) | wc -l)
    slow=$(find "$FINDINGS" -maxdepth 1 -type f -name "$t-slow-unit-*" | wc -l)
    echo "fuzz.sh: $t: $n findings, $slow slow inputs. $(summary "$t")"
    [ "$n" -eq 0 ] || status=1
done
exit $status
