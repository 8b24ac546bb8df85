#!/usr/bin/python3
"""MatMulInteger with a constant B (packed for the int GEMM at session creation) against numpy's
int64 matmul: u8/s8 operands, zero points at the types' extremes, scalar or per column, batched A,
K = 1 and odd K, N across the 16-column panels. Writes backend-test folders
tests/models/versions/int_gemm_*; scripts/run_tests.sh runs every folder there at each ISA level."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "versions")
TT = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
rng = np.random.default_rng(2112)

# name, A type, B type, A shape, N, B zero point: 'col' per column (extremes included) or 'max'
CASES = [
    ("int_gemm_u8u8_batched_colzp", np.uint8, np.uint8, [3, 5, 67], 130, "col"),
    ("int_gemm_s8s8_colzp", np.int8, np.int8, [13, 299], 17, "col"),
    ("int_gemm_s8u8_k1", np.int8, np.uint8, [2, 7, 1], 1, "max"),
    ("int_gemm_u8s8_wide", np.uint8, np.int8, [67, 300], 129, "col"),
    ("int_gemm_u8s8_gemv", np.uint8, np.int8, [1, 768], 48, "max"),
]


def write(name, at, bt, ash, N, zmode):
    ai, bi = np.iinfo(at), np.iinfo(bt)
    K = ash[-1]
    a = rng.integers(ai.min, ai.max + 1, size=ash, dtype=at)
    b = rng.integers(bi.min, bi.max + 1, size=(K, N), dtype=bt)
    if zmode == "col":
        bz = rng.integers(bi.min, bi.max + 1, size=(N,), dtype=bt)
        bz[0], bz[-1] = bi.min, bi.max
    else:
        bz = np.array(bi.max, dtype=bt)
    az = np.array(ai.min, dtype=at)
    y = (a.astype(np.int64) - int(az)) @ (b.astype(np.int64) - bz.astype(np.int64))
    assert np.abs(y).max() < 2**31
    y = y.astype(np.int32)
    node = helper.make_node("MatMulInteger", ["A", "B", "az", "bz"], ["Y"])
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("A", TT[at], ash)],
                          [helper.make_tensor_value_info("Y", TensorProto.INT32, list(y.shape))],
                          [numpy_helper.from_array(b, "B"), numpy_helper.from_array(az, "az"),
                           numpy_helper.from_array(bz, "bz")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, "A").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "Y").SerializeToString())


for c in CASES:
    write(*c)
