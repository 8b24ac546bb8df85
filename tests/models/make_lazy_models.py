#!/usr/bin/python3
"""Builds tests/models/lazy_{aligned,misaligned}.onnx for tests/test_lazy_weights.c (checked in; rerun
to regenerate): one graph, serialized twice, its big initializers' raw_data at offsets that are a
multiple of 4 in one file and 2 mod 4 in the other (a tiny unused padding initializer before each
one shifts it). A misaligned initializer in a mapped file stays there unless something must read it
in place: the weights only packed (Conv, MatMul, Gemm input 1, also through BN folding and the
MatMul + bias fusion) are never copied; those read at run time (shared with an Add, a graph output,
a depthwise conv's weights) or by constant folding are. Run with Debian's /usr/bin/python3."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)


def w(*shape, scale=0.1):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


inits = {
    # packed only (never copied)
    "W1": w(128, 64, 3, 3), "B1": w(128), "W2": w(128, 128, 1, 1), "W3": w(128, 64, 3, 3),
    "Wm": w(128, 300), "bm": w(300), "Wg": w(64, 300),   # Gemm's K = 300: two K slices when packed
    # copied: read by an Add too / a graph output / folded with another constant / depthwise weights
    "Ws": w(128, 128), "Wo": w(128, 128), "Wa": w(4, 128), "Wb": w(128, 128), "Wd": w(2048, 1, 3, 3),
    "bn_s": (1 + w(128)).astype(np.float32), "bn_b": w(128), "bn_m": w(128), "bn_v": (1 + np.abs(w(128))).astype(np.float32),
}
nodes = [
    helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "W2"], ["c2"]),
    helper.make_node("Conv", ["x", "W3"], ["c3"], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c3", "bn_s", "bn_b", "bn_m", "bn_v"], ["n3"]),
    helper.make_node("Add", ["c2", "n3"], ["s"]),
    helper.make_node("GlobalAveragePool", ["s"], ["g"]),
    helper.make_node("Flatten", ["g"], ["f"]),
    helper.make_node("MatMul", ["f", "Wm"], ["m0"]),
    helper.make_node("Add", ["m0", "bm"], ["m"]),
    helper.make_node("Gemm", ["m", "Wg"], ["y1"], transB=1),
    helper.make_node("MatMul", ["f", "Ws"], ["t"]),
    helper.make_node("Add", ["Ws", "t"], ["y3"]),
    helper.make_node("MatMul", ["f", "Wo"], ["y4"]),
    helper.make_node("MatMul", ["Wa", "Wb"], ["y5"]),
    helper.make_node("Conv", ["x2", "Wd"], ["y2"], group=2048, pads=[1, 1, 1, 1]),
]
inputs = [helper.make_tensor_value_info("x", T.FLOAT, [1, 64, 8, 8]),
          helper.make_tensor_value_info("x2", T.FLOAT, [1, 2048, 2, 2])]
outputs = [helper.make_tensor_value_info(n, T.FLOAT, s) for n, s in
           (("y1", [1, 64]), ("y2", [1, 2048, 2, 2]), ("y3", [128, 128]), ("y4", [1, 128]), ("y5", [4, 128]),
            ("Wo", [128, 128]))]
BIG = 64 << 10   # CORT_LAZY_MIN_BYTES


def build(pads):
    tensors = []
    for i, (name, arr) in enumerate(inits.items()):
        if arr.nbytes >= BIG:
            tensors.append(numpy_helper.from_array(np.zeros(pads[i], np.int8), "pad_%s" % name))
        tensors.append(numpy_helper.from_array(arr, name))
    g = helper.make_graph(nodes, "lazy", inputs, outputs, tensors)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def save(fname, want):
    """Pads each big initializer until its raw_data starts at an offset = want (mod 4)."""
    pads = [0] * len(inits)
    for i, (name, arr) in enumerate(inits.items()):
        if arr.nbytes < BIG:
            continue
        while True:
            data = build(pads).SerializeToString()
            off = data.find(arr.tobytes())
            assert off > 0 and data.find(arr.tobytes(), off + 1) < 0
            if off % 4 == want:
                break
            pads[i] += 1
    m = build(pads)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(here, fname))


save("lazy_aligned.onnx", 0)
save("lazy_misaligned.onnx", 2)
