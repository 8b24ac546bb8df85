"""Profiling (ONNX Runtime's chrome-trace JSON) and initializers given through SessionOptions."""
import json
import os

import numpy as np
from onnx import helper, TensorProto as TP

from conftest import make_model, vi
import cort

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models")


def _mul_add():
    w = helper.make_tensor("W", TP.FLOAT, [2], [1, -2])
    return make_model([helper.make_node("Mul", ["X", "W"], ["T"]), helper.make_node("Relu", ["T"], ["Y"])],
                      [vi("X", TP.FLOAT, ["N", 2])], [vi("Y", TP.FLOAT, ["N", 2])], [w])


def test_profile_json_schema(tmp_path):
    so = cort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = cort.InferenceSession(_mul_add(), so)
    assert sess.get_profiling_start_time_ns() > 0
    for n in (1, 3):
        sess.run(None, {"X": np.ones((n, 2), np.float32)})
    path = sess.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    events = json.load(open(path))
    assert [e["name"] for e in events if e["cat"] == "Session"].count("model_run") == 2
    kernels = [e for e in events if e["cat"] == "Node" and e["name"].endswith("_kernel_time")]
    assert kernels and all(e["ph"] == "X" and e["dur"] >= 0 and "ts" in e and "pid" in e and "tid" in e
                           for e in events)
    for e in kernels:
        a = e["args"]
        assert a["provider"] == "CPUExecutionProvider" and a["op_name"]
        assert "thread_scheduling_stats" in a and "output_type_shape" in a
    shapes = [e["args"]["input_type_shape"][0]["float"] for e in kernels]
    assert [1, 2] in shapes and [3, 2] in shapes
    assert cort.InferenceSession(_mul_add()).end_profiling() == ""


def test_add_initializer_overrides_model_weight():
    so = cort.SessionOptions()
    w = cort.OrtValue.ortvalue_from_numpy(np.array([-1, 2], np.float32))
    so.add_initializer("W", w)
    x = np.array([[1, 2], [3, 4]], np.float32)
    y = cort.InferenceSession(_mul_add(), so).run(None, {"X": x})[0]
    np.testing.assert_array_equal(y, np.maximum(x * w.numpy(), 0))


def test_external_initializers_and_files_in_memory():
    blob = open(os.path.join(MODELS, "ext_weights.bin"), "rb").read()
    w = np.frombuffer(blob[:24], np.float32).reshape(2, 3)
    model = open(os.path.join(MODELS, "ext_weights.onnx"), "rb").read()
    so = cort.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["ext_weights.bin"], [np.frombuffer(blob, np.uint8)], [len(blob)])
    b = cort.OrtValue.ortvalue_from_numpy(np.array([7, 8, 9], np.float32))
    so.add_external_initializers(["B"], [b])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = cort.InferenceSession(model, so).run(None, {"X": x})[0]
    np.testing.assert_array_equal(y, x * w + np.array([7, 8, 9], np.float32))


def test_optimized_model_filepath_round_trip(tmp_path):
    so = cort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    model = os.path.join(MODELS, "fuse_encoder.onnx")
    a = cort.InferenceSession(model, so)
    b = cort.InferenceSession(str(tmp_path / "opt.onnx"))
    import onnx
    saved = onnx.load(str(tmp_path / "opt.onnx"))
    onnx.checker.check_model(saved)
    names = [n.name for n in saved.graph.node if n.name]
    assert len(names) == len(set(names))   # ONNX Runtime refuses duplicate node names
    rng = np.random.default_rng(3)
    feed = {}
    for i in a.get_inputs():
        feed[i.name] = rng.standard_normal([d if isinstance(d, int) else 2 for d in i.shape]).astype(np.float32)
    for x, y in zip(a.run(None, feed), b.run(None, feed)):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-5 * float(np.abs(x).max()))
