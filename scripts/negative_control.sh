#!/usr/bin/env bash
# Negative control for the fresh-process race test: builds the library with the test-only
# CORT_BROKEN_ONCE option (the once-guard replaced by the naive unsynchronized check-then-create,
# with a widened window) and shows tests/test_race.c failing in at least half of its trials.
# Usage: scripts/negative_control.sh [TRIALS]   (default 200). Numbers: docs/race-test.md.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-200}
# XNNPACK as found (AUTO): scripts/xnnpack_negative_control.sh builds its test in this same folder,
# so the broken library is compiled once for both
cmake -S . -B build-broken -DCMAKE_BUILD_TYPE=Release -DCORT_BROKEN_ONCE=ON -DCORT_XNNPACK=AUTO >/dev/null
make --no-print-directory -C build-broken -j"$(nproc)" test_race >/dev/null
echo "broken once-guard build:"
build-broken/bin/test_race --trials "$trials" --expect-failures 2>/dev/null
