#!/usr/bin/env bash
# ONNX backend-test conformance: runs every test of one ONNX release's backend suite with `cort test`
# and compares the failures with that suite's expected-failures list.
#
#   scripts/conformance.sh BUILD_DIR [1.12|1.23]
#
# 1.12 (default): Debian's libonnx-testdata (ONNX 1.12, opset <= 17), suites node, pytorch-converted,
#   pytorch-operator and simple; list tests/conformance/expected_failures.txt; CORT_TESTDATA overrides
#   the data folder (default /usr/share/libonnx-testdata/data).
# 1.23: ONNX 1.23.0's backend data (opset <= 28), the same suites plus light (model-zoo models); list
#   tests/conformance/expected_failures_1.23.txt. The data is the tarball
#   ../shared/onnx-backend-1.23/onnx-backend-data-*.tar.gz next to the repository, unpacked once into
#   BUILD_DIR/onnx-1.23 (redone when the tarball changes); CORT_ONNX123_DATA names an unpacked data
#   folder instead (the one holding node/, light/, ...).
#
# Exits nonzero on an unexpected failure (a failing test not in the list) or an unexpected pass (a
# listed test that passes: remove it from the list). CORT_CONFORMANCE_UPDATE=1 rewrites the list
# with the current failures instead (existing reasons are kept, new entries get "TODO: <message>").
# Other knobs: CORT_CONFORMANCE_LIST (list file), CORT_CONFORMANCE_JOBS (parallel tests, default nproc),
# CORT_CONFORMANCE_TIMEOUT (seconds per test, default 300), CORT_CONFORMANCE_ARGS (extra `cort test` options),
# CORT_TEST_EMULATOR (command that runs a cross-built cort, e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu").
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    echo "usage: $0 BUILD_DIR [1.12|1.23]" >&2
    exit 2
fi
BUILD=$1
RELEASE=${2:-1.12}
CORT=$BUILD/bin/cort
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JOBS=${CORT_CONFORMANCE_JOBS:-$(nproc 2>/dev/null || echo 2)}
TIMEOUT=${CORT_CONFORMANCE_TIMEOUT:-300}
case "$RELEASE" in
    1.12)
        LIST=${CORT_CONFORMANCE_LIST:-$ROOT/tests/conformance/expected_failures.txt}
        DATA=${CORT_TESTDATA:-/usr/share/libonnx-testdata/data}
        SUITES="node pytorch-converted pytorch-operator simple"
        MISSING="install libonnx-testdata"
        ;;
    1.23)
        LIST=${CORT_CONFORMANCE_LIST:-$ROOT/tests/conformance/expected_failures_1.23.txt}
        SUITES="node pytorch-converted pytorch-operator simple light"
        MISSING="put onnx-backend-data-*.tar.gz into $ROOT/../shared/onnx-backend-1.23/ or set CORT_ONNX123_DATA"
        if [ -n "${CORT_ONNX123_DATA:-}" ]; then
            DATA=$CORT_ONNX123_DATA
        else
            DATA=$BUILD/onnx-1.23/data
            tarball=$(ls "$ROOT"/../shared/onnx-backend-1.23/onnx-backend-data-*.tar.gz 2>/dev/null | head -n 1)
            if [ -n "$tarball" ]; then
                # unpack once; the stamp names the tarball (and its size) the folder came from
                want="$(basename "$tarball") $(wc -c < "$tarball")"
                if [ "$(cat "$BUILD/onnx-1.23/.stamp" 2>/dev/null)" != "$want" ]; then
                    rm -rf "$BUILD/onnx-1.23"
                    mkdir -p "$BUILD/onnx-1.23" || exit 2
                    if ! tar -xzf "$tarball" -C "$BUILD/onnx-1.23"; then
                        echo "conformance: cannot unpack $tarball into $BUILD/onnx-1.23" >&2
                        rm -rf "$BUILD/onnx-1.23"
                        exit 2
                    fi
                    echo "$want" > "$BUILD/onnx-1.23/.stamp"
                fi
            fi
        fi
        ;;
    *)
        echo "conformance: unknown suite release '$RELEASE' (1.12 or 1.23)" >&2
        exit 2
        ;;
esac

# CORT_CONFORMANCE_SUITES picks some of the suite folders (the sanitizer and emulated lanes leave out
# 1.23's light model-zoo folder, whose vgg19/resnet50 take minutes each there); list entries of the
# others are then neither checked nor reported as stale
SUITES=${CORT_CONFORMANCE_SUITES:-$SUITES}
if [ ! -x "$CORT" ]; then
    echo "conformance: $CORT not found (build first)" >&2
    exit 2
fi
DIRS=""
for s in $SUITES; do
    if [ ! -d "$DATA/$s" ]; then
        echo "conformance: test data $DATA/$s not found ($MISSING)" >&2
        exit 2
    fi
    DIRS="$DIRS $DATA/$s"
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

start=$(date +%s)
# shellcheck disable=SC2086
${CORT_TEST_EMULATOR:-} "$CORT" test --quiet --jobs "$JOBS" --timeout "$TIMEOUT" --list-failures "$TMP/failures" ${CORT_CONFORMANCE_ARGS:-} $DIRS \
    > "$TMP/out"
rc=$?
elapsed=$(( $(date +%s) - start ))
if [ $rc -ne 0 ] && [ $rc -ne 1 ] || [ ! -f "$TMP/failures" ]; then
    echo "conformance: '$CORT test' did not complete (exit status $rc)" >&2
    tail -n 20 "$TMP/out" >&2
    exit 2
fi
summary=$(tail -n 1 "$TMP/out")

# failure reasons: "FAIL suite/name: reason"
sed -n 's/^FAIL \([^:]*\): \(.*\)$/\1\t\2/p' "$TMP/out" > "$TMP/reasons"
sort -u "$TMP/failures" > "$TMP/failed"

# expected list: first token of each non-comment line
touch "$LIST"
sed -e 's/#.*$//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "$LIST" | awk 'NF { print $1 }' | sort -u > "$TMP/expected_all"
for s in $SUITES; do grep "^$s/" "$TMP/expected_all"; done | sort -u > "$TMP/expected"
# entries whose reason starts with "random" (outputs drawn from a random generator) may also pass
# by chance (10 random bits match numpy's about once in a thousand runs): not an unexpected pass
sed -n 's/^[[:space:]]*\([^#[:space:]]*\)[[:space:]]*#[[:space:]]*random.*$/\1/p' "$LIST" | sort -u > "$TMP/may_pass"

# every test id that exists
: > "$TMP/all"
for s in $SUITES; do
    for m in "$DATA/$s"/*/model.onnx; do
        [ -f "$m" ] || continue
        t=$(basename "$(dirname "$m")")
        echo "$s/$t" >> "$TMP/all"
    done
done
sort -u -o "$TMP/all" "$TMP/all"

if [ "${CORT_CONFORMANCE_UPDATE:-0}" = "1" ]; then
    {
        # keep the leading comment block of the old list
        awk '/^[[:space:]]*#/ || /^[[:space:]]*$/ { print; next } { exit }' "$LIST"
        if ! grep -q '^[[:space:]]*#' "$LIST"; then
            echo "# ONNX backend tests that are expected to fail: 'suite/name  # reason', one per line."
            echo "# Checked by scripts/conformance.sh ($RELEASE suite); regenerate with CORT_CONFORMANCE_UPDATE=1 make conformance."
            echo
        fi
        while IFS= read -r id; do
            old=$(awk -v id="$id" '{ line = $0; sub(/^[[:space:]]+/, "", line); split(line, f, /[[:space:]]+/)
                                     if (f[1] == id && index(line, "#")) { sub(/^[^#]*#[[:space:]]*/, "", line); print line; exit } }' "$LIST")
            if [ -z "$old" ]; then
                msg=$(awk -F '\t' -v id="$id" '$1 == id { print $2; exit }' "$TMP/reasons" | cut -c1-160)
                old="TODO: ${msg:-reason}"
            fi
            printf '%s  # %s\n' "$id" "$old"
        done < "$TMP/failed"
    } > "$TMP/newlist"
    cp "$TMP/newlist" "$LIST"
    echo "conformance $RELEASE: rewrote $LIST with $(wc -l < "$TMP/failed") failing tests"
    echo "$summary"
    exit 0
fi

# optional libraries this build was configured without (its CMakeCache.txt): their operators report
# themselves unavailable, so their tests are expected to fail in that build only (the aarch64 cross
# build has no arm64 PCRE2 or image codecs)
opt_off() { grep -q "^$1:INTERNAL=OFF" "$BUILD/CMakeCache.txt" 2>/dev/null; }
optional=""
if opt_off CORT_PCRE2_ENABLED; then optional="$optional node/test_regex_full_match_"; fi
if opt_off CORT_IMAGE_CODECS_ENABLED; then optional="$optional node/test_image_decoder_"; fi
for pre in $optional; do grep "^$pre" "$TMP/all" >> "$TMP/expected" || true; done
sort -u -o "$TMP/expected" "$TMP/expected"

unexpected_fail=$(comm -23 "$TMP/failed" "$TMP/expected")
unexpected_pass=$(comm -12 <(comm -23 "$TMP/expected" "$TMP/failed") "$TMP/all" | comm -23 - "$TMP/may_pass")
stale=$(comm -23 "$TMP/expected" "$TMP/all")

echo "conformance $RELEASE ($elapsed s): $summary"
for s in $SUITES; do
    total=$(grep -c "^$s/" "$TMP/all")
    failed=$(grep -c "^$s/" "$TMP/failed")
    expected=$(grep -c "^$s/" "$TMP/expected")
    printf '  %-18s %4d/%-4d passed  (%d failed, %d expected to fail)\n' "$s" $((total - failed)) "$total" "$failed" "$expected"
done
total=$(wc -l < "$TMP/all")
failed=$(wc -l < "$TMP/failed")
printf '  %-18s %4d/%-4d passed  (%d failed, %d expected to fail)\n' "overall" $((total - failed)) "$total" "$failed" \
    "$(wc -l < "$TMP/expected")"

status=0
if [ -n "$unexpected_fail" ]; then
    status=1
    echo "UNEXPECTED FAILURES ($(echo "$unexpected_fail" | wc -l)):"
    while IFS= read -r id; do
        msg=$(awk -F '\t' -v id="$id" '$1 == id { print $2; exit }' "$TMP/reasons")
        echo "  $id: ${msg:-see cort test output}"
    done <<< "$unexpected_fail"
fi
if [ -n "$unexpected_pass" ]; then
    status=1
    echo "UNEXPECTED PASSES ($(echo "$unexpected_pass" | wc -l)) - remove it from the list ($LIST):"
    echo "$unexpected_pass" | sed 's/^/  /'
fi
if [ -n "$stale" ]; then
    status=1
    echo "LISTED TESTS THAT DO NOT EXIST - remove it from the list ($LIST):"
    echo "$stale" | sed 's/^/  /'
fi
if [ $status -eq 0 ]; then
    echo "conformance $RELEASE: OK (all failures are expected)"
fi
exit $status
