#!/usr/bin/python3
"""Builds the small models the C API tests use (checked in; rerun to regenerate).
Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(here, name))


# relu_add: Y = Relu(X) + B, X float [N, 4] (symbolic batch), B initializer [4]; Z = Identity(X)
b = numpy_helper.from_array(np.array([0.5, -1.0, 2.0, 0.0], np.float32), "B")
g = helper.make_graph(
    [helper.make_node("Relu", ["X"], ["R"], name="relu"),
     helper.make_node("Add", ["R", "B"], ["Y"], name="add"),
     helper.make_node("Identity", ["X"], ["Z"], name="ident")],
    "relu_add",
    [helper.make_tensor_value_info("X", T.FLOAT, ["N", 4])],
    [helper.make_tensor_value_info("Y", T.FLOAT, ["N", 4]), helper.make_tensor_value_info("Z", T.FLOAT, ["N", 4])],
    [b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
helper.set_model_props(m, {"purpose": "api tests"})
save(m, "relu_add.onnx")

# mlp: 64-128-10 with Gemm/Relu/Softmax, input [N, 64]
w1 = numpy_helper.from_array(rng.standard_normal((64, 128)).astype(np.float32) * 0.1, "W1")
b1 = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32) * 0.1, "B1")
w2 = numpy_helper.from_array(rng.standard_normal((128, 10)).astype(np.float32) * 0.1, "W2")
b2 = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "B2")
g = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W1"], ["h0"], name="mm1"),
     helper.make_node("Add", ["h0", "B1"], ["h1"], name="bias1"),
     helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
     helper.make_node("MatMul", ["h2", "W2"], ["h3"], name="mm2"),
     helper.make_node("Add", ["h3", "B2"], ["h4"], name="bias2"),
     helper.make_node("Softmax", ["h4"], ["P"], name="softmax", axis=-1)],
    "mlp",
    [helper.make_tensor_value_info("X", T.FLOAT, ["N", 64])],
    [helper.make_tensor_value_info("P", T.FLOAT, ["N", 10])],
    [w1, b1, w2, b2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
save(m, "mlp.onnx")

# slow_loop: a Loop of M iterations each doing a 256x256 MatMul; used to test cancellation
w = numpy_helper.from_array((np.eye(256) * 0.5 + 0.001).astype(np.float32), "W")
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("MatMul", ["acc_in", "W"], ["mm"]),
     helper.make_node("Tanh", ["mm"], ["acc_out"])],
    "body",
    [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
     helper.make_tensor_value_info("acc_in", T.FLOAT, [256, 256])],
    [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("acc_out", T.FLOAT, [256, 256])])
g = helper.make_graph(
    [helper.make_node("Loop", ["M", "", "X"], ["Y"], name="loop", body=body)],
    "slow_loop",
    [helper.make_tensor_value_info("M", T.INT64, []), helper.make_tensor_value_info("X", T.FLOAT, [256, 256])],
    [helper.make_tensor_value_info("Y", T.FLOAT, [256, 256])],
    [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
save(m, "slow_loop.onnx")

# unsupported: an op cort does not implement
g = helper.make_graph([helper.make_node("NoSuchOp", ["X"], ["Y"], name="mystery", domain="")], "unsupported",
                      [helper.make_tensor_value_info("X", T.FLOAT, [1])], [helper.make_tensor_value_info("Y", T.FLOAT, [1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(here, "unsupported.onnx"))

# local function: model-local function MyAddRelu(a, b) = Relu(a + b), called twice
f = helper.make_function("custom", "AddRelu", ["a", "b"], ["c"],
                         [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["c"])],
                         [helper.make_opsetid("", 13)])
g = helper.make_graph(
    [helper.make_node("AddRelu", ["X", "X"], ["T1"], domain="custom", name="call1"),
     helper.make_node("AddRelu", ["T1", "X"], ["Y"], domain="custom", name="call2")],
    "fn", [helper.make_tensor_value_info("X", T.FLOAT, [3])], [helper.make_tensor_value_info("Y", T.FLOAT, [3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("custom", 1)], functions=[f])
m.ir_version = 8
save(m, "local_function.onnx")

# upsample_head: a detector head's upsampling path, static shapes: ConvTranspose (2x2 stride 2),
# nearest Resize by scales (2x), linear Resize by sizes (to 44x44) -- kernels that need per-run
# scratch or per-axis tables (test_steady_alloc)
wt = numpy_helper.from_array(rng.standard_normal((8, 6, 2, 2)).astype(np.float32) * 0.2, "Wt")
bt = numpy_helper.from_array(rng.standard_normal(6).astype(np.float32) * 0.1, "Bt")
sc = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
sz = numpy_helper.from_array(np.array([1, 6, 44, 44], np.int64), "sizes")
g = helper.make_graph(
    [helper.make_node("ConvTranspose", ["X", "Wt", "Bt"], ["u"], kernel_shape=[2, 2], strides=[2, 2], name="up"),
     helper.make_node("Resize", ["u", "", "scales"], ["n"], mode="nearest", name="nearest2x",
                      coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
     helper.make_node("Resize", ["n", "", "", "sizes"], ["Y"], mode="linear", name="linear44")],
    "upsample_head", [helper.make_tensor_value_info("X", T.FLOAT, [1, 8, 10, 10])],
    [helper.make_tensor_value_info("Y", T.FLOAT, [1, 6, 44, 44])], [wt, bt, sc, sz])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
save(m, "upsample_head.onnx")

# resize_dynamic: Resize linear 2x then nearest 3x of X [1, 3, H, W] (symbolic H, W)
s2 = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s2")
s3 = numpy_helper.from_array(np.array([1, 1, 3, 3], np.float32), "s3")
g = helper.make_graph(
    [helper.make_node("Resize", ["X", "", "s2"], ["l"], mode="linear", name="linear2x"),
     helper.make_node("Resize", ["l", "", "s3"], ["Y"], mode="nearest", name="nearest3x")],
    "resize_dynamic", [helper.make_tensor_value_info("X", T.FLOAT, [1, 3, "H", "W"])],
    [helper.make_tensor_value_info("Y", T.FLOAT, [1, 3, "OH", "OW"])], [s2, s3])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
save(m, "resize_dynamic.onnx")

# dft_dynamic: DFT along axis 1 of X [1, L, 2] (complex, symbolic L: powers of two and Bluestein lengths)
g = helper.make_graph([helper.make_node("DFT", ["X"], ["Y"], axis=1, name="dft")], "dft_dynamic",
                      [helper.make_tensor_value_info("X", T.FLOAT, [1, "L", 2])],
                      [helper.make_tensor_value_info("Y", T.FLOAT, [1, "L", 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="cort-tests")
m.ir_version = 8
save(m, "dft_dynamic.onnx")

# const_outputs: S = Shape(X) of a static X (folded to a constant at creation) and K, a Constant node
kv = numpy_helper.from_array(np.array([1.5, -2.0, 3.25], np.float32), "kv")
g = helper.make_graph(
    [helper.make_node("Shape", ["X"], ["S"], name="shape"),
     helper.make_node("Constant", [], ["K"], value=kv, name="const"),
     helper.make_node("Relu", ["X"], ["Y"], name="relu")],
    "const_outputs", [helper.make_tensor_value_info("X", T.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info("S", T.INT64, [3]), helper.make_tensor_value_info("K", T.FLOAT, [3]),
     helper.make_tensor_value_info("Y", T.FLOAT, [2, 3, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
m.ir_version = 8
save(m, "const_outputs.onnx")
print("ok")
