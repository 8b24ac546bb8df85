#!/usr/bin/python3
"""Small real-world-shaped models whose expected outputs come from ONNX Runtime 1.30.

Writes backend-test folders under tests/models/realworld/NAME/ (model.onnx + test_data_set_N/input_K.pb);
then `node bench/ort_reference.js tests/models/realworld/*` fills output_K.pb from ONNX Runtime, and
`cort test tests/models/realworld/*` (run by make check) compares cort against them.

- vad_if_lstm: a voice-activity-detector-like graph (Silero-style): an If on the sample rate whose two
  branches each hold an LSTM carrying recurrent state (h, c in and out), then a Sigmoid head.
  Symbolic batch and time dimensions; data sets use different T and batch sizes.
- ocr_tiny_det: an OCR-detector-like CNN at opset 11: Conv/BatchNorm/HardSigmoid gate, Resize upsample,
  Concat, ConvTranspose, Sigmoid; symbolic batch/height/width, data sets with different spatial sizes.
- kws_conv: a keyword-spotting-like model with static shapes (so cort picks its paths at session
  creation): 3x1 and 1x3 convs over a spectrogram and 1-D convs over feature frames, channel counts and
  lengths where cort's 1-D Winograd applies (odd lengths, so tiles are partial), LeakyRelu/Relu.
"""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
out_root = os.path.join(here, "realworld")
rng = np.random.default_rng(2026)


def write_case(name, model, datasets):
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, inputs in enumerate(datasets):
        dd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(dd, exist_ok=True)
        for i, (nm, arr) in enumerate(inputs):
            with open(os.path.join(dd, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(arr, nm).SerializeToString())


def lstm_branch(tag, F, H):
    W = numpy_helper.from_array((rng.standard_normal((1, 4 * H, F)) * 0.3).astype(np.float32), "W_" + tag)
    R = numpy_helper.from_array((rng.standard_normal((1, 4 * H, H)) * 0.3).astype(np.float32), "R_" + tag)
    B = numpy_helper.from_array((rng.standard_normal((1, 8 * H)) * 0.1).astype(np.float32), "B_" + tag)
    Wo = numpy_helper.from_array((rng.standard_normal((H, 1)) * 0.5).astype(np.float32), "Wo_" + tag)
    nodes = [
        helper.make_node("Transpose", ["x"], ["x_tbf_" + tag], perm=[1, 0, 2]),
        helper.make_node("LSTM", ["x_tbf_" + tag, "W_" + tag, "R_" + tag, "B_" + tag, "", "h", "c"],
                         ["Y_" + tag, "h_" + tag, "c_" + tag], hidden_size=H),
        helper.make_node("Squeeze", ["Y_" + tag, "ax1"], ["Ys_" + tag]),           # [T, B, H]
        helper.make_node("MatMul", ["Ys_" + tag, "Wo_" + tag], ["logit_" + tag]),  # [T, B, 1]
        helper.make_node("Sigmoid", ["logit_" + tag], ["p_" + tag]),
        helper.make_node("Transpose", ["p_" + tag], ["prob_" + tag], perm=[1, 0, 2]),  # [B, T, 1]
    ]
    g = helper.make_graph(nodes, "branch_" + tag, [],
                          [helper.make_tensor_value_info("prob_" + tag, T.FLOAT, None),
                           helper.make_tensor_value_info("h_" + tag, T.FLOAT, None),
                           helper.make_tensor_value_info("c_" + tag, T.FLOAT, None)],
                          [W, R, B, Wo])
    return g


def make_vad():
    F, H = 16, 24
    ax1 = numpy_helper.from_array(np.array([1], np.int64), "ax1")
    sr16 = numpy_helper.from_array(np.array(16000, np.int64), "sr16")
    g = helper.make_graph(
        [helper.make_node("Equal", ["sr", "sr16"], ["is16"]),
         helper.make_node("If", ["is16"], ["prob", "hn", "cn"], name="rate_switch",
                          then_branch=lstm_branch("a", F, H), else_branch=lstm_branch("b", F, H))],
        "vad_if_lstm",
        [helper.make_tensor_value_info("x", T.FLOAT, ["batch", "time", F]),
         helper.make_tensor_value_info("sr", T.INT64, []),
         helper.make_tensor_value_info("h", T.FLOAT, [1, "batch", H]),
         helper.make_tensor_value_info("c", T.FLOAT, [1, "batch", H])],
        [helper.make_tensor_value_info("prob", T.FLOAT, ["batch", "time", 1]),
         helper.make_tensor_value_info("hn", T.FLOAT, [1, "batch", H]),
         helper.make_tensor_value_info("cn", T.FLOAT, [1, "batch", H])],
        [ax1, sr16])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)], producer_name="cort-tests")
    m.ir_version = 8
    sets = []
    for b, t, sr in [(1, 10, 16000), (2, 37, 8000), (3, 5, 16000), (1, 64, 8000)]:
        sets.append([("x", rng.standard_normal((b, t, F)).astype(np.float32)), ("sr", np.array(sr, np.int64)),
                     ("h", (rng.standard_normal((1, b, H)) * 0.5).astype(np.float32)),
                     ("c", (rng.standard_normal((1, b, H)) * 0.5).astype(np.float32))])
    write_case("vad_if_lstm", m, sets)


def conv_bn(prefix, cin, cout, k, stride, inp, nodes, inits, act="relu"):
    w = numpy_helper.from_array((rng.standard_normal((cout, cin, k, k)) * (1.0 / np.sqrt(cin * k * k))).astype(np.float32), prefix + "_w")
    inits.append(w)
    for nm, val in [("scale", 1 + 0.1 * rng.standard_normal(cout)), ("bias", 0.1 * rng.standard_normal(cout)),
                    ("mean", 0.1 * rng.standard_normal(cout)), ("var", 1 + 0.1 * np.abs(rng.standard_normal(cout)))]:
        inits.append(numpy_helper.from_array(val.astype(np.float32), prefix + "_" + nm))
    nodes.append(helper.make_node("Conv", [inp, prefix + "_w"], [prefix + "_c"], pads=[k // 2] * 4, strides=[stride] * 2))
    nodes.append(helper.make_node("BatchNormalization", [prefix + "_c", prefix + "_scale", prefix + "_bias", prefix + "_mean",
                                                          prefix + "_var"], [prefix + "_bn"]))
    if act == "relu":
        nodes.append(helper.make_node("Relu", [prefix + "_bn"], [prefix + "_out"]))
    else:  # HardSigmoid-gated (SE-like): x * hardsigmoid(x)
        nodes.append(helper.make_node("HardSigmoid", [prefix + "_bn"], [prefix + "_g"], alpha=0.2, beta=0.5))
        nodes.append(helper.make_node("Mul", [prefix + "_bn", prefix + "_g"], [prefix + "_out"]))
    return prefix + "_out"


def make_ocr_det():
    nodes, inits = [], []
    a = conv_bn("s1", 3, 8, 3, 2, "image", nodes, inits)
    b = conv_bn("s2", 8, 16, 3, 2, a, nodes, inits, act="hsig")
    c = conv_bn("s3", 16, 16, 3, 2, b, nodes, inits, act="hsig")
    inits.append(numpy_helper.from_array(np.array([], np.float32), "roi"))
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up2"))
    nodes.append(helper.make_node("Resize", [c, "roi", "up2"], ["c_up"], mode="nearest"))
    nodes.append(helper.make_node("Concat", ["c_up", b], ["fpn"], axis=1))
    d = conv_bn("s4", 32, 8, 3, 1, "fpn", nodes, inits)
    wt = numpy_helper.from_array((rng.standard_normal((8, 1, 4, 4)) * 0.2).astype(np.float32), "up_w")
    inits.append(wt)
    nodes.append(helper.make_node("ConvTranspose", [d, "up_w"], ["up"], strides=[4, 4], kernel_shape=[4, 4]))
    nodes.append(helper.make_node("Clip", ["up", "cmin", "cmax"], ["clipped"]))
    inits.append(numpy_helper.from_array(np.array(-6, np.float32), "cmin"))
    inits.append(numpy_helper.from_array(np.array(6, np.float32), "cmax"))
    nodes.append(helper.make_node("Sigmoid", ["clipped"], ["maps"]))
    g = helper.make_graph(nodes, "ocr_tiny_det", [helper.make_tensor_value_info("image", T.FLOAT, ["N", 3, "H", "W"])],
                          [helper.make_tensor_value_info("maps", T.FLOAT, ["N", 1, "H", "W"])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], producer_name="cort-tests")
    m.ir_version = 6
    sets = [[("image", rng.standard_normal((n, 3, h, w)).astype(np.float32))] for n, h, w in [(1, 64, 96), (2, 32, 32), (1, 96, 64)]]
    write_case("ocr_tiny_det", m, sets)


def make_kws_conv():
    r = np.random.default_rng(77)   # its own stream: the other models' data stay as they were
    nodes, inits = [], []

    def conv(name, inp, cin, cout, k, pads, act, dil=None):
        inits.append(numpy_helper.from_array((r.standard_normal((cout, cin) + k) / np.sqrt(cin * np.prod(k))).astype(np.float32), name + "_w"))
        inits.append(numpy_helper.from_array((0.1 * r.standard_normal(cout)).astype(np.float32), name + "_b"))
        attrs = {"pads": pads}
        if dil:
            attrs["dilations"] = dil
        nodes.append(helper.make_node("Conv", [inp, name + "_w", name + "_b"], [name + "_c"], **attrs))
        if act == "leaky":
            nodes.append(helper.make_node("LeakyRelu", [name + "_c"], [name + "_out"], alpha=0.1))
        else:
            nodes.append(helper.make_node("Relu", [name + "_c"], [name + "_out"]))
        return name + "_out"

    a = conv("stem", "spec", 1, 32, (3, 3), [1, 1, 1, 1], "leaky")
    b = conv("tconv", a, 32, 48, (3, 1), [1, 0, 2, 0], "leaky")       # 3x1, asymmetric pad along H
    c = conv("fconv", b, 48, 64, (1, 3), [0, 1, 0, 1], "leaky")       # 1x3
    nodes.append(helper.make_node("GlobalAveragePool", [c], ["pooled"]))
    d = conv("c1", "frames", 40, 64, (3,), [1, 1], "relu")            # 1-D
    e = conv("c2", d, 64, 48, (3,), [0, 2], "relu")
    g = helper.make_graph(nodes, "kws_conv", [helper.make_tensor_value_info("spec", T.FLOAT, [2, 1, 37, 61]),
                                               helper.make_tensor_value_info("frames", T.FLOAT, [3, 40, 77])],
                          [helper.make_tensor_value_info("pooled", T.FLOAT, [2, 64, 1, 1]),
                           helper.make_tensor_value_info(e, T.FLOAT, [3, 48, 77]),
                           helper.make_tensor_value_info(c, T.FLOAT, [2, 64, 38, 61])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="cort-tests")
    m.ir_version = 7
    sets = [[("spec", r.standard_normal((2, 1, 37, 61)).astype(np.float32)),
             ("frames", r.standard_normal((3, 40, 77)).astype(np.float32))] for _ in range(2)]
    write_case("kws_conv", m, sets)


if __name__ == "__main__":
    import sys
    only = sys.argv[1:]
    for name, fn in (("vad_if_lstm", make_vad), ("ocr_tiny_det", make_ocr_det), ("kws_conv", make_kws_conv)):
        if not only or name in only:
            fn()
    print("ok")
