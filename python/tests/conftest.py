"""Shared helpers: tiny ONNX models built with onnx.helper, serialized to bytes."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

onnx = pytest.importorskip("onnx")
from onnx import helper, TensorProto as TP  # noqa: E402

import cort  # noqa: E402

NODE_DATA = "/usr/share/libonnx-testdata/data/node"


def vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, initializers=(), opset=17, **kw):
    graph = helper.make_graph(nodes, kw.pop("graph_name", "g"), inputs, outputs, initializer=list(initializers),
                              doc_string=kw.pop("graph_doc", None))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)
    return model.SerializeToString()


def unary_model(op, elem, shape=None, **attrs):
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", elem, shape)], [vi("y", elem, shape)])


def add_model(elem=TP.FLOAT, shape=("N", 4)):
    return make_model([helper.make_node("Add", ["a", "b"], ["c"])],
                      [vi("a", elem, shape), vi("b", elem, shape)], [vi("c", elem, shape)])


def slow_model(n=40, size=256):
    """A chain of n MatMuls of [size,size]: long enough to observe concurrency and cancellation."""
    nodes = [helper.make_node("MatMul", ["t%d" % i, "w"], ["t%d" % (i + 1)]) for i in range(n)]
    w = helper.make_tensor("w", TP.FLOAT, [size, size], np.full(size * size, 1.0 / size, np.float32))
    return make_model(nodes, [vi("t0", TP.FLOAT, [size, size])], [vi("t%d" % n, TP.FLOAT, [size, size])],
                      initializers=[w])


def session(model, threads=1, **kw):
    so = cort.SessionOptions()
    so.intra_op_num_threads = threads
    return cort.InferenceSession(model, so, **kw)


@pytest.fixture
def add_session():
    return session(add_model())
