#!/usr/bin/python3
"""Builds the transformer-op models the steady-state allocation test runs (checked in; rerun to
regenerate). Debian's onnx 1.12 cannot check opset 23 models, so they are saved unchecked."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(23)


def save(model, name):
    model.ir_version = 10
    onnx.save(model, os.path.join(here, name))


# attention_prefill: Y = Attention(R, R, R, is_causal) with R = RMSNormalization(X, W), X [2, 4, 40, 16]
w = numpy_helper.from_array((1 + 0.1 * rng.standard_normal(16)).astype(np.float32), "W")
g = helper.make_graph(
    [helper.make_node("RMSNormalization", ["X", "W"], ["R"], name="rms", axis=-1),
     helper.make_node("Attention", ["R", "R", "R"], ["Y"], name="attn", is_causal=1)],
    "attention_prefill",
    [helper.make_tensor_value_info("X", T.FLOAT, [2, 4, 40, 16])],
    [helper.make_tensor_value_info("Y", T.FLOAT, [2, 4, 40, 16])],
    [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)], producer_name="cort-tests"),
     "attention_prefill.onnx")

# attention_decode: one query row of 8 heads over a constant 2-head cache of 64 keys (the decode path)
k = numpy_helper.from_array(rng.standard_normal((1, 2, 64, 32)).astype(np.float32), "K")
v = numpy_helper.from_array(rng.standard_normal((1, 2, 64, 32)).astype(np.float32), "V")
g = helper.make_graph(
    [helper.make_node("Attention", ["X", "K", "V"], ["Y"], name="attn")],
    "attention_decode",
    [helper.make_tensor_value_info("X", T.FLOAT, [1, 8, 1, 32])],
    [helper.make_tensor_value_info("Y", T.FLOAT, [1, 8, 1, 32])],
    [k, v])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)], producer_name="cort-tests"),
     "attention_decode.onnx")
