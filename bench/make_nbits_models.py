#!/usr/bin/python3
"""One-node com.microsoft.MatMulNBits models (4-bit weights) for timing cort against ONNX Runtime.

Each model NAME is written as OUT/NAME/model.onnx and OUT/NAME/test_data_set_0/input_0.pb (A, seeded
random). B, scales and zero points are initializers, as quantizers write them. Then
`node bench/ort_reference.js OUT/NAME` fills ORT's outputs, `build/bin/cort test OUT/NAME` checks
cort against them, and `bench/run_bench.py --model OUT/NAME` times both.

Usage: /usr/bin/python3 bench/make_nbits_models.py [--out DIR] [--rows 1,16] [--only NAME,...] [--accuracy-level 4]

--accuracy-level sets the node's accuracy_level (ORT: 4 quantizes A to int8 per block and runs an
integer kernel; cort ignores it and computes in float); the names then end in _acc4.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name prefix -> (K, N, block_size, zero points)
SHAPES = {
    "nbits_4096x4096_b32_zp": (4096, 4096, 32, True),
    "nbits_4096x4096_b32": (4096, 4096, 32, False),
    "nbits_4096x11008_b32_zp": (4096, 11008, 32, True),
    "nbits_4096x4096_b128_zp": (4096, 4096, 128, True),
}


def make(out, name, K, N, bsz, with_zp, M, rng, acc=0):
    blocks = (K + bsz - 1) // bsz
    B = rng.integers(0, 256, size=(N, blocks, bsz // 2), dtype=np.uint8)
    scales = (rng.random(N * blocks, dtype=np.float32) * 0.02 + 0.005).astype(np.float32)
    inputs = ["A", "B", "scales"]
    inits = [numpy_helper.from_array(B, "B"), numpy_helper.from_array(scales, "scales")]
    if with_zp:
        zp = rng.integers(0, 256, size=(N * ((blocks + 1) // 2),), dtype=np.uint8)
        inputs.append("zp")
        inits.append(numpy_helper.from_array(zp, "zp"))
    attrs = {"K": K, "N": N, "bits": 4, "block_size": bsz}
    if acc:
        attrs["accuracy_level"] = acc
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("A", TensorProto.FLOAT, [M, K])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [M, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="cort-nbits-bench")
    model.ir_version = 8
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    a = rng.standard_normal((M, K)).astype(np.float32)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, "A").SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "models-nbits"))
    ap.add_argument("--rows", default="1,16", help="comma-separated rows of A (M)")
    ap.add_argument("--only", default="", help="comma-separated shape names (default: all)")
    ap.add_argument("--accuracy-level", type=int, default=0, help="the node's accuracy_level (default: unset)")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    for prefix, (K, N, bsz, zp) in SHAPES.items():
        if only and prefix not in only:
            continue
        for M in (int(m) for m in args.rows.split(",")):
            name = f"{prefix}_m{M}" + (f"_acc{args.accuracy_level}" if args.accuracy_level else "")
            make(args.out, name, K, N, bsz, zp, M, np.random.default_rng(K * 31 + N + bsz + M + zp), args.accuracy_level)
            print(os.path.join(args.out, name))


if __name__ == "__main__":
    main()
