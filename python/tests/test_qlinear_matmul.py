"""QLinearMatMul with per-tensor, per-row (A, Y) and per-column (B) scales and zero points, against an
exact numpy evaluation: int32 sum of (a - a_zp[row]) * (b - b_zp[col]), times the float32 multiplier
(a_scale[row] * b_scale[col]) / y_scale[row], rounded half to even, plus y_zp[row], saturated."""
import numpy as np
import pytest
from onnx import helper, numpy_helper, TensorProto as TP

import cort
from conftest import make_model, vi

NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8}


def qlmm_model(a_shape, b, b_const, params, yt):
    """params: name -> array for a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point
    (initializers); B an initializer (the pack made at creation) or an input."""
    names = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in params.items()]
    inputs = [vi("a", NP2TP[params["a_zero_point"].dtype.type], a_shape)]
    if b_const:
        inits.append(numpy_helper.from_array(b, "b"))
    else:
        inputs.append(vi("b", NP2TP[b.dtype.type], list(b.shape)))
    node = helper.make_node("QLinearMatMul", names, ["y"])
    return make_model([node], inputs, [vi("y", NP2TP[yt], None)], inits, opset=13)


def reference(a, b, p, yt):
    M, N = a.shape[-2], b.shape[-1]
    az = np.asarray(p["a_zero_point"]).astype(np.int64).reshape(-1, 1) if p["a_zero_point"].size > 1 else \
        np.int64(p["a_zero_point"].reshape(-1)[0])
    bz = np.asarray(p["b_zero_point"]).astype(np.int64).reshape(1, -1) if p["b_zero_point"].size > 1 else \
        np.int64(p["b_zero_point"].reshape(-1)[0])
    acc = np.matmul(a.astype(np.int64) - az, b.astype(np.int64) - bz).astype(np.int32)
    sa = p["a_scale"].astype(np.float32).reshape(-1, 1) if p["a_scale"].size > 1 else np.float32(p["a_scale"].reshape(-1)[0])
    sb = p["b_scale"].astype(np.float32).reshape(1, -1) if p["b_scale"].size > 1 else np.float32(p["b_scale"].reshape(-1)[0])
    sy = p["y_scale"].astype(np.float32).reshape(-1, 1) if p["y_scale"].size > 1 else np.float32(p["y_scale"].reshape(-1)[0])
    mult = (np.float32(sa) * np.float32(sb) / np.float32(sy)).astype(np.float32)
    mult = np.broadcast_to(mult, (M, N))
    yz = p["y_zero_point"].astype(np.int64).reshape(-1, 1) if p["y_zero_point"].size > 1 else \
        np.int64(p["y_zero_point"].reshape(-1)[0])
    v = np.rint(acc.astype(np.float32) * mult).astype(np.int64) + yz
    info = np.iinfo(yt)
    return np.clip(v, info.min, info.max).astype(yt)


CASES = [
    # (batch dims, M, K, N, a type, b type, y type, per-row a, per-col b, per-row y)
    ((), 1, 64, 1000, np.uint8, np.int8, np.uint8, False, True, False),    # a classifier head as quantizers write it
    ((), 7, 33, 19, np.uint8, np.uint8, np.uint8, False, False, False),
    ((), 6, 17, 16, np.int8, np.int8, np.int8, True, True, True),
    ((2,), 5, 20, 13, np.uint8, np.int8, np.int8, True, True, False),
    ((3, 2), 4, 9, 7, np.int8, np.uint8, np.uint8, False, True, True),
    ((), 13, 1, 31, np.uint8, np.int8, np.uint8, True, False, True),
]


@pytest.mark.parametrize("b_const", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_qlinear_matmul_per_row_and_column(case, b_const):
    batch, M, K, N, at, bt, yt, pa, pb, py = CASES[case]
    r = np.random.default_rng(100 + case)
    def q(t, shape):
        i = np.iinfo(t)
        return r.integers(i.min, i.max + 1, size=shape, dtype=np.int64).astype(t)
    a = q(at, batch + (M, K))
    b = q(bt, (K, N))
    p = {"a_scale": (r.uniform(0.01, 0.05, M) if pa else np.array(0.02)).astype(np.float32),
         "a_zero_point": q(at, (M,) if pa else ()),
         "b_scale": (r.uniform(0.002, 0.02, N) if pb else np.array(0.01)).astype(np.float32),
         "b_zero_point": q(bt, (N,) if pb else ()),
         "y_scale": (r.uniform(0.5, 3.0, M) if py else np.array(1.5)).astype(np.float32),
         "y_zero_point": q(yt, (M,) if py else ())}
    want = reference(a, b, p, yt)
    for threads in (1, 3):
        so = cort.SessionOptions()
        so.intra_op_num_threads = threads
        sess = cort.InferenceSession(qlmm_model(list(a.shape), b, b_const, p, yt), so)
        feeds = {"a": a} if b_const else {"a": a, "b": b}
        got = sess.run(None, feeds)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        bad = np.count_nonzero(got != want)
        assert bad == 0, f"{bad} of {want.size} outputs differ (threads {threads})"


@pytest.mark.parametrize("which,count", [("b_scale", 3), ("a_scale", 2), ("y_zero_point", 5)])
def test_qlinear_matmul_bad_param_count(which, count):
    M, K, N = 4, 8, 6
    p = {"a_scale": np.array(0.02, np.float32), "a_zero_point": np.array(3, np.uint8),
         "b_scale": np.array(0.01, np.float32), "b_zero_point": np.array(0, np.int8),
         "y_scale": np.array(1.0, np.float32), "y_zero_point": np.array(128, np.uint8)}
    p[which] = np.resize(p[which], count)
    b = np.ones((K, N), np.int8)
    sess = cort.InferenceSession(qlmm_model([M, K], b, True, p, np.uint8))
    with pytest.raises(Exception, match=which):
        sess.run(None, {"a": np.ones((M, K), np.uint8)})


def qgemm_model(M, K, N, ta, tb, b, b_const, p, with_c, quant_out):
    names = ["A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C", "y_scale", "y_zero_point"]
    a_shape = [K, M] if ta else [M, K]
    inputs = [vi("A", TP.UINT8, a_shape)]
    inits = [numpy_helper.from_array(v, k) for k, v in p.items() if k not in ("y_scale", "y_zero_point") or quant_out]
    if b_const:
        inits.append(numpy_helper.from_array(b, "B"))
    else:
        inputs.append(vi("B", TP.INT8, list(b.shape)))
    if not with_c:
        names[6] = ""
        inits = [i for i in inits if i.name != "C"]
    if not quant_out:
        names = names[:7]
    node = helper.make_node("QGemm", names, ["Y"], domain="com.microsoft", alpha=0.75, transA=ta, transB=tb)
    g = helper.make_graph([node], "g", inputs, [vi("Y", TP.UINT8 if quant_out else TP.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)]).SerializeToString()


@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("b_const", [True, False])
@pytest.mark.parametrize("quant_out", [True, False])
def test_qgemm_transposed_constant_b(tb, ta, b_const, quant_out):
    """QGemm packs a constant B at creation, upright or transposed (transB = 1, how PyTorch's Linear
    exports): the result equals the exact integer product, scaled as the op defines."""
    M, K, N = 3, 37, 21
    r = np.random.default_rng(5 + 2 * ta + tb)
    a = r.integers(0, 256, size=(K, M) if ta else (M, K), dtype=np.int64).astype(np.uint8)
    b = r.integers(-128, 128, size=(N, K) if tb else (K, N), dtype=np.int64).astype(np.int8)
    p = {"a_scale": np.array(0.02, np.float32), "a_zero_point": np.array(131, np.uint8),
         "b_scale": r.uniform(0.001, 0.01, N).astype(np.float32), "b_zero_point": np.zeros(N, np.int8),
         "C": r.integers(-5000, 5000, size=N, dtype=np.int64).astype(np.int32),
         "y_scale": np.array(0.05, np.float32), "y_zero_point": np.array(128, np.uint8)}
    au = (a.T if ta else a).astype(np.int64) - 131
    bu = (b.T if tb else b).astype(np.int64)
    acc = (au @ bu).astype(np.int32)
    v = (acc.astype(np.float32) + p["C"].astype(np.float32)) * (np.float32(0.75 * 0.02) * p["b_scale"])
    want = np.clip(np.rint(v / np.float32(0.05)) + 128, 0, 255).astype(np.uint8) if quant_out else v
    sess = cort.InferenceSession(qgemm_model(M, K, N, ta, tb, b, b_const, p, True, quant_out))
    got = sess.run(None, {"A": a} if b_const else {"A": a, "B": b})[0]
    if quant_out:
        assert np.count_nonzero(got.astype(np.int64) - want) <= 1 and np.abs(got.astype(np.int64) - want).max() <= 1
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
