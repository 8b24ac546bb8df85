#!/usr/bin/python3
"""Models for the XNNPACK provider tests (checked in; rerun to regenerate).
Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).

  xnnpack_conv.onnx   small CNN: Conv(3->8, 3x3, pad 1)+Relu, depthwise Conv(8, 3x3, stride 2)+Clip(0,6),
                      MaxPool 2x2, Add residual, GlobalAveragePool, Gemm 8->4, Softmax; input X [1,3,16,16]
  xnnpack_node/<t>/   ONNX backend node tests of the ops XNNPACK takes, with every input except the first
                      turned into an initializer (XNNPACK needs constant weights); test_data_set_0 copied.
"""
import glob
import os
import shutil
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
SUITE = "/usr/share/libonnx-testdata/data/node"


def f32(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- xnnpack_conv.onnx
inits = [numpy_helper.from_array(a, n) for n, a in [
    ("W1", f32(8, 3, 3, 3)), ("B1", f32(8)), ("W2", f32(8, 1, 3, 3)), ("B2", f32(8)),
    ("W3", f32(8, 8, 1, 1)), ("Wf", f32(4, 8)), ("Bf", f32(4)),
    ("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32))]]
nodes = [
    helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="dwconv", group=8, kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"], name="relu6"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "W3"], ["c3"], name="pw"),
    helper.make_node("Add", ["r2", "c3"], ["a"], name="residual"),
    helper.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "Wf", "Bf"], ["l"], name="fc", transB=1),
    helper.make_node("Softmax", ["l"], ["Y"], name="softmax", axis=1),
]
g = helper.make_graph(nodes, "xnnpack_conv", [helper.make_tensor_value_info("X", T.FLOAT, [1, 3, 16, 16])],
                      [helper.make_tensor_value_info("Y", T.FLOAT, [1, 4])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "xnnpack_conv.onnx"))

# ---- node tests with constant weights
OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul", "PRelu", "Resize", "Pad", "Clip", "Add", "Sub", "Mul", "Div",
       "Min", "Max"}
out_root = os.path.join(here, "xnnpack_node")
shutil.rmtree(out_root, ignore_errors=True)
count = 0
for d in sorted(glob.glob(os.path.join(SUITE, "test_*"))):
    name = os.path.basename(d)
    if name.endswith("_expanded") or not os.path.exists(os.path.join(d, "test_data_set_0")):
        continue
    m = onnx.load(os.path.join(d, "model.onnx"))
    if len(m.graph.node) != 1 or m.graph.node[0].op_type not in OPS or len(m.graph.input) < 2:
        continue
    ins = sorted(glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")))
    if len(ins) != len(m.graph.input):
        continue
    tensors = []
    for p in ins:
        t = onnx.TensorProto()
        with open(p, "rb") as fh:
            t.ParseFromString(fh.read())
        tensors.append(t)
    if tensors[0].data_type != T.FLOAT:
        continue
    keep = m.graph.input[0]
    for vi, t in zip(list(m.graph.input)[1:], tensors[1:]):
        t.name = vi.name
        m.graph.initializer.append(t)
    del m.graph.input[1:]
    dst = os.path.join(out_root, name)
    os.makedirs(os.path.join(dst, "test_data_set_0"))
    onnx.save(m, os.path.join(dst, "model.onnx"))
    shutil.copy(ins[0], os.path.join(dst, "test_data_set_0", "input_0.pb"))
    for p in glob.glob(os.path.join(d, "test_data_set_0", "output_*.pb")):
        shutil.copy(p, os.path.join(dst, "test_data_set_0"))
    count += 1
print("xnnpack_node tests:", count)
