"""InferenceSession, options, metadata and module-level calls, as onnxruntime code uses them."""
import os
import pathlib

import numpy as np
import pytest
from onnx import helper, TensorProto as TP

import cort as ort
from conftest import make_model, add_model, vi, session, NODE_DATA


def test_module_level():
    assert isinstance(ort.__version__, str) and ort.__version__.count(".") == 2
    assert ort.get_version_string() == ort.__version__
    assert ort.get_device() == "CPU"
    prov = ort.get_available_providers()
    assert prov[-1] == "CPUExecutionProvider"
    assert set(prov) <= set(ort.get_all_providers())
    assert "cort" in ort.get_build_info()
    ort.set_default_logger_severity(3)
    ort.set_default_logger_verbosity(0)
    stats = ort.get_allocator_stats()
    assert set(stats) == {"bytes_in_use", "peak_bytes", "allocations"}
    assert stats["peak_bytes"] >= stats["bytes_in_use"]


def test_create_from_bytes_path_pathlike_and_proto(tmp_path):
    model = add_model()
    p = tmp_path / "add.onnx"
    p.write_bytes(model)
    import onnx
    for src in (model, bytearray(model), str(p), pathlib.Path(p), onnx.load_from_string(model)):
        s = ort.InferenceSession(src)
        out = s.run(None, {"a": np.ones((2, 4), np.float32), "b": np.ones((2, 4), np.float32)})
        assert np.array_equal(out[0], np.full((2, 4), 2, np.float32))
    with pytest.raises(TypeError):
        ort.InferenceSession(12)


def test_inputs_outputs_types_and_symbolic_dims():
    s = session(add_model(shape=("batch", 4)))
    ins, outs = s.get_inputs(), s.get_outputs()
    assert [i.name for i in ins] == ["a", "b"]
    assert ins[0].type == "tensor(float)" and ins[0].shape == ["batch", 4]
    assert outs[0].name == "c" and outs[0].type == "tensor(float)" and outs[0].shape == ["batch", 4]
    assert "NodeArg" in repr(ins[0])
    # unknown dim (neither value nor name) -> None; unknown rank -> []
    m = make_model([helper.make_node("Identity", ["x"], ["y"])],
                   [helper.make_tensor_value_info("x", TP.INT64, [None, 3])], [vi("y", TP.INT64)])
    s = session(m)
    assert s.get_inputs()[0].shape == [None, 3] and s.get_inputs()[0].type == "tensor(int64)"
    assert s.get_outputs()[0].shape == []
    assert s.get_overridable_initializers() == []


def test_sequence_and_optional_type_strings():
    m = make_model([helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                   [helper.make_tensor_sequence_value_info("s", TP.FLOAT, None), vi("i", TP.INT64, [])],
                   [vi("y", TP.FLOAT)])
    s = session(m)
    assert s.get_inputs()[0].type == "seq(tensor(float))"
    assert s.get_inputs()[0].shape == []
    opt = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(TP.INT32, [2])))
    m = make_model([helper.make_node("OptionalHasElement", ["o"], ["h"])], [opt], [vi("h", TP.BOOL, [])], opset=16)
    assert session(m).get_inputs()[0].type == "optional(tensor(int32))"


def test_model_metadata():
    m = make_model([helper.make_node("Identity", ["x"], ["y"])], [vi("x", TP.FLOAT, [1])], [vi("y", TP.FLOAT, [1])],
                   graph_name="my_graph", graph_doc="graph doc", producer_name="unit-test", domain="test.domain",
                   doc_string="model doc", model_version=7)
    import onnx
    proto = onnx.load_from_string(m)
    helper.set_model_props(proto, {"author": "me", "license": "MIT"})
    meta = ort.InferenceSession(proto.SerializeToString()).get_modelmeta()
    assert meta.producer_name == "unit-test"
    assert meta.graph_name == "my_graph"
    assert meta.graph_description == "graph doc"
    assert meta.domain == "test.domain"
    assert meta.description == "model doc"
    assert isinstance(meta.version, int)
    assert isinstance(meta.custom_metadata_map, dict)
    if ort._lib.HAS_METADATA_KEYS:
        assert meta.custom_metadata_map == {"author": "me", "license": "MIT"}


def test_run_output_selection(add_session):
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.ones((2, 4), np.float32)
    for names in (None, [], ["c"]):
        (c,) = add_session.run(names, {"a": a, "b": b})
        assert np.array_equal(c, a + 1)
    two = make_model([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["a", "b"], ["p"])],
                     [vi("a", TP.FLOAT, [2]), vi("b", TP.FLOAT, [2])], [vi("s", TP.FLOAT, [2]), vi("p", TP.FLOAT, [2])])
    s = session(two)
    x, y = np.array([2, 3], np.float32), np.array([4, 5], np.float32)
    assert [r.tolist() for r in s.run(["p", "s"], {"a": x, "b": y})] == [[8, 15], [6, 8]]
    assert [r.tolist() for r in s.run(["p"], {"a": x, "b": y})] == [[8, 15]]


def test_python_lists_and_scalars_are_converted(add_session):
    (c,) = add_session.run(None, {"a": [[1, 2, 3, 4]], "b": [[1, 1, 1, 1]]})
    assert c.dtype == np.float32 and c.tolist() == [[2, 3, 4, 5]]
    s = session(make_model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", TP.INT64, [])], [vi("y", TP.INT64, [])]))
    (y,) = s.run(None, {"x": 5})
    assert y.shape == () and y.dtype == np.int64 and int(y) == -5


def test_session_options():
    so = ort.SessionOptions()
    assert so.intra_op_num_threads == 0
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 4
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.log_severity_level = 3
    so.enable_profiling = True
    so.enable_cpu_mem_arena = False
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(ort.Error):
        so.get_session_config_entry("nope")
    x = np.ones((3, 4), np.float32)
    for level in ort.GraphOptimizationLevel:
        so.graph_optimization_level = level
        s = ort.InferenceSession(add_model(), so)
        assert s.get_session_options() is so
        assert np.array_equal(s.run(None, {"a": x, "b": x})[0], 2 * x)
        prof = s.end_profiling()   # enable_profiling is set above: ORT's trace file
        assert prof.endswith(".json") and os.path.exists(prof)
        os.remove(prof)
        assert s.get_profiling_start_time_ns() > 0
    assert [int(v) for v in ort.GraphOptimizationLevel] == [0, 1, 2, 99]
    bad = ort.SessionOptions()
    bad.intra_op_num_threads = -1
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        ort.InferenceSession(add_model(), bad)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument, match="libfoo.so"):
        so.register_custom_ops_library("libfoo.so")


def test_allow_spinning_config_entry():
    for v in ("0", "1"):
        so = ort.SessionOptions()
        so.add_session_config_entry("session.intra_op.allow_spinning", v)
        s = ort.InferenceSession(add_model(), so)
        x = np.ones((2, 4), np.float32)
        assert np.array_equal(s.run(None, {"a": x, "b": x})[0], 2 * x)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "yes")
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument, match="allow_spinning"):
        ort.InferenceSession(add_model(), so)


def test_register_custom_ops_library():
    """The library tests/custom_op_lib/ builds next to libcort.so: test.cort.ScaledAdd = alpha*A + B."""
    from cort._lib import LIBRARY_PATH
    path = os.path.join(os.path.dirname(LIBRARY_PATH), "cort_test_custom_ops.so")
    if not os.path.exists(path):
        pytest.skip("cort_test_custom_ops.so is built with the tests (make)")
    model = helper.make_model(
        helper.make_graph([helper.make_node("ScaledAdd", ["a", "b"], ["c"], domain="test.cort", alpha=3.0)], "g",
                          [vi("a", TP.FLOAT, [2, 4]), vi("b", TP.FLOAT, [4])], [vi("c", TP.FLOAT, [2, 4])]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("test.cort", 1)]).SerializeToString()
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.NotImplemented, match="ScaledAdd"):
        ort.InferenceSession(model)
    so = ort.SessionOptions()
    so.register_custom_ops_library(path)
    sess = ort.InferenceSession(model, so)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.array([1, -1, 2, -2], np.float32)
    assert np.array_equal(sess.run(None, {"a": a, "b": b})[0], 3 * a + b)


def test_free_dimension_override():
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name("N", 2)
    s = ort.InferenceSession(add_model(shape=("N", 4)), so)
    x = np.ones((2, 4), np.float32)
    assert s.run(None, {"a": x, "b": x})[0].shape == (2, 4)
    y = np.ones((3, 4), np.float32)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        s.run(None, {"a": y, "b": y})


def test_providers():
    m = add_model()
    s = ort.InferenceSession(m)
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert s.get_provider_options() == {"CPUExecutionProvider": {}}
    s = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    s = ort.InferenceSession(m, providers=[("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})])
    assert s.get_provider_options()["CPUExecutionProvider"] == {"arena_extend_strategy": "kSameAsRequested"}
    s = ort.InferenceSession(m, providers=["CPUExecutionProvider"], provider_options=[{"a": 1}])
    assert s.get_provider_options()["CPUExecutionProvider"] == {"a": "1"}
    with pytest.warns(UserWarning):
        s = ort.InferenceSession(m, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(ValueError):
        ort.InferenceSession(m, providers=["CPUExecutionProvider"], provider_options=[{}, {}])
    x = np.ones((1, 4), np.float32)
    if "XnnpackExecutionProvider" in ort.get_available_providers():
        s = ort.InferenceSession(m, providers=[("XnnpackExecutionProvider", {"intra_op_num_threads": 1}),
                                               "CPUExecutionProvider"])
        assert s.get_providers() == ["XnnpackExecutionProvider", "CPUExecutionProvider"]
        assert s.get_provider_options()["XnnpackExecutionProvider"] == {"intra_op_num_threads": "1"}
        assert np.array_equal(s.run(None, {"a": x, "b": x})[0], 2 * x)
    else:
        with pytest.warns(UserWarning):
            s = ort.InferenceSession(m, providers=["XnnpackExecutionProvider"])
        assert s.get_providers() == ["CPUExecutionProvider"]
    s.set_providers(["CPUExecutionProvider"])
    s.disable_fallback()
    s.enable_fallback()
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert np.array_equal(s.run(None, {"a": x, "b": x})[0], 2 * x)


def test_run_options():
    ro = ort.RunOptions()
    assert ro.terminate is False
    ro.log_severity_level = 3
    ro.run_tag = "tag"
    ro.add_run_config_entry("k", "v")
    assert ro.get_run_config_entry("k") == "v"
    s = session(add_model())
    x = np.ones((1, 4), np.float32)
    assert np.array_equal(s.run(None, {"a": x, "b": x}, ro)[0], 2 * x)
    ro.terminate = True
    assert ro.terminate is True
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail):
        s.run(None, {"a": x, "b": x}, ro)
    ro.terminate = False
    assert np.array_equal(s.run(None, {"a": x, "b": x}, run_options=ro)[0], 2 * x)
    with pytest.raises(TypeError):
        s.run(None, {"a": x, "b": x}, run_options="nope")


def test_ort_value_round_trip(add_session):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    assert v.is_tensor() and v.has_value() and not v.is_tensor_sequence()
    assert v.shape() == [2, 4] and v.data_type() == "tensor(float)" and v.element_type() == 1
    assert v.device_name() == "cpu" and v.data_ptr() == x.ctypes.data
    assert v.numpy() is x
    outs = add_session.run_with_ort_values(["c"], {"a": v, "b": v})
    assert isinstance(outs[0], ort.OrtValue)
    assert np.array_equal(outs[0].numpy(), 2 * x)
    # OrtValues are accepted by run() too
    assert np.array_equal(add_session.run(None, {"a": v, "b": x})[0], 2 * x)
    z = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.int32)
    assert z.shape() == [3, 2] and z.numpy().tolist() == [[0, 0]] * 3
    seq = ort.OrtValue.ortvalue_from_sequence([np.ones(2, np.float32), np.zeros(3, np.float32)])
    assert seq.is_tensor_sequence() and seq.data_type() == "seq(tensor(float))"
    assert [a.tolist() for a in seq.numpy()] == [[1, 1], [0, 0, 0]]
    with pytest.raises(ort.Error):
        ort.OrtValue.ortvalue_from_numpy(x, "cuda")


@pytest.mark.skipif(not os.path.isdir(NODE_DATA), reason="ONNX test data not installed")
def test_backend_test_model_from_file():
    s = ort.InferenceSession(os.path.join(NODE_DATA, "test_relu", "model.onnx"))
    x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 4, 5)
    (y,) = s.run(None, {s.get_inputs()[0].name: x})
    assert np.array_equal(y, np.maximum(x, 0))
