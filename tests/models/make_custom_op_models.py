"""Models with operators of a user domain ("test.cort"), for tests/test_custom_ops.c.

    /usr/bin/python3 tests/models/make_custom_op_models.py   # writes tests/models/custom_op*.onnx
"""
import os

import numpy as np
from onnx import TensorProto as TP, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("test.cort", 3)]


def vi(name, shape):
    return helper.make_tensor_value_info(name, TP.FLOAT, shape)


def write(name, graph):
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="cort tests")
    m.ir_version = 8
    save(m, os.path.join(HERE, name))


# Y = Relu(ScaledAdd(X, B; alpha=2.5)): a custom node between a graph input and a built-in op
b = numpy_helper.from_array(np.array([0.5, -1.0, 2.0, -3.0], np.float32), "B")
write("custom_op.onnx", helper.make_graph(
    [helper.make_node("ScaledAdd", ["X", "B"], ["S"], name="scale_add", domain="test.cort", alpha=2.5, tag="hello"),
     helper.make_node("Relu", ["S"], ["Y"], name="relu")],
    "custom_op", [vi("X", ["N", 4])], [vi("Y", ["N", 4])], initializer=[b]))

# every input of the custom node is constant: it must still run once per run, not be folded
c = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "C")
write("custom_op_const.onnx", helper.make_graph(
    [helper.make_node("ScaledAdd", ["C", "C"], ["S"], name="const_scale_add", domain="test.cort", alpha=1.0),
     helper.make_node("Add", ["S", "X"], ["Y"], name="add")],
    "custom_op_const", [vi("X", [2, 3])], [vi("Y", [2, 3])], initializer=[c]))
