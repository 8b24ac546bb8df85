#!/usr/bin/python3
"""QDQ graphs as static quantizers write them, for the fuse_qdq pass (tests/test_qconv.c runs each at
levels 0 and 2 and compares): DequantizeLinear(x) and DequantizeLinear(constant w) [+ DQ(int32
bias)] -> Conv / MatMul [-> Relu / Clip] -> QuantizeLinear, per-tensor and per-output-channel
weights, u8/s8 activations and weights, groups and depthwise, plus patterns the pass must leave
alone (a float bias, a Relu that is not a no-op, a DQ read by a second node). Writes
tests/models/qdq_*.onnx; the expected fused-op counts are in the file names' table in the test."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(4242)
TT = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def c(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def conv_block(nodes, inits, x, C, M, k, group, at, wt, per_channel, bias, act, tag, pads=1, stride=1, y_zp=None):
    """x: name of a quantized (at) tensor with scale x+'_s', zero point x+'_z'. Returns the output name."""
    Cg = C // group
    winfo = np.iinfo(wt)
    w = rng.integers(winfo.min, winfo.max + 1, size=(M, Cg, k, k)).astype(wt)
    ws = (rng.random(M if per_channel else 1) * 0.01 + 0.002).astype(np.float32)
    if not per_channel:
        ws = ws.reshape(())
    wz = (rng.integers(-3, 4, size=ws.shape) + (0 if wt == np.int8 else 128)).astype(wt)
    inits += [c(tag + "_w", w), c(tag + "_ws", ws), c(tag + "_wz", wz)]
    nodes.append(helper.make_node("DequantizeLinear", [x, x + "_s", x + "_z"], [tag + "_xf"]))
    nodes.append(helper.make_node("DequantizeLinear", [tag + "_w", tag + "_ws", tag + "_wz"], [tag + "_wf"],
                                  axis=0))
    ins = [tag + "_xf", tag + "_wf"]
    if bias == "dq":
        xs = numpy_helper.to_array([i for i in inits if i.name == x + "_s"][0])
        bs = (np.float32(xs) * ws).astype(np.float32)
        b = rng.integers(-3000, 3000, size=M).astype(np.int32)
        inits += [c(tag + "_b", b), c(tag + "_bs", bs), c(tag + "_bz", np.zeros(bs.shape, np.int32))]
        nodes.append(helper.make_node("DequantizeLinear", [tag + "_b", tag + "_bs", tag + "_bz"], [tag + "_bf"], axis=0))
        ins.append(tag + "_bf")
    elif bias == "float":
        inits.append(c(tag + "_bfl", (rng.random(M) - 0.5).astype(np.float32)))
        ins.append(tag + "_bfl")
    nodes.append(helper.make_node("Conv", ins, [tag + "_y"], kernel_shape=[k, k], pads=[pads] * 4,
                                  strides=[stride, stride], group=group))
    y = tag + "_y"
    yt = at
    yinfo = np.iinfo(yt)
    zy = yinfo.min if act else (y_zp if y_zp is not None else int(rng.integers(yinfo.min + 60, yinfo.max - 60)))
    if act == "relu":
        nodes.append(helper.make_node("Relu", [y], [tag + "_r"]))
        y = tag + "_r"
    elif act == "relu_bad":   # zero point inside the range: the Relu clamps, not a no-op
        zy = int(yinfo.min) + 50
        nodes.append(helper.make_node("Relu", [y], [tag + "_r"]))
        y = tag + "_r"
    elif act == "clip6":
        inits += [c(tag + "_lo", np.float32(0)), c(tag + "_hi", np.float32(6))]
        nodes.append(helper.make_node("Clip", [y, tag + "_lo", tag + "_hi"], [tag + "_r"]))
        y = tag + "_r"
    out = tag + "_q"
    ysc = np.float32(0.05 if act != "clip6" else 6.0 / 255)
    inits += [c(out + "_s", ysc), c(out + "_z", np.array(zy, dtype=yt))]
    nodes.append(helper.make_node("QuantizeLinear", [y, out + "_s", out + "_z"], [out]))
    return out


def model(name, at, build, in_shape, opset=13):
    nodes, inits = [], []
    xf_name = "xq"
    # the float input quantized first (as a quantized model's first layer)
    inits += [c("xin_s", np.float32(0.02)), c("xin_z", np.array(0 if at == np.uint8 else -10, dtype=at))]
    nodes.append(helper.make_node("QuantizeLinear", ["x", "xin_s", "xin_z"], [xf_name]))
    inits += [c(xf_name + "_s", np.float32(0.02)), c(xf_name + "_z", np.array(0 if at == np.uint8 else -10, dtype=at))]
    out_q = build(nodes, inits, xf_name)
    s = [i for i in inits if i.name == out_q + "_s"][0].name
    nodes.append(helper.make_node("DequantizeLinear", [out_q, s, out_q + "_z"], ["y"]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8

    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def alias_scale(inits, src, dst):
    for i in list(inits):
        if i.name == src + "_s":
            inits.append(c(dst + "_s", numpy_helper.to_array(i)))
        if i.name == src + "_z":
            inits.append(c(dst + "_z", numpy_helper.to_array(i)))


def net(at, wt, per_channel):
    def build(nodes, inits, x):
        y = conv_block(nodes, inits, x, 3, 16, 3, 1, at, wt, per_channel, "dq", "relu", "c1", stride=2)
        y = conv_block(nodes, inits, y, 16, 16, 3, 16, at, wt, per_channel, "dq", "clip6", "c2")
        y = conv_block(nodes, inits, y, 16, 24, 1, 1, at, wt, per_channel, "dq", None, "c3", pads=0)
        y = conv_block(nodes, inits, y, 24, 24, 3, 4, at, wt, per_channel, None, None, "c4")
        return y
    return build


def matmul_net(at, wt, per_column=False):
    def build(nodes, inits, x):
        winfo = np.iinfo(wt)
        w = rng.integers(winfo.min, winfo.max + 1, size=(20, 33)).astype(wt)
        if per_column:   # one weight scale and zero point per output column (DQ axis 1), as quantizers write
            ws = rng.uniform(0.002, 0.006, size=33).astype(np.float32)
            wz = rng.integers(-3, 4, size=33).astype(wt) if winfo.min < 0 else rng.integers(120, 136, size=33).astype(wt)
            inits += [c("m_w", w), c("m_ws", ws), c("m_wz", wz)]
        else:
            inits += [c("m_w", w), c("m_ws", np.float32(0.004)), c("m_wz", np.array(1, dtype=wt))]
        nodes.append(helper.make_node("DequantizeLinear", [x, x + "_s", x + "_z"], ["m_xf"]))
        nodes.append(helper.make_node("DequantizeLinear", ["m_w", "m_ws", "m_wz"], ["m_wf"]))
        nodes.append(helper.make_node("MatMul", ["m_xf", "m_wf"], ["m_y"]))
        inits += [c("m_q_s", np.float32(0.03)), c("m_q_z", np.array(3, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["m_y", "m_q_s", "m_q_z"], ["m_q"]))
        return "m_q"
    return build


def unfusible(nodes, inits, x):
    y = conv_block(nodes, inits, x, 3, 8, 3, 1, np.uint8, np.int8, True, "float", None, "u1")
    y = conv_block(nodes, inits, y, 8, 8, 3, 1, np.uint8, np.int8, False, None, "relu_bad", "u2")
    return y


def residual_add(at):
    """Two conv branches with different output scales added (a residual connection), a Relu folded
    by the sum's zero point, then a broadcast Add of a quantized per-channel constant [1, C, 1, 1]."""
    def build(nodes, inits, x):
        wt = np.int8
        a = conv_block(nodes, inits, x, 3, 8, 3, 1, at, wt, True, "dq", None, "r1")
        b = conv_block(nodes, inits, x, 3, 8, 1, 1, at, wt, True, "dq", None, "r2", pads=0)
        inits[-2] = c(b + "_s", np.float32(0.031))   # b's own scale: the sum requantizes both sides
        nodes.append(helper.make_node("DequantizeLinear", [a, a + "_s", a + "_z"], ["ra_f"]))
        nodes.append(helper.make_node("DequantizeLinear", [b, b + "_s", b + "_z"], ["rb_f"]))
        nodes.append(helper.make_node("Add", ["ra_f", "rb_f"], ["rs_f"]))
        nodes.append(helper.make_node("Relu", ["rs_f"], ["rs_r"]))
        info = np.iinfo(at)
        inits += [c("rs_q_s", np.float32(0.06)), c("rs_q_z", np.array(info.min, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["rs_r", "rs_q_s", "rs_q_z"], ["rs_q"]))
        inits += [c("rc", rng.integers(info.min, info.max + 1, size=(1, 8, 1, 1)).astype(at)),
                  c("rc_s", np.float32(0.02)), c("rc_z", np.array(info.min + 100, dtype=at))]
        nodes.append(helper.make_node("DequantizeLinear", ["rs_q", "rs_q_s", "rs_q_z"], ["rq_f"]))
        nodes.append(helper.make_node("DequantizeLinear", ["rc", "rc_s", "rc_z"], ["rc_f"]))
        nodes.append(helper.make_node("Add", ["rq_f", "rc_f"], ["rt_f"]))
        inits += [c("rt_q_s", np.float32(0.07)), c("rt_q_z", np.array(info.min + 120, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["rt_f", "rt_q_s", "rt_q_z"], ["rt_q"]))
        return "rt_q"
    return build


def gelu_mul(at):
    """GELU's two products as a transformer's quantizer leaves them: x * DQ(a quantized scalar 0.5) and
    x * that, each between Q/DQ (com.microsoft.QLinearMul both; the first has a one-element side). On the
    quantized input itself, so only the products' roundings can differ from level 0."""
    def build(nodes, inits, x):
        a = x
        info = np.iinfo(at)
        inits += [c("gh", np.array(100, dtype=at)), c("gh_s", np.float32(0.005)), c("gh_z", np.array(0, dtype=at))]
        nodes.append(helper.make_node("DequantizeLinear", [a, a + "_s", a + "_z"], ["ga_f"]))
        nodes.append(helper.make_node("DequantizeLinear", ["gh", "gh_s", "gh_z"], ["gh_f"]))
        nodes.append(helper.make_node("Mul", ["ga_f", "gh_f"], ["gm_f"]))
        inits += [c("gm_q_s", np.float32(0.03)), c("gm_q_z", np.array(info.min + 60, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["gm_f", "gm_q_s", "gm_q_z"], ["gm_q"]))
        nodes.append(helper.make_node("DequantizeLinear", ["gm_q", "gm_q_s", "gm_q_z"], ["gm_f2"]))
        nodes.append(helper.make_node("Mul", ["ga_f", "gm_f2"], ["gp_f"]))
        inits += [c("gp_q_s", np.float32(0.05)), c("gp_q_z", np.array(info.min + 30, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["gp_f", "gp_q_s", "gp_q_z"], ["gp_q"]))
        return "gp_q"
    return build


def erf_chain(at):
    """Elementwise chains between Q/DQ (cort.QLut, a byte table, for each): Erf(x / sqrt2) with a 0-d
    constant, then Sigmoid(2 * v - 1) with a [1] constant on the known-rank value."""
    def build(nodes, inits, x):
        info = np.iinfo(at)
        inits += [c("e_sqrt2", np.array(1.4142135, dtype=np.float32))]
        nodes.append(helper.make_node("DequantizeLinear", [x, x + "_s", x + "_z"], ["e_xf"]))
        nodes.append(helper.make_node("Div", ["e_xf", "e_sqrt2"], ["e_d"]))
        nodes.append(helper.make_node("Erf", ["e_d"], ["e_e"]))
        inits += [c("e_q_s", np.float32(1.0 / 120)), c("e_q_z", np.array(info.min + 128, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["e_e", "e_q_s", "e_q_z"], ["e_q"]))
        inits += [c("e_two", np.array([2.0], dtype=np.float32)), c("e_one", np.array(1.0, dtype=np.float32))]
        nodes.append(helper.make_node("DequantizeLinear", ["e_q", "e_q_s", "e_q_z"], ["e_f2"]))
        nodes.append(helper.make_node("Mul", ["e_f2", "e_two"], ["e_m"]))
        nodes.append(helper.make_node("Sub", ["e_m", "e_one"], ["e_s"]))
        nodes.append(helper.make_node("Sigmoid", ["e_s"], ["e_g"]))
        inits += [c("e_g_q_s", np.float32(1.0 / 250)), c("e_g_q_z", np.array(info.min + 2, dtype=at))]
        nodes.append(helper.make_node("QuantizeLinear", ["e_g", "e_g_q_s", "e_g_q_z"], ["e_g_q"]))
        return "e_g_q"
    return build


def pool_concat(nodes, inits, x):
    """Conv+Relu branches with one output scale/zero point, a MaxPool and a Concat between Q/DQ of those."""
    a = conv_block(nodes, inits, x, 3, 8, 3, 1, np.uint8, np.int8, True, "dq", "relu", "p1")
    b = conv_block(nodes, inits, x, 3, 8, 1, 1, np.uint8, np.int8, True, "dq", "relu", "p2", pads=0)
    nodes.append(helper.make_node("DequantizeLinear", [a, a + "_s", a + "_z"], ["pa_f"]))
    nodes.append(helper.make_node("MaxPool", ["pa_f"], ["pool_f"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    alias_scale(inits, a, "pool_q")
    nodes.append(helper.make_node("QuantizeLinear", ["pool_f", "pool_q_s", "pool_q_z"], ["pool_q"]))
    nodes.append(helper.make_node("DequantizeLinear", ["pool_q", "pool_q_s", "pool_q_z"], ["pool_f2"]))
    nodes.append(helper.make_node("DequantizeLinear", [b, b + "_s", b + "_z"], ["pb_f"]))
    nodes.append(helper.make_node("Concat", ["pool_f2", "pb_f"], ["cat_f"], axis=1))
    alias_scale(inits, a, "cat_q")
    nodes.append(helper.make_node("QuantizeLinear", ["cat_f", "cat_q_s", "cat_q_z"], ["cat_q"]))
    return "cat_q"


def concat_mixed(nodes, inits, x):
    """Two conv branches with their own output scales and zero points concatenated, then quantized
    with a third (squeezenet's fire modules as a static quantizer leaves them)."""
    a = conv_block(nodes, inits, x, 3, 8, 3, 1, np.uint8, np.int8, True, "dq", "relu", "m1")
    b = conv_block(nodes, inits, x, 3, 6, 1, 1, np.uint8, np.int8, True, "dq", None, "m2", pads=0)
    nodes.append(helper.make_node("DequantizeLinear", [a, a + "_s", a + "_z"], ["ma_f"]))
    nodes.append(helper.make_node("DequantizeLinear", [b, b + "_s", b + "_z"], ["mb_f"]))
    nodes.append(helper.make_node("Concat", ["ma_f", "mb_f", "ma_f"], ["mc_f"], axis=1))
    inits += [c("mc_q_s", np.float32(0.037)), c("mc_q_z", np.array(17, np.uint8))]
    nodes.append(helper.make_node("QuantizeLinear", ["mc_f", "mc_q_s", "mc_q_z"], ["mc_q"]))
    return "mc_q"


def quant_ops():
    """DynamicQuantizeLinear and per-tensor QuantizeLinear to uint8 and int8 of one float input
    (tests/test_quant_kernels.c: the threaded chunked paths against the scalar expressions)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["dq_y", "dq_s", "dq_z"]),
             helper.make_node("QuantizeLinear", ["x", "qs", "qz_u8"], ["q_u8"]),
             helper.make_node("QuantizeLinear", ["x", "qs", "qz_s8"], ["q_s8"])]
    inits = [c("qs", np.float32(0.0371)), c("qz_u8", np.array(121, np.uint8)), c("qz_s8", np.array(-7, np.int8))]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in
            [("dq_y", TensorProto.UINT8), ("dq_s", TensorProto.FLOAT), ("dq_z", TensorProto.UINT8),
             ("q_u8", TensorProto.UINT8), ("q_s8", TensorProto.INT8)]]
    m = helper.make_model(helper.make_graph(nodes, "quant_ops", [x], outs, inits),
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, "quant_ops.onnx"))


if __name__ == "__main__":
    model("qdq_pool_concat", np.uint8, pool_concat, [1, 3, 10, 11])
    model("qdq_conv_u8s8_perchannel", np.uint8, net(np.uint8, np.int8, True), [1, 3, 17, 15])
    model("qdq_conv_u8u8_pertensor", np.uint8, net(np.uint8, np.uint8, False), [2, 3, 12, 12])
    model("qdq_conv_s8s8_perchannel", np.int8, net(np.int8, np.int8, True), [1, 3, 16, 16])
    model("qdq_matmul_u8s8", np.uint8, matmul_net(np.uint8, np.int8), [2, 5, 20])
    model("qdq_unfusible", np.uint8, unfusible, [1, 3, 9, 9])
    model("qdq_matmul_u8s8_percolumn", np.uint8, matmul_net(np.uint8, np.int8, True), [2, 5, 20])
    model("qdq_residual_add_u8", np.uint8, residual_add(np.uint8), [1, 3, 11, 13])
    model("qdq_residual_add_s8", np.int8, residual_add(np.int8), [2, 3, 9, 8])
    quant_ops()
    model("qdq_concat_mixed", np.uint8, concat_mixed, [2, 3, 7, 9])
    model("qdq_gelu_mul_u8", np.uint8, gelu_mul(np.uint8), [1, 3, 12, 13])
    model("qdq_gelu_mul_s8", np.int8, gelu_mul(np.int8), [2, 3, 9, 11])
    model("qdq_erf_chain_u8", np.uint8, erf_chain(np.uint8), [3, 7, 11])
    model("qdq_erf_chain_s8", np.int8, erf_chain(np.int8), [2, 5, 13])
