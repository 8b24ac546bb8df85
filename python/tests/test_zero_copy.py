"""Inputs are wrapped, not copied; outputs are numpy views over cort's buffers whose base owns exactly
one cort_value reference."""
import gc
import weakref

import numpy as np
import pytest
from onnx import helper, TensorProto as TP

import cort as ort
from cort import _lib
from conftest import make_model, unary_model, vi, session


def _warm_up():
    """Lets process-wide lazy state (thread pools, once-initialized tables) settle before a baseline."""
    s = session(unary_model("Neg", TP.FLOAT, [4]))
    s.run(None, {"x": np.ones(4, np.float32)})
    del s
    gc.collect()
    return ort.get_allocator_stats()["bytes_in_use"]


def test_output_array_base_owns_the_cort_value():
    base = _warm_up()
    s = session(unary_model("Neg", TP.FLOAT, [1024, 1024]))
    x = np.ones((1024, 1024), np.float32)
    (y,) = s.run(None, {"x": x})
    owner = y.base
    assert type(owner).__name__ == "_CortBuffer"
    assert owner.value and _lib.lib.cort_tensor_data(owner.value) == y.ctypes.data
    assert y.flags.writeable and y.flags.c_contiguous
    assert ort.get_allocator_stats()["bytes_in_use"] >= base + y.nbytes
    ref = weakref.ref(owner)
    view = y[10:20]
    del y, owner, s   # the session goes too: the output must survive it
    gc.collect()
    assert ref() is not None, "a view must keep the buffer alive"
    assert np.all(view == -1)
    del view
    gc.collect()
    assert ref() is None
    # the last reference released the buffer (and with it what the session left behind)
    assert ort.get_allocator_stats()["bytes_in_use"] == base


def test_outputs_released_exactly_once_under_repetition():
    base = _warm_up()
    s = session(unary_model("Neg", TP.FLOAT, [256]))
    x = np.ones(256, np.float32)
    kept = [s.run(None, {"x": x})[0] for _ in range(200)]
    assert ort.get_allocator_stats()["bytes_in_use"] >= base + 200 * 1024
    assert len({k.ctypes.data for k in kept}) == 200
    assert all(np.all(k == -1) for k in kept)
    del kept, s
    gc.collect()
    assert ort.get_allocator_stats()["bytes_in_use"] == base


_NO_COPY_CHILD = r"""
import sys, numpy as np, onnx
from onnx import helper, TensorProto as TP
import cort as ort
n = 8 * 1024 * 1024   # 32 MiB of float32
g = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], "g",
                      [helper.make_tensor_value_info("x", TP.FLOAT, [n])], [helper.make_tensor_value_info("y", TP.FLOAT, [])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
s = ort.InferenceSession(m.SerializeToString())
x = np.ones(n, np.float32)
st0 = ort.get_allocator_stats()
(y,) = s.run(None, {"x": x})
st1 = ort.get_allocator_stats()
assert float(y) == n, y
# a copy of x would have pushed the process's peak to at least in_use + 32 MiB
assert st1["peak_bytes"] < st0["bytes_in_use"] + x.nbytes, (st0, st1)
print("ok")
"""


def test_input_is_not_copied():
    # the allocator's peak is a process-wide high-water mark: measure it in a fresh process
    import subprocess, sys, os
    r = subprocess.run([sys.executable, "-c", _NO_COPY_CHILD], capture_output=True, text=True, env=dict(os.environ),
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
    # and numpy did not copy it either: the array given to cort is x itself
    x = np.ones(1024, np.float32)
    ins = ort._values.Inputs()
    ins.tensor(x)
    try:
        assert ins.keep[0] is x and _lib.lib.cort_tensor_data(ins.values[0]) == x.ctypes.data
    finally:
        ins.release()


def test_output_never_aliases_an_input():
    s = session(unary_model("Identity", TP.FLOAT, [4]))
    x = np.arange(4, dtype=np.float32)
    (y,) = s.run(None, {"x": x})
    assert not np.shares_memory(x, y)
    y[0] = 100
    assert x[0] == 0


def test_ort_value_shares_memory():
    x = np.arange(4, dtype=np.float32)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    x[1] = 42
    assert v.numpy()[1] == 42


def test_writing_an_output_never_changes_the_session():
    w = helper.make_tensor("w", TP.FLOAT, [2], [3, 4])
    m = make_model([helper.make_node("Identity", ["x"], ["y"])], [vi("x", TP.FLOAT, [1])],
                   [vi("w", TP.FLOAT, [2]), vi("y", TP.FLOAT, [1])], initializers=[w])
    s = session(m)
    x = np.ones(1, np.float32)
    c, _ = s.run(None, {"x": x})
    c[0] = 99
    assert s.run(None, {"x": x})[0].tolist() == [3, 4]
