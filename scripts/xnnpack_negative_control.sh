#!/usr/bin/env bash
# Negative control for the XNNPACK fresh-process race test: builds the library with the test-only
# CORT_BROKEN_ONCE option (cort_once_run becomes the naive unsynchronized check-then-init, with a
# widened window) and the XNNPACK provider, and shows tests/test_xnnpack_race.c failing in at least
# half of its trials. Then the same number of trials on the correct build, which must all pass.
# Usage: scripts/xnnpack_negative_control.sh [TRIALS]   (default 200). Numbers: docs/xnnpack.md.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-200}
# the folder of scripts/negative_control.sh (which leaves XNNPACK at AUTO): its broken library is reused
cmake -S . -B build-broken -DCMAKE_BUILD_TYPE=Release -DCORT_BROKEN_ONCE=ON -DCORT_XNNPACK=ON >/dev/null
make --no-print-directory -C build-broken -j"$(nproc)" test_xnnpack_race >/dev/null
echo "broken once-guard build:"
build-broken/bin/test_xnnpack_race --trials "$trials" --expect-failures 2>/dev/null
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
make --no-print-directory -C build -j"$(nproc)" test_xnnpack_race >/dev/null
echo "correct build:"
build/bin/test_xnnpack_race --trials "$trials"
