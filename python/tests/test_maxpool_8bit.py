"""MaxPool on uint8 / int8 runs on the bytes themselves: against the float MaxPool of the same
values (exact in float), over kernels, strides, pads, dilations, ceil_mode, 1-D to 3-D, batches
large enough to thread."""
import numpy as np
import pytest
from onnx import helper, TensorProto as TP

import cort
from conftest import make_model, vi

CASES = [
    ((2, 5, 11, 13), dict(kernel_shape=[3, 3], strides=[2, 2])),
    ((1, 64, 55, 55), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ((1, 3, 9, 10), dict(kernel_shape=[2, 3], pads=[1, 0, 0, 2])),
    ((2, 2, 8, 8), dict(kernel_shape=[3, 3], dilations=[2, 1], pads=[2, 1, 2, 1])),
    ((3, 4, 17), dict(kernel_shape=[4], strides=[3], pads=[1, 2])),
    ((1, 2, 5, 6, 7), dict(kernel_shape=[2, 2, 3], strides=[1, 2, 2])),
    ((1, 1, 4, 4), dict(kernel_shape=[4, 4])),
]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_maxpool_8bit_equals_float(case, dt, threads):
    shape, attrs = CASES[case]
    info = np.iinfo(dt)
    x = np.random.default_rng(case).integers(info.min, info.max + 1, size=shape).astype(dt)
    x.reshape(-1)[:2] = [info.min, info.max]
    so = cort.SessionOptions()
    so.intra_op_num_threads = threads
    outs = []
    for elem, arr in ((TP.UINT8 if dt == np.uint8 else TP.INT8, x), (TP.FLOAT, x.astype(np.float32))):
        m = make_model([helper.make_node("MaxPool", ["x"], ["y"], **attrs)], [vi("x", elem, list(shape))],
                       [vi("y", elem, None)], opset=12)
        outs.append(cort.InferenceSession(m, so).run(None, {"x": arr})[0])
    got, want = outs
    assert got.dtype == dt and got.shape == want.shape
    np.testing.assert_array_equal(got.astype(np.float32), want)
