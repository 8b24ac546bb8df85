#!/usr/bin/env bash
# End-to-end tests of the `cort` command-line tool: every command, exit codes (0 ok, 1 failure,
# 2 usage), .npy/.pb input and output, random inputs, backend-test runs, bench --json and demo.
#   tests/test_cli.sh BUILD_DIR
# Ends with "N passed, M failed"; exit status 1 if any check failed.
set -u
if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
CORT=$(cd "$1" && pwd)/bin/cort
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-/usr/bin/python3}
DATA=${CORT_TESTDATA:-/usr/share/libonnx-testdata/data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0
failed=0

ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# expect_rc RC DESC CMD... : runs CMD (stdout -> $T/stdout, stderr -> $T/stderr), checks the exit status
expect_rc() {
    local want=$1 desc=$2; shift 2
    "$@" > "$T/stdout" 2> "$T/stderr"
    local rc=$?
    if grep -qE 'Sanitizer|runtime error:' "$T/stderr"; then
        bad "$desc: sanitizer report"
        grep -E -A3 'Sanitizer|runtime error:' "$T/stderr" | head -12 >&2
        return
    fi
    if [ "$rc" -eq "$want" ]; then ok; else
        bad "$desc: exit status $rc, expected $want"
        sed 's/^/    stdout: /' "$T/stdout" | head -5 >&2
        sed 's/^/    stderr: /' "$T/stderr" | head -5 >&2
    fi
}
# expect_in FILE TEXT DESC : FILE contains TEXT
expect_in() {
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not found in $(basename "$1")"; head -20 "$1" | sed 's/^/    /' >&2; fi
}
expect_file() { if [ -s "$1" ]; then ok; else bad "$2: $1 missing or empty"; fi; }

if [ ! -x "$CORT" ]; then echo "cort binary not found at $CORT" >&2; echo "0 passed, 1 failed"; exit 1; fi

# ---- models made for these tests ----
"$PY" - "$T" <<'PYEOF'
import sys, os, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
T = sys.argv[1]
# add: alpha_in [N,3] + beta_in [1,3] -> sum_out [N,3]
g = helper.make_graph([helper.make_node("Add", ["alpha_in", "beta_in"], ["sum_out"])], "cli_add",
    [helper.make_tensor_value_info("alpha_in", TensorProto.FLOAT, ["N", 3]),
     helper.make_tensor_value_info("beta_in", TensorProto.FLOAT, [1, 3])],
    [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, ["N", 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{T}/add.onnx")
os.makedirs(f"{T}/add_data", exist_ok=True)
a = np.arange(6, dtype=np.float32).reshape(2, 3); b = np.array([[10, 20, 30]], dtype=np.float32)
open(f"{T}/add_data/input_0.pb", "wb").write(numpy_helper.from_array(a, "alpha_in").SerializeToString())
open(f"{T}/add_data/input_1.pb", "wb").write(numpy_helper.from_array(b, "beta_in").SerializeToString())
np.save(f"{T}/alpha.npy", a)
np.save(f"{T}/add_expected.npy", a + b)
# fortran-order .npy must be rejected
np.save(f"{T}/fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
# identity models and inputs for the .npy dtype round trip
dtypes = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
          "int8": TensorProto.INT8, "int16": TensorProto.INT16, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
          "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32,
          "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL, "str": TensorProto.STRING}
for name, et in dtypes.items():
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id_" + name,
        [helper.make_tensor_value_info("x", et, None)], [helper.make_tensor_value_info("y", et, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{T}/id_{name}.onnx")
    if name == "str":
        arr = np.array([["hello", "wörld", ""], ["日本", "x", "ok"]])
    elif name == "bool":
        arr = np.array([[True, False, True], [False, False, True]])
    else:
        arr = (np.arange(6).reshape(2, 3) * 3).astype(name)
    np.save(f"{T}/id_{name}.npy", arr)
# backend-test layout: a suite with a good and a broken test
for tname, delta in (("test_good", 0.0), ("test_broken", 1.0)):
    d = f"{T}/mysuite/{tname}/test_data_set_0"
    os.makedirs(d, exist_ok=True)
    os.system(f"cp {T}/add.onnx {T}/mysuite/{tname}/model.onnx")
    open(f"{d}/input_0.pb", "wb").write(numpy_helper.from_array(a, "alpha_in").SerializeToString())
    open(f"{d}/input_1.pb", "wb").write(numpy_helper.from_array(b, "beta_in").SerializeToString())
    open(f"{d}/output_0.pb", "wb").write(numpy_helper.from_array(a + b + delta, "sum_out").SerializeToString())
PYEOF
if [ $? -ne 0 ]; then echo "cannot generate test models with $PY" >&2; echo "0 passed, 1 failed"; exit 1; fi
M=$T/add.onnx

# ---- usage and help ----
expect_rc 2 "no command" "$CORT"
expect_rc 0 "--help" "$CORT" --help
expect_in "$T/stdout" "usage" "--help"
expect_rc 2 "unknown command" "$CORT" frobnicate
for c in info run test bench demo; do
    expect_rc 0 "$c --help" "$CORT" $c --help
    expect_in "$T/stdout" "usage: cort $c" "$c --help"
done
expect_rc 2 "run without model" "$CORT" run
expect_rc 2 "run bad --threads" "$CORT" run "$M" --threads abc
expect_rc 2 "run bad --output-format" "$CORT" run "$M" --output-format xml
expect_rc 2 "run bad --input" "$CORT" run "$M" --input alpha_in
expect_rc 2 "run unknown option" "$CORT" run "$M" --bogus
expect_rc 2 "info without model" "$CORT" info
expect_rc 2 "test without dir" "$CORT" test
expect_rc 2 "bench bad --runs" "$CORT" bench "$M" --runs 0
expect_rc 2 "demo without samples" "$CORT" demo "$M"

# ---- missing or bad files -> 1 with a message ----
expect_rc 1 "run missing model" "$CORT" run "$T/nope.onnx"
[ -s "$T/stderr" ] && ok || bad "run missing model: no message on stderr"
expect_rc 1 "info missing model" "$CORT" info "$T/nope.onnx"
expect_rc 1 "bench missing model" "$CORT" bench "$T/nope.onnx"
expect_rc 1 "demo missing model" "$CORT" demo "$T/nope.onnx" "$T"
expect_rc 1 "test missing dir" "$CORT" test "$T/nope"
expect_rc 1 "run unknown input name" "$CORT" run "$M" --input nosuch="$T/alpha.npy"
expect_in "$T/stderr" "nosuch" "unknown input message"
expect_rc 1 "run missing input file" "$CORT" run "$M" --input alpha_in="$T/nope.npy"
expect_rc 1 "run fortran-order npy" "$CORT" run "$M" --input alpha_in="$T/fortran.npy"
expect_in "$T/stderr" "fortran" "fortran-order message"

# ---- info ----
expect_rc 0 "info" "$CORT" info "$M"
for s in alpha_in beta_in sum_out "float[N,3]" "Add" "ai.onnx 13"; do expect_in "$T/stdout" "$s" "info"; done

# ---- run ----
expect_rc 0 "run random inputs" "$CORT" run "$M" --seed 7 --dim N=4
expect_in "$T/stdout" "sum_out: float[4,3]" "run summary"
"$CORT" run "$M" --seed 7 --dim N=4 > "$T/again" 2>/dev/null
if diff <(grep -v 'ms' "$T/stdout") <(grep -v 'ms' "$T/again") > /dev/null; then ok; else bad "run: same seed gives different values"; fi

expect_rc 0 "run --input-dir --output-dir npy" "$CORT" run "$M" --input-dir "$T/add_data" --output-dir "$T/out_npy"
expect_file "$T/out_npy/output_0.npy" "run npy output"
expect_rc 0 "run --output-format pb" "$CORT" run "$M" --input-dir "$T/add_data" --output-dir "$T/out_pb" --output-format pb
expect_file "$T/out_pb/output_0.pb" "run pb output"
expect_rc 0 "run --input NAME=FILE.npy" "$CORT" run "$M" --input alpha_in="$T/alpha.npy" \
    --input beta_in="$T/add_data/input_1.pb" --output-dir "$T/out_mixed" --threads 1 --optimization 0
"$PY" - "$T" <<'PYEOF' && ok || bad "run outputs differ from numpy"
import sys, numpy as np, onnx
from onnx import numpy_helper
T = sys.argv[1]
exp = np.load(f"{T}/add_expected.npy")
a = np.load(f"{T}/out_npy/output_0.npy")
t = onnx.TensorProto(); t.ParseFromString(open(f"{T}/out_pb/output_0.pb", "rb").read())
b = numpy_helper.to_array(t)
c = np.load(f"{T}/out_mixed/output_0.npy")
assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)
assert np.array_equal(a, exp) and np.array_equal(b, exp) and np.array_equal(c, exp), (a, b, c)
assert t.name == "sum_out", t.name
PYEOF

# ---- .npy dtype round trip through Identity ----
for d in float32 float64 float16 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool str; do
    expect_rc 0 "npy round trip $d" "$CORT" run "$T/id_$d.onnx" --input x="$T/id_$d.npy" --output-dir "$T/rt_$d"
done
"$PY" - "$T" <<'PYEOF' && ok || bad "npy round trip values"
import sys, numpy as np
T = sys.argv[1]
bad = []
for d in "float32 float64 float16 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool str".split():
    try:
        a = np.load(f"{T}/id_{d}.npy"); b = np.load(f"{T}/rt_{d}/output_0.npy")
        if a.dtype.kind != b.dtype.kind or (d != "str" and a.dtype != b.dtype) or a.shape != b.shape or not np.array_equal(a, b):
            bad.append(f"{d}: {a!r} vs {b!r}")
    except Exception as e:
        bad.append(f"{d}: {e}")
if bad:
    print("\n".join(bad), file=sys.stderr); sys.exit(1)
PYEOF

# ---- types added after ONNX 1.12: .npy in their one-byte form, .pb packed, `cort test` decoding ----
"$PY" - "$T" <<'PYEOF'
import sys, os, numpy as np, onnx
from onnx import helper, TensorProto
T = sys.argv[1]
F8, I4 = 17, 22   # float8e4m3fn, int4 (no names in onnx 1.12)
def model(path, to, src, dst, opset):
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=to)], "c",
        [helper.make_tensor_value_info("x", src, [5])], [helper.make_tensor_value_info("y", dst, [5])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
model(f"{T}/to_f8.onnx", F8, TensorProto.FLOAT, F8, 19)
model(f"{T}/from_f8.onnx", TensorProto.FLOAT, F8, TensorProto.FLOAT, 19)
model(f"{T}/to_i4.onnx", I4, TensorProto.FLOAT, I4, 21)
np.save(f"{T}/x5.npy", np.array([1.0, -2.0, 448.0, 1e6, 0.1], np.float32))
# a backend-test folder whose expected int4 output is packed by hand: -9 wraps to 7, 8 to -8
d = f"{T}/t_i4/test_data_set_0"; os.makedirs(d)
import shutil; shutil.copy(f"{T}/to_i4.onnx", f"{T}/t_i4/model.onnx")
x = helper.make_tensor("x", TensorProto.FLOAT, [5], [-9.0, 8.0, 1.0, -1.0, 7.0])
y = onnx.TensorProto(); y.name = "y"; y.data_type = I4; y.dims.append(5)
y.raw_data = bytes([0x87, 0xF1, 0x07])
open(f"{d}/input_0.pb", "wb").write(x.SerializeToString()); open(f"{d}/output_0.pb", "wb").write(y.SerializeToString())
PYEOF
expect_rc 0 "run cast to float8 (npy out)" "$CORT" run "$T/to_f8.onnx" --input x="$T/x5.npy" --output-dir "$T/f8"
expect_rc 0 "run cast from float8 (npy in)" "$CORT" run "$T/from_f8.onnx" --input x="$T/f8/output_0.npy" --output-dir "$T/f8b"
"$PY" - "$T" <<'PYEOF' && ok || bad "float8 npy bit patterns"
import sys, numpy as np
T = sys.argv[1]
a = np.load(f"{T}/f8/output_0.npy"); b = np.load(f"{T}/f8b/output_0.npy")
assert a.dtype == np.uint8 and a.tolist() == [0x38, 0xC0, 0x7E, 0x7E, 0x1D], a   # saturating; 0.1 -> 0.1015625
assert b.tolist() == [1.0, -2.0, 448.0, 448.0, 0.1015625], b
PYEOF
expect_rc 0 "test int4 packed expected output" "$CORT" test "$T/t_i4"
expect_in "$T/stdout" "PASS" "test int4 packed expected output"
expect_rc 0 "run cast to int4 (pb out)" "$CORT" run "$T/to_i4.onnx" --input-dir "$T/t_i4/test_data_set_0" --output-dir "$T/i4" --output-format pb
if cmp -s "$T/i4/output_0.pb" "$T/t_i4/test_data_set_0/output_0.pb"; then ok; else bad "int4 .pb output is not packed like ONNX's"; fi

# ---- test ----
NODE=$DATA/node
expect_rc 0 "test 3 node tests" "$CORT" test "$NODE/test_add" "$NODE/test_relu" "$NODE/test_abs"
expect_in "$T/stdout" "PASS node/test_add" "test per-test line"
if [ "$(tail -n 1 "$T/stdout")" = "3 passed, 0 failed" ]; then ok; else bad "test summary: '$(tail -n 1 "$T/stdout")'"; fi
expect_rc 0 "test --no-fork --concurrency 1" "$CORT" test --no-fork --concurrency 1 --threads 1 "$NODE/test_add"
expect_in "$T/stdout" "1 passed, 0 failed" "test --no-fork"
expect_rc 1 "test suite folder with a broken test" "$CORT" test --list-failures "$T/failures" -j 2 "$T/mysuite"
expect_in "$T/stdout" "PASS mysuite/test_good" "test suite discovery"
expect_in "$T/stdout" "FAIL mysuite/test_broken: " "test failure line"
expect_in "$T/stdout" "sum_out" "failure names the output"
if [ "$(tail -n 1 "$T/stdout")" = "1 passed, 1 failed" ]; then ok; else bad "test summary: '$(tail -n 1 "$T/stdout")'"; fi
if [ "$(cat "$T/failures" 2>/dev/null)" = "mysuite/test_broken" ]; then ok; else bad "--list-failures content"; fi
expect_rc 1 "test --quiet" "$CORT" test --quiet "$T/mysuite"
if grep -q '^PASS' "$T/stdout"; then bad "--quiet printed PASS lines"; else ok; fi
expect_in "$T/stdout" "FAIL mysuite/test_broken" "test --quiet shows failures"

# ---- bench ----
expect_rc 0 "bench --json" "$CORT" bench "$M" --runs 5 --warmup 1 --json --dim N=2
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["create_ms", "first_run_ms", "median_ms", "p90_ms", "min_ms", "runs", "peak_rss_kb"]
missing = [k for k in keys if k not in d]
assert not missing, missing
assert d["runs"] == 5 and d["min_ms"] <= d["median_ms"] <= d["p90_ms"], d
' "$T/stdout" && ok || bad "bench --json output: $(cat "$T/stdout")"
expect_rc 0 "bench text" "$CORT" bench "$M" --runs 3 --input-dir "$T/add_data" --threads 1
expect_in "$T/stdout" "median" "bench text"
expect_rc 0 "bench --profile" "$CORT" bench "$M" --runs 3 --dim N=2 --profile 5
expect_in "$T/stdout" "op type" "bench --profile table"
expect_rc 0 "bench --profile --json" "$CORT" bench "$M" --runs 4 --dim N=2 --profile --json
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
ran = [p for p in d["profile"] if p["provider"] != "folded"]
assert ran and all(p["calls"] == 4 and p["ms"] >= 0 for p in ran), d["profile"]
' "$T/stdout" && ok || bad "bench --profile --json output: $(cat "$T/stdout")"

# ---- demo ----
if [ -f "$ROOT/demo/digits_cnn.onnx" ] && [ -d "$ROOT/demo/samples" ]; then
    expect_rc 0 "demo" "$CORT" demo "$ROOT/demo/digits_cnn.onnx" "$ROOT/demo/samples"
    expect_in "$T/stdout" "accuracy" "demo output"
    expect_in "$T/stdout" "median latency" "demo output"
fi
expect_rc 1 "demo missing samples" "$CORT" demo "$M" "$T/nope"

# --version: the version, the ISA level in use and the levels this CPU supports; CORT_ISA caps the level
expect_rc 0 "--version" env -u CORT_ISA "$CORT" --version
expect_in "$T/stdout" "cort " "--version"
expect_in "$T/stdout" "isa: " "--version"
expect_in "$T/stdout" "levels: generic" "--version"
levels=$(sed -n 's/^levels: //p' "$T/stdout")
top=${levels##* }
expect_in "$T/stdout" "isa: $top (detected: $top; flags: " "--version without CORT_ISA uses the top level"
for lv in $levels; do
    expect_rc 0 "CORT_ISA=$lv --version" env CORT_ISA="$lv" "$CORT" --version
    expect_in "$T/stdout" "isa: $lv (detected: $top;" "CORT_ISA=$lv --version"
    expect_in "$T/stdout" "CORT_ISA=$lv)" "CORT_ISA=$lv --version"
    if [ "$lv" != "$top" ]; then expect_in "$T/stdout" "capped by CORT_ISA=$lv" "CORT_ISA=$lv --version"; fi
done
expect_rc 1 "CORT_ISA=bogus --version" env CORT_ISA=bogus "$CORT" --version
expect_in "$T/stderr" "CORT_ISA=bogus: unknown ISA level" "CORT_ISA=bogus --version"
expect_in "$T/stderr" "this CPU supports: $levels" "CORT_ISA=bogus --version"
case " $levels " in *" neon "*) foreign=avx2 ;; *) foreign=neon ;; esac
expect_rc 1 "CORT_ISA=$foreign --version" env CORT_ISA=$foreign "$CORT" --version
expect_in "$T/stderr" "CORT_ISA=$foreign: a level of another architecture" "CORT_ISA=$foreign --version"
# a bad CORT_ISA is reported by every command that creates a session, not only by --version
expect_rc 1 "CORT_ISA=bogus run" env CORT_ISA=bogus "$CORT" run tests/models/mlp.onnx
expect_in "$T/stderr" "CORT_ISA=bogus" "CORT_ISA=bogus run"

# placement: which provider runs each node, and why a node stayed on the CPU
expect_rc 0 "info --nodes" "$CORT" info tests/models/mlp.onnx --nodes
expect_in "$T/stdout" "placement (6 nodes" "info --nodes"
if "$CORT" info tests/models/xnnpack_conv.onnx --provider xnnpack > "$T/xnn" 2>/dev/null; then
    expect_in "$T/xnn" "xnnpack" "info --provider xnnpack shows xnnpack nodes"
    expect_rc 0 "info --provider xnnpack --nodes" "$CORT" info tests/models/realworld/ocr_tiny_det/model.onnx --provider xnnpack --nodes
    expect_in "$T/stdout" "(xnnpack: " "info --nodes gives the refusal reason"
fi

# custom operators from a library (tests/custom_op_lib/, built next to libcort) and the spinning switch
LIB=$(dirname "$CORT")/../lib/cort_test_custom_ops.so
expect_rc 1 "run custom op without its library" "$CORT" run tests/models/custom_op.onnx
expect_in "$T/stderr" "test.cort.ScaledAdd" "run custom op without its library"
if [ -f "$LIB" ]; then
    expect_rc 0 "run --custom-op-library" "$CORT" run tests/models/custom_op.onnx --custom-op-library "$LIB" --no-spin
    expect_in "$T/stdout" "Y: float[1,4]" "run --custom-op-library"
fi
expect_rc 1 "run --custom-op-library missing file" "$CORT" run tests/models/mlp.onnx --custom-op-library "$T/nope.so"
expect_in "$T/stderr" "nope.so" "run --custom-op-library missing file"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
