#!/usr/bin/python3
"""One-node models of ONNX Runtime's com.microsoft ops, as backend-test folders.

Each case NAME is written as OUT/NAME/model.onnx and OUT/NAME/test_data_set_0/input_K.pb
(seeded random inputs). bench/ort_reference.js then fills output_K.pb from ONNX Runtime, and
`cort test OUT` checks that cort gives ONNX Runtime's results op by op, including the ops
(Attention, EmbedLayerNormalization, ...) its optimizer only writes for some graphs.

Usage: /usr/bin/python3 bench/make_contrib_cases.py [--out DIR]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
NP2ONNX = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
           np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def case(out, name, op, inputs, outputs, attrs=None, domain=MS, opset=14, consts=()):
    """inputs: list of (name, array or None for a missing optional input); outputs: (name, dtype, shape)
    or "" for a skipped optional output. consts: input names stored as initializers."""
    in_names = [n if a is not None else "" for n, a in inputs]
    out_names = [o[0] if o else "" for o in outputs]
    node = helper.make_node(op, in_names, out_names, domain=domain, **(attrs or {}))
    g_in, inits, feeds = [], [], []
    for n, a in inputs:
        if a is None:
            continue
        if n in consts:
            inits.append(numpy_helper.from_array(a, n))
        else:
            g_in.append(helper.make_tensor_value_info(n, NP2ONNX[a.dtype.type], list(a.shape)))
            feeds.append((n, a))
    g_out = [helper.make_tensor_value_info(o[0], o[1], o[2]) for o in outputs if o]
    graph = helper.make_graph([node], name, g_in, g_out, inits)
    imports = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=imports, producer_name="cort-contrib-cases")
    model.ir_version = 8
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for k, (n, a) in enumerate(feeds):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "contrib_cases"))
    out = ap.parse_args().out
    rng = np.random.default_rng(21)
    F = TensorProto.FLOAT

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # FusedConv: activations, bias, the Z sum input, groups and strides
    x, w, b = r(1, 4, 9, 9), r(6, 4, 3, 3), r(6)
    for act, params in (("Relu", None), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.7]), ("Tanh", None),
                        ("Sigmoid", None), ("HardSigmoid", [0.3, 0.4])):
        attrs = {"activation": act, "pads": [1, 1, 1, 1]}
        if params:
            attrs["activation_params"] = params
        case(out, f"fused_conv_{act.lower()}", "FusedConv", [("X", x), ("W", w), ("B", b)],
             [("Y", F, [1, 6, 9, 9])], attrs, consts=("W", "B"))
    case(out, "fused_conv_sum", "FusedConv", [("X", x), ("W", w), ("B", b), ("Z", r(1, 6, 4, 4))],
         [("Y", F, [1, 6, 4, 4])], {"activation": "Relu", "strides": [2, 2]}, consts=("W", "B"))
    case(out, "fused_conv_group_nobias", "FusedConv", [("X", r(2, 6, 7, 7)), ("W", r(6, 2, 3, 3))],
         [("Y", F, [2, 6, 5, 5])], {"activation": "Relu", "group": 3}, consts=("W",))
    # FusedGemm
    case(out, "fused_gemm_leaky", "FusedGemm", [("A", r(5, 7)), ("B", r(7, 3)), ("C", r(3))],
         [("Y", F, [5, 3])], {"activation": "LeakyRelu", "activation_alpha": 0.1, "beta": 0.5}, consts=("B", "C"))
    case(out, "fused_gemm_trans_tanh", "FusedGemm", [("A", r(7, 5)), ("B", r(3, 7)), ("C", r(5, 3))],
         [("Y", F, [5, 3])], {"activation": "Tanh", "transA": 1, "transB": 1, "alpha": 0.7})
    case(out, "fused_gemm_relu", "FusedGemm", [("A", r(4, 16)), ("B", r(16, 10)), ("C", r(10))],
         [("Y", F, [4, 10])], {"activation": "Relu"}, consts=("B", "C"))
    # FusedMatMul
    case(out, "fused_matmul_alpha", "FusedMatMul", [("A", r(2, 3, 5, 8)), ("B", r(8, 6))], [("Y", F, [2, 3, 5, 6])],
         {"alpha": 0.125}, consts=("B",))
    case(out, "fused_matmul_transb", "FusedMatMul", [("A", r(2, 4, 5, 8)), ("B", r(2, 4, 6, 8))],
         [("Y", F, [2, 4, 5, 6])], {"transB": 1, "alpha": 0.5})
    case(out, "fused_matmul_transa", "FusedMatMul", [("A", r(3, 8, 5)), ("B", r(1, 8, 6))], [("Y", F, [3, 5, 6])],
         {"transA": 1})
    case(out, "fused_matmul_transbatch", "FusedMatMul", [("A", r(4, 3, 5)), ("B", r(6, 3, 5))], [("Y", F, [3, 4, 6])],
         {"transBatchA": 1, "transBatchB": 1, "transB": 1})
    case(out, "fused_matmul_transbatch4", "FusedMatMul", [("A", r(5, 2, 3, 4)), ("B", r(2, 3, 5, 6))],
         [("Y", F, [2, 3, 4, 6])], {"transBatchA": 1, "transA": 1})
    # GELUs and BiasAdd
    x3, bias = r(2, 5, 16, scale=2.0), r(16)
    case(out, "gelu", "Gelu", [("X", x3)], [("Y", F, [2, 5, 16])])
    case(out, "fast_gelu", "FastGelu", [("X", x3)], [("Y", F, [2, 5, 16])])
    case(out, "fast_gelu_bias", "FastGelu", [("X", x3), ("bias", bias)], [("Y", F, [2, 5, 16])])
    case(out, "bias_gelu", "BiasGelu", [("A", x3), ("B", bias)], [("C", F, [2, 5, 16])])
    case(out, "quick_gelu", "QuickGelu", [("X", x3)], [("Y", F, [2, 5, 16])], {"alpha": 1.5})
    # (BiasAdd and BiasSoftmax have no CPU kernel in ONNX Runtime: tests/test_ops_contrib.c checks them)
    if False:
        case(out, "bias_add", "BiasAdd", [("X", x3), ("bias", bias), ("skip", r(2, 5, 16))], [("Y", F, [2, 5, 16])])
    # layer norms
    h = 32
    xs, sk, g, be, bi = r(2, 6, h), r(2, 6, h), r(h), r(h), r(h)
    case(out, "skip_layer_norm", "SkipLayerNormalization", [("input", xs), ("skip", sk), ("gamma", g), ("beta", be),
         ("bias", bi)], [("output", F, [2, 6, h]), "", "", ("sum", F, [2, 6, h])], {"epsilon": 1e-5})
    case(out, "skip_layer_norm_nobeta", "SkipLayerNormalization", [("input", xs), ("skip", sk), ("gamma", g)],
         [("output", F, [2, 6, h])])
    case(out, "skip_layer_norm_bcast", "SkipLayerNormalization", [("input", xs), ("skip", r(6, h)), ("gamma", g),
         ("beta", be)], [("output", F, [2, 6, h])], {"epsilon": 1e-6})
    case(out, "skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization",
         [("input", xs), ("skip", sk), ("gamma", g), ("bias", bi)],
         [("output", F, [2, 6, h]), "", "", ("sum", F, [2, 6, h])], {"epsilon": 1e-5})
    case(out, "simplified_layer_norm", "SimplifiedLayerNormalization", [("X", xs), ("scale", g)],
         [("Y", F, [2, 6, h])], {"epsilon": 1e-5}, domain="")
    case(out, "simplified_layer_norm_axis1", "SimplifiedLayerNormalization", [("X", r(3, 4, 5)), ("scale", r(4, 5))],
         [("Y", F, [3, 4, 5]), ("inv", F, [3, 1, 1])], {"axis": 1}, domain="")
    case(out, "layer_norm_v14", "LayerNormalization", [("X", xs), ("Scale", g), ("B", be)],
         [("Y", F, [2, 6, h]), ("Mean", F, [2, 6, 1]), ("InvStdDev", F, [2, 6, 1])], {"epsilon": 1e-5}, domain="")
    # Trilu, BiasSoftmax
    case(out, "trilu_lower", "Trilu", [("X", r(2, 5, 6)), ("k", np.array(1, dtype=np.int64))], [("Y", F, [2, 5, 6])],
         {"upper": 0})
    if False:
        case(out, "bias_softmax", "BiasSoftmax", [("data", r(2, 3, 4, 7)), ("bias", r(2, 1, 1, 7))],
         [("Y", F, [2, 3, 4, 7])], {"axis": 3, "is_inner_broadcast": 0})
    # EmbedLayerNormalization
    B, S, H, V = 2, 7, 16, 30
    ids = rng.integers(0, V, size=(B, S)).astype(np.int32)
    seg = rng.integers(0, 2, size=(B, S)).astype(np.int32)
    mask = np.ones((B, S), dtype=np.int32)
    mask[1, 4:] = 0
    case(out, "embed_layer_norm", "EmbedLayerNormalization",
         [("input_ids", ids), ("segment_ids", seg), ("word_embedding", r(V, H)), ("position_embedding", r(16, H)),
          ("segment_embedding", r(2, H)), ("gamma", r(H)), ("beta", r(H)), ("mask", mask)],
         [("output", F, [B, S, H]), ("mask_index", TensorProto.INT32, [B]), ("embedding_sum", F, [B, S, H])],
         {"epsilon": 1e-12}, consts=("word_embedding", "position_embedding", "segment_embedding", "gamma", "beta"))
    case(out, "embed_layer_norm_noseg", "EmbedLayerNormalization",
         [("input_ids", ids), ("segment_ids", None), ("word_embedding", r(V, H)), ("position_embedding", r(16, H)),
          ("segment_embedding", None), ("gamma", r(H)), ("beta", r(H))],
         [("output", F, [B, S, H]), ("mask_index", TensorProto.INT32, [B])], {"epsilon": 1e-5})
    # Attention
    B, S, Hd, N = 2, 5, 16, 4
    xa, wa, ba = r(B, S, Hd), r(Hd, 3 * Hd, scale=0.3), r(3 * Hd)
    raw = np.ones((B, S), dtype=np.int32)
    raw[1, 3:] = 0
    case(out, "attention_nomask", "Attention", [("input", xa), ("weights", wa), ("bias", ba)],
         [("output", F, [B, S, Hd])], {"num_heads": N}, consts=("weights", "bias"))
    case(out, "attention_raw_mask", "Attention", [("input", xa), ("weights", wa), ("bias", ba), ("mask_index", raw)],
         [("output", F, [B, S, Hd])], {"num_heads": N}, consts=("weights", "bias"))
    case(out, "attention_mask_end", "Attention",
         [("input", xa), ("weights", wa), ("bias", ba), ("mask_index", np.array([5, 3], dtype=np.int32))],
         [("output", F, [B, S, Hd])], {"num_heads": N})
    case(out, "attention_mask_3d", "Attention",
         [("input", xa), ("weights", wa), ("bias", ba),
          ("mask_index", rng.integers(0, 2, size=(B, S, S)).astype(np.int32) | np.eye(S, dtype=np.int32))],
         [("output", F, [B, S, Hd])], {"num_heads": N})
    P = 3
    case(out, "attention_past_causal", "Attention",
         [("input", xa), ("weights", wa), ("bias", ba), ("mask_index", None), ("past", r(2, B, N, P, Hd // N))],
         [("output", F, [B, S, Hd]), ("present", F, [2, B, N, P + S, Hd // N])], {"num_heads": N, "unidirectional": 1})
    case(out, "attention_bias_scale", "Attention",
         [("input", xa), ("weights", wa), ("bias", ba), ("mask_index", raw), ("past", None),
          ("attention_bias", r(1, N, S, S))],
         [("output", F, [B, S, Hd])], {"num_heads": N, "scale": 0.3})
    case(out, "attention_qkv_sizes", "Attention", [("input", xa), ("weights", r(Hd, 2 * Hd + 8)), ("bias", r(2 * Hd + 8))],
         [("output", F, [B, S, 8])], {"num_heads": 2, "qkv_hidden_sizes": [Hd, Hd, 8]})

    # quantized ops (per-tensor parameters unless noted)
    U8, I8 = TensorProto.UINT8, TensorProto.INT8

    def qu(*shape):
        return rng.integers(0, 256, size=shape).astype(np.uint8)

    def qi(*shape):
        # 7-bit weights: ONNX Runtime's u8 x s8 kernels on CPUs without VNNI saturate 16-bit pair
        # sums of full-range weights (cort stays exact: tests/test_ops_contrib.c checks full range)
        return rng.integers(-64, 64, size=shape).astype(np.int8)

    def f(v):
        return np.array(v, dtype=np.float32)

    def u(v):
        return np.array(v, dtype=np.uint8)

    case(out, "quantize_linear_axis", "QuantizeLinear", [("x", r(2, 3, 4)), ("s", f([0.02, 0.05, 0.1])), ("z", u([3, 128, 250]))],
         [("y", U8, [2, 3, 4])], {"axis": 1})
    case(out, "dequantize_linear", "DequantizeLinear", [("x", qi(2, 3, 4)), ("s", f(0.05)), ("z", np.array(-3, dtype=np.int8))],
         [("y", F, [2, 3, 4])])
    for ac in (0, 1):
        case(out, f"grid_sample_ac{ac}", "GridSample", [("X", r(1, 2, 5, 6)), ("grid", r(1, 4, 3, 2, scale=0.7))],
             [("Y", F, [1, 2, 4, 3])], {"align_corners": ac, "mode": "bilinear", "padding_mode": "zeros"})
    case(out, "qlinear_add", "QLinearAdd", [("A", qu(2, 3, 8)), ("As", f(0.03)), ("Az", u(120)), ("B", qu(8)), ("Bs", f(0.02)),
         ("Bz", u(130)), ("Cs", f(0.04)), ("Cz", u(128))], [("C", U8, [2, 3, 8])])
    case(out, "qlinear_mul", "QLinearMul", [("A", qu(2, 3, 8)), ("As", f(0.03)), ("Az", u(120)), ("B", qu(2, 3, 8)),
         ("Bs", f(0.02)), ("Bz", u(130)), ("Cs", f(0.01)), ("Cz", u(100))], [("C", U8, [2, 3, 8])])
    # QAttention (what quantize_dynamic makes of a fused Attention): int8 / uint8 weights, per tensor / per column
    wq = qi(Hd, 3 * Hd)
    case(out, "qattention_mask_end", "QAttention",
         [("input", qu(B, S, Hd)), ("weight", wq), ("bias", ba), ("input_scale", f(0.012)), ("weight_scale", f(0.004)),
          ("mask_index", np.array([5, 3], dtype=np.int32)), ("input_zero_point", u(121)),
          ("weight_zero_point", np.array(2, dtype=np.int8))],
         [("output", F, [B, S, Hd])], {"num_heads": N}, consts=("weight", "bias", "weight_scale", "weight_zero_point"))
    case(out, "qattention_per_column_u8", "QAttention",
         [("input", qu(B, S, Hd)), ("weight", rng.integers(64, 192, size=(Hd, 3 * Hd)).astype(np.uint8)), ("bias", ba),
          ("input_scale", f(0.012)), ("weight_scale", (rng.random(3 * Hd) * 0.004 + 0.001).astype(np.float32)),
          ("mask_index", raw), ("input_zero_point", u(118)),
          ("weight_zero_point", rng.integers(124, 133, size=3 * Hd).astype(np.uint8))],
         [("output", F, [B, S, Hd])], {"num_heads": N}, consts=("weight", "weight_scale", "weight_zero_point"))
    case(out, "qattention_past_causal", "QAttention",
         [("input", qu(B, S, Hd)), ("weight", wq), ("bias", ba), ("input_scale", f(0.012)), ("weight_scale", f(0.004)),
          ("mask_index", None), ("input_zero_point", u(121)), ("weight_zero_point", None),
          ("past", r(2, B, N, P, Hd // N))],
         [("output", F, [B, S, Hd]), ("present", F, [2, B, N, P + S, Hd // N])], {"num_heads": N, "unidirectional": 1})
    case(out, "qlinear_sigmoid", "QLinearSigmoid", [("X", qu(3, 16)), ("Xs", f(0.05)), ("Xz", u(128)), ("Ys", f(1 / 256)),
         ("Yz", u(0))], [("Y", U8, [3, 16])])
    case(out, "qlinear_leaky_relu", "QLinearLeakyRelu", [("X", qu(3, 16)), ("Xs", f(0.05)), ("Xz", u(128)),
         ("Ys", f(0.03)), ("Yz", u(60))], [("Y", U8, [3, 16])], {"alpha": 0.1})
    case(out, "qlinear_softmax", "QLinearSoftmax", [("X", qu(3, 16)), ("Xs", f(0.05)), ("Xz", u(128)), ("Ys", f(1 / 256)),
         ("Yz", u(0))], [("Y", U8, [3, 16])], {"axis": -1, "opset": 13})
    case(out, "qlinear_global_average_pool", "QLinearGlobalAveragePool", [("X", qu(2, 4, 5, 5)), ("Xs", f(0.05)),
         ("Xz", u(128)), ("Ys", f(0.02)), ("Yz", u(100))], [("Y", U8, [2, 4, 1, 1])], {"channels_last": 0})
    case(out, "qlinear_global_average_pool_nhwc", "QLinearGlobalAveragePool", [("X", qu(2, 5, 5, 4)), ("Xs", f(0.05)),
         ("Xz", u(128)), ("Ys", f(0.02)), ("Yz", u(100))], [("Y", U8, [2, 1, 1, 4])], {"channels_last": 1})
    case(out, "qlinear_average_pool", "QLinearAveragePool", [("X", qu(1, 3, 7, 7)), ("Xs", f(0.05)), ("Xz", u(128)),
         ("Ys", f(0.0407)), ("Yz", u(128))], [("Y", U8, [1, 3, 4, 4])],
         {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 0})
    case(out, "qlinear_average_pool_nhwc", "QLinearAveragePool", [("X", qu(1, 7, 7, 3)), ("Xs", f(0.05)), ("Xz", u(128)),
         ("Ys", f(0.0407)), ("Yz", u(128))], [("Y", U8, [1, 4, 4, 3])],
         {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "channels_last": 1})
    case(out, "qlinear_concat", "QLinearConcat", [("Ys", f(0.05)), ("Yz", u(128)), ("A", qu(2, 3, 4)), ("As", f(0.03)),
         ("Az", u(120)), ("B", qu(2, 5, 4)), ("Bs", f(0.06)), ("Bz", u(10))], [("Y", U8, [2, 8, 4])], {"axis": 1})
    case(out, "matmul_integer_to_float", "MatMulIntegerToFloat", [("A", qu(2, 3, 16)), ("B", qi(16, 8)), ("As", f(0.02)),
         ("Bs", r(8, scale=0.01)), ("Az", u(128)), ("Bz", np.zeros(8, dtype=np.int8)), ("bias", r(8))],
         [("Y", F, [2, 3, 8])], consts=("B", "Bs", "Bz", "bias"))
    case(out, "dynamic_quantize_matmul", "DynamicQuantizeMatMul", [("A", r(2, 3, 16)), ("B", qi(16, 8)),
         ("Bs", r(8, scale=0.01)), ("Bz", np.zeros(8, dtype=np.int8)), ("bias", r(8))], [("Y", F, [2, 3, 8])],
         consts=("B", "Bs", "Bz", "bias"))
    case(out, "dynamic_quantize_matmul_u8", "DynamicQuantizeMatMul", [("A", r(5, 16)), ("B", qu(16, 8)),
         ("Bs", f(0.01)), ("Bz", u(128))], [("Y", F, [5, 8])], consts=("B", "Bs", "Bz"))
    case(out, "qgemm_float", "QGemm", [("A", qu(4, 16)), ("As", f(0.02)), ("Az", u(128)), ("B", qi(8, 16)),
         ("Bs", r(8, scale=0.01)), ("Bz", np.zeros(8, dtype=np.int8)), ("C", rng.integers(-500, 500, size=(8,)).astype(np.int32))],
         [("Y", F, [4, 8])], {"transB": 1, "alpha": 1.0}, consts=("B", "Bs", "Bz", "C"))
    case(out, "qgemm_quant", "QGemm", [("A", qu(4, 16)), ("As", f(0.02)), ("Az", u(128)), ("B", qi(16, 8)),
         ("Bs", f(0.01)), ("Bz", np.array(0, dtype=np.int8)), ("C", None), ("Ys", f(0.05)), ("Yz", u(128))],
         [("Y", U8, [4, 8])], {"alpha": 1.0})
    # MatMulNBits: 4-bit blocks of 32, with packed zero points, without, and with g_idx
    Kb, Nb, bsz = 64, 12, 32
    blocks = Kb // bsz
    Bq = rng.integers(0, 256, size=(Nb, blocks, bsz // 2)).astype(np.uint8)
    sc = r(Nb * blocks, scale=0.05)
    zq = rng.integers(0, 256, size=(Nb * ((blocks + 1) // 2),)).astype(np.uint8)
    case(out, "matmul_nbits_zp", "MatMulNBits", [("A", r(2, 3, Kb)), ("B", Bq), ("scales", sc), ("zp", zq)],
         [("Y", F, [2, 3, Nb])], {"K": Kb, "N": Nb, "bits": 4, "block_size": bsz}, consts=("B", "scales", "zp"))
    case(out, "matmul_nbits", "MatMulNBits", [("A", r(5, Kb)), ("B", Bq), ("scales", sc)],
         [("Y", F, [5, Nb])], {"K": Kb, "N": Nb, "bits": 4, "block_size": bsz}, consts=("B", "scales"))
    gidx = (np.arange(Kb) % blocks).astype(np.int32)
    # (with g_idx, ONNX Runtime 1.30's CPU kernel ignores packed uint8 zero points: none here)
    case(out, "matmul_nbits_gidx", "MatMulNBits", [("A", r(5, Kb)), ("B", Bq), ("scales", sc), ("zp", None), ("g_idx", gidx)],
         [("Y", F, [5, Nb])], {"K": Kb, "N": Nb, "bits": 4, "block_size": bsz}, consts=("B", "scales", "g_idx"))
    case(out, "matmul_nbits_bias", "MatMulNBits", [("A", r(3, Kb)), ("B", Bq), ("scales", sc), ("zp", None),
         ("g_idx", None), ("bias", r(Nb))], [("Y", F, [3, Nb])], {"K": Kb, "N": Nb, "bits": 4, "block_size": bsz},
         consts=("B", "scales"))
    # RotaryEmbedding
    Bh, Sh, Nh, hs = 2, 5, 3, 8
    ang = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(hs // 2) * 2 / hs)))
    cosc, sinc = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    posid = rng.integers(0, 16 - Sh, size=(Bh, Sh)).astype(np.int64)
    case(out, "rotary_embedding_3d", "RotaryEmbedding", [("x", r(Bh, Sh, Nh * hs)), ("pos", posid), ("cos", cosc),
         ("sin", sinc)], [("y", F, [Bh, Sh, Nh * hs])], {"num_heads": Nh})
    case(out, "rotary_embedding_4d_interleaved", "RotaryEmbedding", [("x", r(Bh, Nh, Sh, hs)), ("pos", posid),
         ("cos", cosc), ("sin", sinc)], [("y", F, [Bh, Nh, Sh, hs])], {"interleaved": 1})
    case(out, "rotary_embedding_offset", "RotaryEmbedding", [("x", r(1, Sh, Nh * hs)), ("pos", np.array([4], dtype=np.int64)),
         ("cos", cosc), ("sin", sinc)], [("y", F, [1, Sh, Nh * hs])], {"num_heads": Nh})
    case(out, "nhwc_max_pool", "NhwcMaxPool", [("x", qu(2, 7, 6, 5))], [("y", U8, [2, 4, 3, 5])],
         {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]})
    case(out, "nhwc_max_pool_i8", "NhwcMaxPool", [("x", qi(1, 6, 6, 3))], [("y", I8, [1, 5, 5, 3])],
         {"kernel_shape": [2, 2]})
    # MultiHeadAttention
    Bm, Sm, Lm, Dm, Nm = 2, 4, 6, 16, 4
    hm = Dm // Nm
    kpm = np.ones((Bm, Lm), dtype=np.int32)
    kpm[1, 4:] = 0
    case(out, "mha_self_mask", "MultiHeadAttention", [("q", r(Bm, Sm, Dm)), ("k", r(Bm, Lm, Dm)), ("v", r(Bm, Lm, Dm)),
         ("bias", r(3 * Dm)), ("mask", kpm)], [("y", F, [Bm, Sm, Dm])], {"num_heads": Nm})
    case(out, "mha_cross_bnsh", "MultiHeadAttention", [("q", r(Bm, Sm, Dm)), ("k", r(Bm, Nm, Lm, hm)),
         ("v", r(Bm, Nm, Lm, hm))], [("y", F, [Bm, Sm, Dm])], {"num_heads": Nm, "scale": 0.4})
    Pm = 3
    case(out, "mha_past_present", "MultiHeadAttention", [("q", r(Bm, Sm, Dm)), ("k", r(Bm, Sm, Dm)), ("v", r(Bm, Sm, Dm)),
         ("bias", None), ("mask", None), ("ab", r(1, Nm, Sm, Pm + Sm)), ("pk", r(Bm, Nm, Pm, hm)), ("pv", r(Bm, Nm, Pm, hm))],
         [("y", F, [Bm, Sm, Dm]), ("present_key", F, [Bm, Nm, Pm + Sm, hm]), ("present_value", F, [Bm, Nm, Pm + Sm, hm])],
         {"num_heads": Nm})
    case(out, "mha_lengths", "MultiHeadAttention", [("q", r(Bm, Sm, Dm)), ("k", r(Bm, Lm, Dm)), ("v", r(Bm, Lm, 8)),
         ("bias", None), ("mask", np.array([6, 3], dtype=np.int32))], [("y", F, [Bm, Sm, 8])], {"num_heads": Nm})
    # GroupQueryAttention: a first prompt, a decode step over a past, packed QKV, rotary, window
    Bg, Sg, Ng, KVg, hg = 2, 5, 4, 2, 8

    def i32(v):
        return np.array(v, dtype=np.int32)

    ang16 = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(8) * 2 / 16)))
    case(out, "gqa_prompt", "GroupQueryAttention", [("q", r(Bg, Sg, Ng * hg)), ("k", r(Bg, Sg, KVg * hg)),
         ("v", r(Bg, Sg, KVg * hg)), ("pk", None), ("pv", None), ("seqlens_k", i32([Sg - 1] * Bg)), ("total", i32(Sg))],
         [("y", F, [Bg, Sg, Ng * hg]), ("present_key", F, [Bg, KVg, Sg, hg]), ("present_value", F, [Bg, KVg, Sg, hg])],
         {"num_heads": Ng, "kv_num_heads": KVg})
    case(out, "gqa_prompt_padded", "GroupQueryAttention", [("q", r(Bg, Sg, Ng * hg)), ("k", r(Bg, Sg, KVg * hg)),
         ("v", r(Bg, Sg, KVg * hg)), ("pk", None), ("pv", None), ("seqlens_k", i32([2, Sg - 1])), ("total", i32(Sg))],
         [("y", F, [Bg, Sg, Ng * hg]), ("present_key", F, [Bg, KVg, Sg, hg])], {"num_heads": Ng, "kv_num_heads": KVg})
    Pg = 6
    case(out, "gqa_decode", "GroupQueryAttention", [("q", r(Bg, 1, Ng * hg)), ("k", r(Bg, 1, KVg * hg)),
         ("v", r(Bg, 1, KVg * hg)), ("pk", r(Bg, KVg, Pg, hg)), ("pv", r(Bg, KVg, Pg, hg)), ("seqlens_k", i32([4, 6])),
         ("total", i32(7))],
         [("y", F, [Bg, 1, Ng * hg]), ("present_key", F, [Bg, KVg, 7, hg]), ("present_value", F, [Bg, KVg, 7, hg])],
         {"num_heads": Ng, "kv_num_heads": KVg})
    hr = 16   # ONNX Runtime's rotary needs a head size that is a multiple of 16
    rcos, rsin = np.cos(ang16[:, :hr // 2]).astype(np.float32), np.sin(ang16[:, :hr // 2]).astype(np.float32)
    case(out, "gqa_packed_rotary", "GroupQueryAttention", [("q", r(Bg, Sg, (Ng + 2 * KVg) * hr)), ("k", None), ("v", None),
         ("pk", None), ("pv", None), ("seqlens_k", i32([Sg - 1] * Bg)), ("total", i32(Sg)), ("cos", rcos), ("sin", rsin)],
         [("y", F, [Bg, Sg, Ng * hr])], {"num_heads": Ng, "kv_num_heads": KVg, "do_rotary": 1})
    gpos = np.array([[3, 4, 5, 6, 7], [0, 2, 4, 6, 8]], dtype=np.int64)
    case(out, "gqa_position_ids_bias", "GroupQueryAttention", [("q", r(Bg, Sg, Ng * hr)), ("k", r(Bg, Sg, KVg * hr)),
         ("v", r(Bg, Sg, KVg * hr)), ("pk", None), ("pv", None), ("seqlens_k", i32([Sg - 1] * Bg)), ("total", i32(Sg)),
         ("cos", rcos), ("sin", rsin), ("pos", gpos), ("ab", r(Bg, 1, Sg, Sg))],
         [("y", F, [Bg, Sg, Ng * hr])], {"num_heads": Ng, "kv_num_heads": KVg, "do_rotary": 1, "softcap": 3.0})
    for nm, extra in (("window", {"local_window_size": 2}), ("softcap", {"softcap": 2.0, "scale": 0.5}),
                      ("smooth", {"smooth_softmax": 1})):
        case(out, f"gqa_{nm}", "GroupQueryAttention", [("q", r(Bg, Sg, Ng * hg)), ("k", r(Bg, Sg, KVg * hg)),
             ("v", r(Bg, Sg, KVg * hg)), ("pk", None), ("pv", None), ("seqlens_k", i32([Sg - 1] * Bg)), ("total", i32(Sg))],
             [("y", F, [Bg, Sg, Ng * hg])], dict({"num_heads": Ng, "kv_num_heads": KVg}, **extra))
    print(f"wrote cases into {out}")


if __name__ == "__main__":
    main()
