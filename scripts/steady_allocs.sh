#!/usr/bin/env bash
# Steady-state allocation check over the ONNX backend tests: every test runs as in the conformance
# suite, then twice more after a warm-up run with `cort test --steady-allocs`; a test whose counted
# runs call cort's allocator fails. The failures are compared with tests/conformance/expected_allocating.txt
# exactly like scripts/conformance.sh compares its own list (a listed test that no longer allocates
# fails the check too: remove it from the list).
#
#   scripts/steady_allocs.sh BUILD_DIR      (CORT_CONFORMANCE_UPDATE=1 rewrites the list)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
export CORT_CONFORMANCE_LIST=${CORT_CONFORMANCE_LIST:-$root/tests/conformance/expected_allocating.txt}
export CORT_CONFORMANCE_ARGS="--steady-allocs --concurrency 1 ${CORT_CONFORMANCE_ARGS:-}"
exec "$root/scripts/conformance.sh" "$@"
