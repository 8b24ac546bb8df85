"""I/O binding through the onnxruntime-style surface: io_binding(), SessionIOBinding, OrtDevice."""
import numpy as np
import pytest
from onnx import helper, TensorProto as TP

from conftest import make_model, vi
import cort
from cort.capi.onnxruntime_pybind11_state import SessionIOBinding, OrtDevice, OrtValueVector


def _mul_model():
    w = helper.make_tensor("W", TP.FLOAT, [3, 2], [1, 2, 3, 4, 5, 6])
    return make_model([helper.make_node("Mul", ["X", "W"], ["Y"])], [vi("X", TP.FLOAT, [3, 2])],
                      [vi("Y", TP.FLOAT, [3, 2])], [w])


W = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def test_bind_cpu_input_runs_repeatedly_on_current_contents():
    sess = cort.InferenceSession(_mul_model())
    io = sess.io_binding()
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    io.bind_cpu_input("X", x)
    io.bind_output("Y")
    for k in range(3):
        x[...] = np.arange(6).reshape(3, 2) * (k + 1) - 2
        sess.run_with_iobinding(io)
        np.testing.assert_array_equal(io.copy_outputs_to_cpu()[0], x * W)
        outs = io.get_outputs()
        assert len(outs) == 1 and outs[0].device_name() == "cpu"
        np.testing.assert_array_equal(outs[0].numpy(), x * W)


def test_preallocated_output_is_written():
    sess = cort.InferenceSession(_mul_model())
    io = sess.io_binding()
    x = np.ones((3, 2), np.float32) * 3
    out = cort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32)
    io.bind_ortvalue_input("X", cort.OrtValue.ortvalue_from_numpy(x))
    io.bind_ortvalue_output("Y", out)
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(out.numpy(), x * W)
    # a raw buffer bound by pointer
    y = np.zeros((3, 2), np.float32)
    io.bind_output("Y", "cpu", 0, np.float32, [3, 2], y.ctypes.data)
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(y, x * W)


def test_session_iobinding_c_surface_and_errors():
    sess = cort.InferenceSession(_mul_model())
    dev = OrtDevice(OrtDevice.cpu(), OrtDevice.default_memory(), 0)
    bind = SessionIOBinding(sess._sess)
    x = np.full((3, 2), 2, np.float32)
    v = cort.OrtValue.ortvalue_from_numpy(x, dev)
    bind.bind_input("X", dev, np.float32, x.shape, v.data_ptr())
    bind.bind_output("Y", dev)
    sess._sess.run_with_iobinding(bind, None)
    outs = bind.get_outputs()
    assert isinstance(outs, OrtValueVector)
    np.testing.assert_array_equal(outs[0].numpy(), x * W)
    with pytest.raises(cort.capi.onnxruntime_pybind11_state.InvalidArgument):
        bind.bind_output("nope", dev)
    with pytest.raises(Exception):
        bind.bind_input("X", OrtDevice(OrtDevice.cuda(), 0, 0), np.float32, x.shape, v.data_ptr())
    bind.clear_binding_inputs()
    with pytest.raises(Exception, match="not given"):
        sess._sess.run_with_iobinding(bind, None)
