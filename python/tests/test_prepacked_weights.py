"""cort.PrepackedWeights: sessions given one through SessionOptions.prepacked_weights share their
packed Conv and Gemm weights (cort_prepacked_weights in include/cort.h)."""
import numpy as np
import pytest
from onnx import helper, numpy_helper, TensorProto as TP

import cort as ort
from cort.capi.onnxruntime_pybind11_state import InvalidArgument
from conftest import make_model, vi


def conv_gemm_model(seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1
    g = rng.standard_normal((10, 32 * 8 * 8)).astype(np.float32) * 0.05
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "G"], ["y"], transB=1)]
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(g, "G")]
    return make_model(nodes, [vi("x", TP.FLOAT, [1, 16, 8, 8])], [vi("y", TP.FLOAT, [1, 10])], inits), w, g


def reference(x, w, g):
    """Conv (3x3, pad 1) + Relu + Gemm in numpy, double accumulation."""
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    c = np.zeros((32, 8, 8))
    for i in range(3):
        for j in range(3):
            c += np.einsum("mc,chw->mhw", w[:, :, i, j], xp[:, i:i + 8, j:j + 8])
    return (np.maximum(c, 0).reshape(1, -1) @ g.T.astype(np.float64)).astype(np.float32)


def run(model, pw=None):
    so = ort.SessionOptions()
    so.prepacked_weights = pw
    return ort.InferenceSession(model, so)


def test_sessions_share_packed_weights():
    model, w, g = conv_gemm_model(1)
    x = np.random.default_rng(2).standard_normal((1, 16, 8, 8)).astype(np.float32)
    want = run(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(want, reference(x, w, g), rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    pw = ort.PrepackedWeights()
    assert pw.count == 0 and pw.nbytes == 0
    a = run(model, pw)
    n = pw.count
    assert n >= 2 and pw.nbytes >= w.nbytes + g.nbytes
    b = run(model, pw)
    assert pw.count == n
    np.testing.assert_array_equal(a.run(None, {"x": x})[0], want)
    np.testing.assert_array_equal(b.run(None, {"x": x})[0], want)
    other, w2, g2 = conv_gemm_model(3)   # other weights: nothing shared
    c = run(other, pw)
    assert pw.count == 2 * n
    np.testing.assert_allclose(c.run(None, {"x": x})[0], reference(x, w2, g2), rtol=1e-4,
                               atol=1e-4 * float(np.abs(want).max()))
    del pw, a   # the container's owner and a session gone: the others keep the buffers
    np.testing.assert_array_equal(b.run(None, {"x": x})[0], want)


def test_prepacked_weights_type_checked():
    model, _, _ = conv_gemm_model(1)
    so = ort.SessionOptions()
    so.prepacked_weights = "shared"
    with pytest.raises(InvalidArgument, match="prepacked_weights"):
        ort.InferenceSession(model, so)
