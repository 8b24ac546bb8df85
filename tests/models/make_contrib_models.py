#!/usr/bin/python3
"""Builds the small com.microsoft models tests/test_ops_contrib.c opens at optimization levels 0
and 2 (checked in; rerun to regenerate): a MobileNet-style block as ONNX Runtime saves it, with
FusedConv (Relu, Clip, Z sum, Tanh), an expand / depthwise pair that cort's level-2 passes fuse
once the FusedConvs are lowered to Conv, and a FusedGemm head."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(21)


def w(*shape, s=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), "w%d" % next(counter))


def count():
    i = 0
    while True:
        yield i
        i += 1


counter = count()
inits, nodes = [], []


def const(*shape, s=0.3):
    t = w(*shape, s=s)
    inits.append(t)
    return t.name


def fused_conv(x, y, cin, cout, k, act, params=None, group=1, z=None, stride=1):
    ins = [x, const(cout, cin // group, k, k), const(cout, s=0.1)] + ([z] if z else [])
    attrs = {"activation": act, "pads": [k // 2] * 4, "group": group, "strides": [stride, stride]}
    if params:
        attrs["activation_params"] = params
    nodes.append(helper.make_node("FusedConv", ins, [y], domain="com.microsoft", **attrs))


C, E = 8, 48
fused_conv("x", "a", 3, C, 3, "Relu")
fused_conv("a", "e", C, E, 1, "Clip", [0.0, 6.0])                 # expand 1x1
fused_conv("e", "d", E, E, 3, "Clip", [0.0, 6.0], group=E)        # depthwise
fused_conv("d", "p", E, C, 1, "Relu", z="a")                      # project + residual Z
fused_conv("p", "t", C, C, 3, "Tanh", stride=2)
nodes.append(helper.make_node("GlobalAveragePool", ["t"], ["g"]))
nodes.append(helper.make_node("Flatten", ["g"], ["f"]))
nodes.append(helper.make_node("FusedGemm", ["f", const(C, 10), const(10, s=0.1)], ["y"], domain="com.microsoft",
                              activation="LeakyRelu", activation_alpha=0.2))
graph = helper.make_graph(nodes, "contrib_block", [helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 64, 64])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 8
onnx.save(model, os.path.join(here, "contrib_fused_block.onnx"))
