"""The onnxruntime Python surface beyond sessions: DLPack, devices, sparse tensors, provider
arguments, logging callback, graph assignment, ORT_LOAD_CONFIG_FROM_MODEL, free-dim overrides."""
import json
import os
import warnings

import numpy as np
import pytest
from onnx import helper, TensorProto as TP

from conftest import make_model, vi
import cort
from cort.capi.onnxruntime_pybind11_state import Fail, is_dlpack_uint8_tensor
from cort.capi.onnxruntime_inference_collection import check_and_normalize_provider_args


def _relu(shape=("B", 3)):
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="relu_0")], [vi("x", TP.FLOAT, list(shape))],
                      [vi("y", TP.FLOAT, list(shape))])


def test_dlpack_round_trips_share_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = cort.OrtValue.ortvalue_from_numpy(a)
    cap = v.to_dlpack()
    assert not is_dlpack_uint8_tensor(cap)
    w = cort.OrtValue.from_dlpack(cap)
    assert w.data_ptr() == v.data_ptr() and w.shape() == [3, 4]
    np.testing.assert_array_equal(w.numpy(), a)
    # numpy's capsules, zero-size ones included, and bool through our own export
    z = cort.OrtValue.from_dlpack(np.zeros((2, 0, 3), np.float32))
    assert z.shape() == [2, 0, 3]
    b = cort.OrtValue.from_dlpack(cort.OrtValue.ortvalue_from_numpy(np.array([True, False])))
    assert b.numpy().dtype == np.bool_ and b.numpy().tolist() == [True, False]
    assert v.__dlpack_device__() == (1, 0)
    with pytest.raises(Exception):
        cort.OrtValue.from_dlpack(cap)   # a capsule is consumed once


def test_ortvalue_ort_integers_and_array_protocol():
    a = np.arange(6, dtype=np.int64)
    v = cort.OrtValue.ortvalue_from_numpy(a)
    assert v.element_type() == 7 and v.tensor_size_in_bytes() == 48
    assert np.asarray(v).ctypes.data == v.data_ptr()
    assert np.asarray(v, dtype=np.float64).dtype == np.float64
    t = cort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.zeros(4, np.uint16), 16)   # bfloat16 bits
    assert t.element_type() == 16 and t.shape() == [4]
    with pytest.raises(cort.capi.onnxruntime_pybind11_state.InvalidArgument):
        cort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.zeros(4, np.uint16), 1)


def test_sparse_tensors_coo_and_csr():
    dev = cort.OrtDevice.make("cpu", 0)
    coo = cort.SparseTensor.sparse_coo_from_numpy([3, 3], np.array([1, 2], np.float32), np.array([1, 8]), dev)
    assert coo.format() == cort.OrtSparseFormat.ORT_SPARSE_COO and coo.data_type() == "sparse_tensor(float)"
    assert not coo.values().flags.writeable
    np.testing.assert_array_equal(coo.to_dense(), [[0, 1, 0], [0, 0, 0], [0, 0, 2]])
    csr = cort.SparseTensor.sparse_csr_from_numpy([2, 3], np.array([5, 6], np.float32), np.array([2, 0]),
                                                  np.array([0, 1, 2]), dev)
    np.testing.assert_array_equal(csr.to_dense(), [[0, 0, 5], [6, 0, 0]])
    assert cort.OrtValue.ort_value_from_sparse_tensor(csr).as_sparse_tensor() is csr
    with pytest.raises(RuntimeError):
        csr.to_cuda(cort.OrtDevice.make("cuda", 0))
    with pytest.raises(RuntimeError):
        cort.SparseTensor.sparse_coo_from_numpy([3, 3], np.ones(2, np.float32), np.array([1]), dev)


def test_devices_and_memory_infos():
    assert cort.OrtDevice.make("cuda", 0).device_vendor_id() == cort.OrtDeviceVendorId.NVIDIA
    info = cort.OrtMemoryInfo.create_v2("x", cort.OrtMemoryInfoDeviceType.CPU, 0, 0,
                                        cort.OrtDeviceMemoryType.DEFAULT, 64, cort.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    assert info.device_mem_type == cort.OrtDeviceMemoryType.DEFAULT
    with pytest.raises(RuntimeError):
        cort.OrtMemoryInfo.create_v2("g", cort.OrtMemoryInfoDeviceType.GPU, 0, 0, 0, 64, 0)
    s = cort.InferenceSession(_relu())
    assert [m.name for m in s.get_input_memory_infos()] == ["Cpu"]
    with pytest.raises(RuntimeError):
        cort.OrtValue.ortvalue_from_numpy(np.ones(2, np.float32), "cuda", 0)


def test_provider_arguments_and_set_providers():
    assert check_and_normalize_provider_args([("a", {1: 2}), "b"], None, ["a"]) == (["a", "b"], [{"1": "2"}, {}])
    with pytest.warns(UserWarning):
        check_and_normalize_provider_args(["a", "a"], None, [])
    for bad in ((3, None), ([3], None), (["a"], 3), (["a"], ["x"]), (["a", "b"], [{}]), ([("a", {})], [{}])):
        with pytest.raises(ValueError):
            check_and_normalize_provider_args(*bad, [])
    assert cort.get_all_providers()[-1] == "CPUExecutionProvider"
    s = cort.InferenceSession(_relu())
    with pytest.raises(Fail, match="Unknown Provider Type: Nope"):
        s.set_providers(["Nope"])


def test_logger_callback_and_graph_assignment():
    got = []
    cort.set_default_logger_callback(lambda *a: got.append(a), severity=0)
    try:
        so = cort.SessionOptions()
        so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        s = cort.InferenceSession(_relu(), so)
    finally:
        cort.set_default_logger_callback(None)
        cort.set_default_logger_severity(2)
    assert got and all(isinstance(x, str) for x in got[0][1:])
    info = s.get_provider_graph_assignment_info()
    assert [(g.ep_name, [(n.op_type, n.name) for n in g.get_nodes()]) for g in info] == \
        [("CPUExecutionProvider", [("Relu", "relu_0")])]
    with pytest.raises(Fail, match="record_ep_graph_assignment_info"):
        cort.InferenceSession(_relu()).get_provider_graph_assignment_info()
    with pytest.raises(RuntimeError):
        cort.set_default_logger_callback(print, severity=7)


def test_free_dimension_overrides_show_in_inputs(tmp_path):
    so = cort.SessionOptions()
    so.add_free_dimension_override_by_name("B", 5)
    assert cort.InferenceSession(_relu(), so).get_inputs()[0].shape == [5, 3]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x", TP.FLOAT, ["B", 3])],
                          [vi("y", TP.FLOAT, ["B", 3])])
    g.input[0].type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    so = cort.SessionOptions()
    so.add_free_dimension_override_by_denotation("DATA_BATCH", 4)
    s = cort.InferenceSession(m.SerializeToString(), so)
    assert s.get_inputs()[0].shape == [4, 3]
    with pytest.raises(RuntimeError):
        s.run(None, {"x": np.ones((2, 3), np.float32)})   # the override is enforced


def test_load_config_from_model(monkeypatch):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x", TP.FLOAT, [2])],
                          [vi("y", TP.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    helper.set_model_props(m, {"ort_config": json.dumps({"session_options": {
        "intra_op_num_threads": 1, "inter_op_num_threads": 3, "graph_optimization_level": 1}})})
    so = cort.SessionOptions()
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    s = cort.InferenceSession(m.SerializeToString(), so)
    got = s.get_session_options()
    assert (got.intra_op_num_threads, got.inter_op_num_threads, int(got.graph_optimization_level)) == (1, 3, 1)
    assert so.intra_op_num_threads == 0   # the caller's options are not changed
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "0")
    assert cort.InferenceSession(m.SerializeToString()).get_session_options().inter_op_num_threads == 0
