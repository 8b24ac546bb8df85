#!/usr/bin/env bash
# Compare cort against ONNX Runtime 1.30 on the benchmark models.
#
#   bench/compare_ort.sh [--only NAME[,NAME]] [--models DIR] [--cort BIN] [--threads N]
#                        [--rtol R] [--atol A] [--time RUNS] [--markdown]
#
# 1. exports the models with bench/make_models.py if DIR/NAME is missing;
# 2. writes ORT's outputs as DIR/NAME/test_data_set_0/output_K.pb with
#    bench/ort_reference.js (again whenever model.onnx is newer), which makes
#    every model folder an ONNX backend test whose expected values come from ORT;
# 3. runs `cort test --rtol R --atol A DIR/NAME` (pass/fail) and
#    `cort run --output-dir` (to measure the actual errors);
# 4. with --time RUNS, also times `cort bench` and ORT (median of RUNS runs);
# 5. prints a table (bench/compare_outputs.py). Exit status 1 if any test failed.
#
# Results and logs go to DIR/../ort_compare/NAME/. Defaults: DIR = build/models,
# BIN = build/bin/cort, threads 0 (one per core, both runtimes), rtol 1e-3, atol 1e-4.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PY:-/usr/bin/python3}
MODELS=$REPO/build/models
CORT=$REPO/build/bin/cort
ONLY=""
THREADS=0
RTOL=1e-3
ATOL=1e-4
TIME=0
MARKDOWN=""
TIMEOUT=${CORT_TEST_TIMEOUT:-1800}

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --only) ONLY=$2; shift 2 ;;
        --models) MODELS=$2; shift 2 ;;
        --cort) CORT=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --rtol) RTOL=$2; shift 2 ;;
        --atol) ATOL=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --markdown) MARKDOWN=--markdown; shift ;;
        -h|--help) usage 0 ;;
        *) echo "compare_ort.sh: unknown argument '$1'" >&2; usage 2 ;;
    esac
done

if [ ! -x "$CORT" ]; then
    echo "compare_ort.sh: $CORT not found; build first (make)" >&2
    exit 2
fi
command -v node >/dev/null || { echo "compare_ort.sh: node is required for ONNX Runtime" >&2; exit 2; }

mapfile -t ALL < <("$PY" "$REPO/bench/make_models.py" --list)
if [ -n "$ONLY" ]; then IFS=, read -r -a NAMES <<< "$ONLY"; else NAMES=("${ALL[@]}"); fi

MODELS=$(mkdir -p "$MODELS" && cd "$MODELS" && pwd)
RESULTS=$(dirname "$MODELS")/ort_compare

# 1. models
missing=()
for n in "${NAMES[@]}"; do
    [ -f "$MODELS/$n/model.onnx" ] && [ -f "$MODELS/$n/test_data_set_0/input_0.pb" ] || missing+=("$n")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== exporting ${missing[*]} into $MODELS" >&2
    "$PY" "$REPO/bench/make_models.py" --out "$MODELS" --only "$(IFS=,; echo "${missing[*]}")" \
        2> >(grep -v -i warning >&2)
fi

# 2. ORT reference outputs
stale=()
for n in "${NAMES[@]}"; do
    out=$MODELS/$n/test_data_set_0/output_0.pb
    if [ ! -f "$out" ] || [ "$MODELS/$n/model.onnx" -nt "$out" ]; then stale+=("$MODELS/$n"); fi
done
ort_threads=()
[ "$THREADS" != 0 ] && ort_threads=(--threads "$THREADS")
if [ ${#stale[@]} -gt 0 ]; then
    echo "== ONNX Runtime reference outputs for ${#stale[@]} model(s)" >&2
    node "$REPO/bench/ort_reference.js" "${ort_threads[@]}" "${stale[@]}" >&2
fi

# 3./4. cort
failed=0
for n in "${NAMES[@]}"; do
    dir=$MODELS/$n
    res=$RESULTS/$n
    rm -rf "$res"
    mkdir -p "$res/out"
    echo "== cort test $n" >&2
    if ! "$CORT" test --rtol "$RTOL" --atol "$ATOL" --threads "$THREADS" --concurrency 1 \
            --timeout "$TIMEOUT" --times "$dir" > "$res/test.txt" 2>&1; then
        failed=1
    fi
    grep -E '^(PASS|FAIL|SKIP)' "$res/test.txt" >&2 || tail -n 3 "$res/test.txt" >&2
    "$CORT" run "$dir/model.onnx" --threads "$THREADS" --input-dir "$dir/test_data_set_0" \
        --output-dir "$res/out" > "$res/run.txt" 2>&1 || true
    if [ "$TIME" -gt 0 ]; then
        "$CORT" bench "$dir/model.onnx" --threads "$THREADS" --input-dir "$dir/test_data_set_0" \
            --runs "$TIME" --json > "$res/bench.json" 2> "$res/bench.err" || true
        node "$REPO/bench/ort_reference.js" "${ort_threads[@]}" --time "$TIME" --json "$dir" \
            > "$res/ort.json" 2> "$res/ort.err" || true
    fi
done

# 5. table
echo
"$PY" "$REPO/bench/compare_outputs.py" --models "$MODELS" --results "$RESULTS" \
    --rtol "$RTOL" --atol "$ATOL" $MARKDOWN "${NAMES[@]}"
exit $failed
