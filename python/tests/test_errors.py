"""cort error codes become onnxruntime-named exception classes carrying cort's message."""
import numpy as np
import pytest
from onnx import helper, TensorProto as TP

import cort as ort
from cort.capi.onnxruntime_pybind11_state import (Fail, InvalidArgument, NoSuchFile, NotImplemented, InvalidGraph,
                                                 RuntimeException)
from conftest import make_model, vi, session


def test_hierarchy():
    for cls in (Fail, InvalidArgument, NoSuchFile, NotImplemented, InvalidGraph, RuntimeException):
        assert issubclass(cls, ort.Error) and issubclass(cls, RuntimeError)
    from cort.capi import _pybind_state
    assert _pybind_state.InvalidArgument is InvalidArgument


def test_no_such_file(tmp_path):
    with pytest.raises(NoSuchFile) as e:
        ort.InferenceSession(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in str(e.value) and e.value.code == "IO"


def test_invalid_model_bytes():
    with pytest.raises(InvalidGraph) as e:
        ort.InferenceSession(b"\x08\x07\x12\xff\xff\xff garbage")
    assert e.value.code == "INVALID_MODEL" and str(e.value)


def test_not_implemented_operator():
    m = make_model([helper.make_node("NoSuchOp", ["x"], ["y"], domain="")], [vi("x", TP.FLOAT, [1])],
                   [vi("y", TP.FLOAT, [1])])
    with pytest.raises((NotImplemented, InvalidGraph)) as e:
        ort.InferenceSession(m)
    assert "NoSuchOp" in str(e.value)
    m = make_model([helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1,
                                     max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                                     pool_int64s=[1])], [vi("x", TP.INT64, [3])], [vi("y", TP.FLOAT)], opset=9)
    try:
        ort.InferenceSession(m)
    except NotImplemented as e:
        assert e.code == "NOT_IMPLEMENTED" and "TfIdfVectorizer" in str(e)


def test_invalid_argument_cases(add_session):
    x = np.ones((2, 4), np.float32)
    with pytest.raises(InvalidArgument, match="nope"):
        add_session.run(None, {"a": x, "b": x, "nope": x})
    with pytest.raises(InvalidArgument, match="'zz'"):
        add_session.run(["zz"], {"a": x, "b": x})
    with pytest.raises(InvalidArgument, match="'a'"):
        add_session.run(None, {"a": np.ones((2, 5), np.float32), "b": x})
    with pytest.raises(InvalidArgument):
        add_session.run(None, {"a": x.astype(np.int32), "b": x})
    with pytest.raises(ValueError, match=r"Required inputs \(\['b'\]\) are missing"):
        add_session.run(None, {"a": x})   # missing input: ValueError, as onnxruntime raises
    with pytest.raises(TypeError):
        add_session.run(None, [x, x])


def test_kernel_shape_error_names_node():
    m = make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="my_reshape")],
                   [vi("x", TP.FLOAT), vi("s", TP.INT64)], [vi("y", TP.FLOAT)])
    with pytest.raises(ort.Error) as e:
        session(m).run(None, {"x": np.ones(6, np.float32), "s": np.array([4, 4])})
    assert "my_reshape" in str(e.value) and "Reshape" in str(e.value)


def test_runtime_exception():
    # A Loop whose scan output changes shape between iterations cannot be stacked: a run-time failure.
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TP.INT64, [], [1])),
         helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", TP.INT64, [], [0])),
         helper.make_node("Add", ["it", "one"], ["lim"]),
         helper.make_node("Range", ["zero", "lim", "one"], ["r"]),
         helper.make_node("Identity", ["c"], ["c_out"])],
        "body", [vi("it", TP.INT64, []), vi("c", TP.BOOL, [])], [vi("c_out", TP.BOOL, []), vi("r", TP.INT64, None)])
    m = make_model([helper.make_node("Loop", ["M", ""], ["ys"], body=body)], [vi("M", TP.INT64, [])],
                   [vi("ys", TP.INT64)], opset=16)
    s = session(m)
    assert s.run(None, {"M": np.array(1, np.int64)})[0].tolist() == [[0]]
    with pytest.raises(RuntimeException) as e:
        s.run(None, {"M": np.array(3, np.int64)})
    assert e.value.code == "RUNTIME" and "Loop" in str(e.value)


def test_cancelled_is_fail(add_session):
    ro = ort.RunOptions()
    ro.terminate = True
    x = np.ones((2, 4), np.float32)
    with pytest.raises(Fail) as e:
        add_session.run(None, {"a": x, "b": x}, ro)
    assert e.value.code == "CANCELLED"


def test_session_usable_after_errors(add_session):
    x = np.ones((2, 4), np.float32)
    for _ in range(3):
        with pytest.raises(InvalidArgument):
            add_session.run(None, {"a": x, "b": x.astype(np.float64)})
    assert np.array_equal(add_session.run(None, {"a": x, "b": x})[0], 2 * x)


def test_cpu_info():
    info = ort.get_cpu_info()
    assert info.startswith("isa: ") and "detected: " in info


def test_bad_cort_isa_fails_session_creation():
    # CORT_ISA is read once per process: check it in a fresh interpreter
    import os, subprocess, sys
    code = ("import cort as ort\n"
            "from cort.capi.onnxruntime_pybind11_state import InvalidArgument\n"
            "try:\n    ort.get_cpu_info()\nexcept InvalidArgument as e:\n    print('error', e)\n"
            "try:\n    ort.InferenceSession('demo/digits_cnn.onnx')\nexcept InvalidArgument as e:\n    print('session', e)\n")
    env = dict(os.environ, CORT_ISA="bogus")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True).stdout
    assert "error CORT_ISA=bogus" in out and "session CORT_ISA=bogus" in out, out


def test_size_policy_config_entries():
    """cort.max_tensor_bytes: a Tile whose output would exceed it fails the run naming the node;
    cort.fold_budget: accepted; bad values are refused."""
    m = make_model([helper.make_node("Tile", ["x", "r"], ["y"], name="big_tile")],
                   [vi("x", TP.FLOAT), vi("r", TP.INT64)], [vi("y", TP.FLOAT)])
    so = ort.SessionOptions()
    so.add_session_config_entry("cort.max_tensor_bytes", "4096")
    so.add_session_config_entry("cort.fold_budget", "0")
    sess = ort.InferenceSession(m, so)
    x = np.ones(4, np.float32)
    assert sess.run(None, {"x": x, "r": np.array([256])})[0].shape == (1024,)   # exactly 4096 bytes
    with pytest.raises(InvalidArgument) as e:
        sess.run(None, {"x": x, "r": np.array([257])})
    assert "big_tile" in str(e.value) and "max_tensor_bytes" in str(e.value)
    so.add_session_config_entry("cort.max_tensor_bytes", "lots")
    with pytest.raises(InvalidArgument, match="cort.max_tensor_bytes"):
        ort.InferenceSession(m, so)
