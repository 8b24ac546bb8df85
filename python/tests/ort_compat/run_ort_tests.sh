#!/bin/sh
# Runs ONNX Runtime's Python API tests against cort through the alias package next to this script.
# Usage: run_ort_tests.sh DIR [pytest args...]
#   DIR holds ORT's test files laid out as in ORT's repository: DIR/onnxruntime_test_python*.py and
#   DIR/helper.py, with ORT's test models in DIR/testdata (`cp -r /work/shared/ort-testdata
#   DIR/testdata`: a real copy, since some tests write and remove files in testdata/ and cort refuses
#   external data behind a symbolic link that leaves the model's folder). Nothing
#   is downloaded. The tests run inside DIR (they open
#   relative paths); libcort is found as cort's Python package finds it (CORT_LIBRARY or the build tree).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 DIR [pytest args...]" >&2; exit 2; }
dir=$1
shift
[ -d "$dir" ] || { echo "$0: '$dir' is not a directory" >&2; exit 2; }
[ -d "$dir/testdata" ] || echo "$0: warning: $dir/testdata (ORT's test models) is missing" >&2
files=$(cd "$dir" && ls onnxruntime_test_python.py onnxruntime_test_python_iobinding.py \
        onnxruntime_test_python_sparse_matmul.py 2>/dev/null || true)
[ -n "$files" ] || { echo "$0: no ORT test files in $dir" >&2; exit 2; }
cd "$dir"
# The alias first, then cort itself (python/), then the test folder (helper.py). Debian's onnx 1.12
# exposes onnx.numpy_helper only once imported (one ORT test uses it as an attribute): import it first.
PYTHONPATH="$here:$here/../..:$PWD${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 -c '
import sys
try:
    import onnx.numpy_helper  # noqa: F401
except ImportError:
    pass
import pytest
sys.exit(pytest.main(sys.argv[1:]))' -p no:cacheprovider -o addopts= -q -rs $files "$@"
