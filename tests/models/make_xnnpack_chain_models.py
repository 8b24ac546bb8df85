#!/usr/bin/python3
"""Models for the XNNPACK NHWC-chain tests (checked in; rerun to regenerate).
Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy). Every model has one input X.

  xnnpack_chain_res.onnx    Conv+Relu -> Conv -> Add(residual) -> Relu -> GlobalAveragePool -> Flatten -> Gemm:
                            a pure XNNPACK chain, one transpose expected (X into the first Conv)
  xnnpack_chain_mix.onnx    depthwise/pointwise chains with Clip, Concat of XNNPACK outputs along channels, a
                            mid-chain graph output, per-channel / scalar / [1,1,H,W] / [N,C,1,1] broadcasts,
                            swish (x * Sigmoid(x)), squeeze-excite, an Add with an NCHW operand from a CPU
                            node (Neg), MaxPool, AveragePool, Resize, DepthToSpace, ConvTranspose, PRelu and
                            Softmax (refuse NHWC) and Transpose (CPU) consumers
  xnnpack_chain_1d.onnx     1-D convolutions (3-D tensors): Conv+Relu -> Conv -> Add -> MaxPool, Concat along
                            channels of that and an NCHW value from a CPU node (Neg), Conv, Concat along
                            the length (CPU)
  xnnpack_chain_fallback.onnx  Conv -> Resize x1.3 (run-time CPU fallback inside a chain) -> Conv -> Relu
"""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(23)


def f32(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def save(name, nodes, inits, x_shape, outputs):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("X", T.FLOAT, x_shape)], [],
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
    m.ir_version = 8
    info = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(m).graph.value_info}
    m.graph.output.extend([info[o] for o in outputs])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(here, name + ".onnx"))


N = helper.make_node

# ---- residual chain
inits = {"W1": f32(8, 3, 3, 3), "B1": f32(8), "W2": f32(8, 8, 3, 3), "B2": f32(8), "Wf": f32(5, 8), "Bf": f32(5)}
nodes = [
    N("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    N("Relu", ["c1"], ["r1"], name="relu1"),
    N("Conv", ["r1", "W2", "B2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    N("Add", ["c2", "r1"], ["a"], name="residual"),
    N("Relu", ["a"], ["r2"], name="relu2"),
    N("GlobalAveragePool", ["r2"], ["g"], name="gap"),
    N("Flatten", ["g"], ["f"], name="flatten"),
    N("Gemm", ["f", "Wf", "Bf"], ["Y"], name="fc", transB=1),
]
save("xnnpack_chain_res", nodes, inits, [1, 3, 16, 16], ["Y"])

# ---- mixed chain
inits = {
    "W1": f32(16, 3, 3, 3), "B1": f32(16), "lo": np.array(0, np.float32), "hi": np.array(6, np.float32),
    "Wdw": f32(16, 1, 3, 3), "Bdw": f32(16), "Wpw": f32(8, 16, 1, 1), "Wdw2": f32(8, 1, 3, 3),
    "Wa": f32(8, 8, 1, 1), "Wb": f32(8, 8, 3, 3), "Wc": f32(8, 16, 1, 1),
    "ch": f32(8, 1, 1), "sc": np.array(1.5, np.float32), "mask": f32(1, 1, 8, 8), "Wse1": f32(4, 8, 1, 1),
    "Wse2": f32(8, 4, 1, 1), "Wd2s": f32(16, 8, 1, 1), "Wt": f32(4, 4, 2, 2), "slope": f32(4, 1, 1),
    "Wq": f32(4, 4, 1, 1), "rs": np.array([1, 1, 2, 2], np.float32), "Wf": f32(3, 4), "Bf": f32(3),
}
nodes = [
    N("Conv", ["X", "W1", "B1"], ["c1"], name="stem", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    N("Clip", ["c1", "lo", "hi"], ["r1"], name="stem_relu6"),
    N("Conv", ["r1", "Wdw", "Bdw"], ["d1"], name="dw1", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
    N("Clip", ["d1", "lo", "hi"], ["d1r"], name="dw1_relu6"),
    N("Conv", ["d1r", "Wpw"], ["p1"], name="pw1", kernel_shape=[1, 1]),
    N("Conv", ["p1", "Wdw2"], ["d2"], name="dw2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
    N("Relu", ["d2"], ["d2r"], name="dw2_relu"),                       # also a graph output
    # concat boundary: two XNNPACK branches into a CPU Concat, then back into XNNPACK
    N("Conv", ["d2r", "Wa"], ["ba"], name="branch_a", kernel_shape=[1, 1]),
    N("Conv", ["d2r", "Wb"], ["bb"], name="branch_b", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    N("Concat", ["ba", "bb"], ["cat"], name="concat", axis=1),
    N("Conv", ["cat", "Wc"], ["c3"], name="after_concat", kernel_shape=[1, 1]),
    # broadcasts in NHWC
    N("Mul", ["c3", "ch"], ["m1"], name="mul_per_channel"),
    N("Add", ["m1", "sc"], ["m2"], name="add_scalar"),
    N("Mul", ["m2", "mask"], ["m3"], name="mul_spatial_mask"),
    N("Sigmoid", ["m3"], ["sg"], name="sigmoid"),
    N("Mul", ["m3", "sg"], ["sw"], name="swish"),
    # squeeze-excite: x * sigmoid(conv(relu(conv(gap(x)))))
    N("GlobalAveragePool", ["sw"], ["se0"], name="se_gap"),
    N("Conv", ["se0", "Wse1"], ["se1"], name="se_fc1", kernel_shape=[1, 1]),
    N("Relu", ["se1"], ["se1r"], name="se_relu"),
    N("Conv", ["se1r", "Wse2"], ["se2"], name="se_fc2", kernel_shape=[1, 1]),
    N("Sigmoid", ["se2"], ["se3"], name="se_sigmoid"),
    N("Mul", ["sw", "se3"], ["se"], name="se_scale"),
    # an NCHW operand from a CPU node of the same shape
    N("Neg", ["se"], ["ng"], name="neg_cpu"),
    N("Sub", ["se", "ng"], ["s2"], name="sub_mixed"),
    N("MaxPool", ["s2"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
    N("Resize", ["mp", "", "rs"], ["up"], name="resize", mode="linear"),
    N("AveragePool", ["up"], ["ap"], name="avgpool", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    N("Conv", ["ap", "Wd2s"], ["e"], name="expand", kernel_shape=[1, 1]),
    N("DepthToSpace", ["e"], ["ds"], name="d2s", blocksize=2),
    N("ConvTranspose", ["ds", "Wt"], ["ct"], name="convt", kernel_shape=[2, 2], strides=[2, 2]),
    N("PRelu", ["ct", "slope"], ["pr"], name="prelu"),
    N("Conv", ["pr", "Wq"], ["q"], name="q", kernel_shape=[1, 1]),
    N("Softmax", ["q"], ["sm"], name="softmax_last", axis=-1),
    N("Conv", ["q", "Wq"], ["q2"], name="q2", kernel_shape=[1, 1]),
    N("Transpose", ["q2"], ["tq"], name="transpose_cpu", perm=[0, 2, 3, 1]),
    N("GlobalAveragePool", ["q"], ["gq"], name="gap"),
    N("Flatten", ["gq"], ["fq"], name="flatten"),
    N("Gemm", ["fq", "Wf", "Bf"], ["Y"], name="fc", transB=1),
]
save("xnnpack_chain_mix", nodes, inits, [2, 3, 16, 16], ["Y", "d2r", "sm", "tq"])

# ---- 1-D chain
inits = {"W1": f32(8, 4, 3), "B1": f32(8), "W2": f32(8, 8, 3), "W3": f32(6, 16, 1)}
nodes = [
    N("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", kernel_shape=[3], pads=[1, 1]),
    N("Relu", ["c1"], ["r1"], name="relu1"),
    N("Conv", ["r1", "W2"], ["c2"], name="conv2", kernel_shape=[3], pads=[1, 1]),
    N("Add", ["c2", "r1"], ["a"], name="residual"),
    N("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[2], strides=[2]),
    N("MaxPool", ["r1"], ["p2"], name="pool2", kernel_shape=[2], strides=[2]),
    N("Neg", ["p2"], ["q"], name="neg_cpu"),
    N("Concat", ["p", "q"], ["cc"], name="concat_mixed", axis=1),      # NHWC + NCHW inputs, on XNNPACK
    N("Conv", ["cc", "W3"], ["c3"], name="conv3", kernel_shape=[1]),
    N("Concat", ["c3", "c3"], ["Y"], name="concat_length", axis=2),    # not the channel axis: CPU
]
save("xnnpack_chain_1d", nodes, inits, [2, 4, 20], ["Y"])


# ---- run-time fallbacks inside a chain: Resize by 1.3 (not integral: the CPU kernel runs, fed an
# NCHW copy of a channels-last input, its output made channels-last for the next Conv)
inits = {"W1": f32(8, 3, 3, 3), "rs": np.array([1, 1, 1.3, 1.3], np.float32), "W2": f32(8, 8, 3, 3)}
nodes = [
    N("Conv", ["X", "W1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    N("Resize", ["c1", "", "rs"], ["up"], name="resize_fallback", mode="linear"),
    N("Conv", ["up", "W2"], ["c2"], name="conv2", kernel_shape=[3, 3]),
    N("Relu", ["c2"], ["Y"], name="relu"),
]
save("xnnpack_chain_fallback", nodes, inits, [1, 3, 10, 10], ["Y"])
print("ok")
