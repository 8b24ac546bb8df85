"""com.microsoft QLinearAdd / QLinearMul: with constant scales and zero points cort answers from a
table made at session creation, otherwise from per-run tables; both must equal the exact evaluation
(dequantize in double, add or multiply, divide by C_scale, round half to even, add C_zero_point,
saturate), for same shapes, broadcasts and a one-element side."""
import numpy as np
import pytest
from onnx import helper, numpy_helper, TensorProto as TP

import cort
from conftest import vi

NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8}
PARAMS = ["A_scale", "A_zero_point", "B_scale", "B_zero_point", "C_scale", "C_zero_point"]


def model(op, t, a_shape, b_shape, params, const):
    names = ["A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point"]
    inputs = [vi("A", NP2TP[t], list(a_shape)), vi("B", NP2TP[t], list(b_shape))]
    inits = []
    for k in PARAMS:
        if const:
            inits.append(numpy_helper.from_array(params[k], k))
        else:
            inputs.append(vi(k, TP.FLOAT if "scale" in k else NP2TP[t], []))
    g = helper.make_graph([helper.make_node(op, names, ["C"], domain="com.microsoft")], "g", inputs,
                          [vi("C", NP2TP[t], None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    return m.SerializeToString()


def reference(op, a, b, p, t):
    va = (a.astype(np.float64) - int(p["A_zero_point"])) * np.float64(p["A_scale"])
    vb = (b.astype(np.float64) - int(p["B_zero_point"])) * np.float64(p["B_scale"])
    v = (va + vb if op == "QLinearAdd" else va * vb) / np.float64(p["C_scale"])
    info = np.iinfo(t)
    return np.clip(np.rint(v) + int(p["C_zero_point"]), info.min, info.max).astype(t)


SHAPES = [((2, 16, 40, 41), (2, 16, 40, 41)), ((1, 8, 5, 5), (1, 8, 1, 1)), ((3, 7), (1,)), ((1,), (4, 9)),
          ((2, 1, 6), (5, 1)), ((2, 3, 4, 5), (1, 4, 5)), ((6,), (3, 4, 6)), ((2, 128, 768), (768,))]


@pytest.mark.parametrize("const", [True, False])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", range(len(SHAPES)))
def test_qlinear_binary_exact(shapes, t, op, const):
    a_shape, b_shape = SHAPES[shapes]
    r = np.random.default_rng(7 + shapes)
    info = np.iinfo(t)
    q = lambda shape: r.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(t)
    p = {"A_scale": np.array(0.037, np.float32), "A_zero_point": np.array(info.min + 90, t),
         "B_scale": np.array(0.011, np.float32), "B_zero_point": np.array(info.max - 20, t),
         "C_scale": np.array(0.021 if op == "QLinearAdd" else 0.013, np.float32),
         "C_zero_point": np.array(info.min + 110, t)}
    a, b = q(a_shape), q(b_shape)
    want = reference(op, a, b, p, t)
    feeds = {"A": a, "B": b}
    if not const:
        feeds.update(p)
    for threads in (1, 2):
        so = cort.SessionOptions()
        so.intra_op_num_threads = threads
        got = cort.InferenceSession(model(op, t, a_shape, b_shape, p, const), so).run(None, feeds)[0]
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.count_nonzero(got != want) == 0, f"{np.count_nonzero(got != want)} of {want.size} differ"
    assert 0 < np.count_nonzero((want == info.min) | (want == info.max)) < want.size or shapes != 0
