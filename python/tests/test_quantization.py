"""cort.quantization: the graphs quantize_dynamic / quantize_static write (ops, per-channel parameters,
int32 bias scales), their accuracy against the float model when cort runs them, the command line, and
that ONNX Runtime 1.30 runs them too (skipped without node and onnxruntime-node in build/ort)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper, numpy_helper, TensorProto as TP
import onnx

import cort
from cort.quantization import (CalibrationDataReader, CalibrationMethod, ListDataReader, QuantFormat, QuantType,
                               quantize_dynamic, quantize_static)
from cort.quantization.quant_utils import quantize_weight, scale_zero_point

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def mlp_model(seed=0):
    """MatMul+Add+Relu, MatMul+Relu, Gemm(transB): the dense shapes of transformer and MLP heads."""
    r = np.random.default_rng(seed)
    w1 = (r.standard_normal((64, 96)) * 0.15).astype(np.float32)
    b1 = (r.standard_normal(96) * 0.1).astype(np.float32)
    w2 = (r.standard_normal((96, 80)) * 0.15).astype(np.float32)
    w3 = (r.standard_normal((10, 80)) * 0.15).astype(np.float32)
    b3 = (r.standard_normal(10) * 0.1).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h1"], "fc1"),
             helper.make_node("Add", ["h1", "b1"], ["h1b"], "fc1_bias"),
             helper.make_node("Relu", ["h1b"], ["a1"], "relu1"),
             helper.make_node("MatMul", ["a1", "w2"], ["h2"], "fc2"),
             helper.make_node("Relu", ["h2"], ["a2"], "relu2"),
             helper.make_node("Gemm", ["a2", "w3", "b3"], ["y"], "head", transB=1)]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TP.FLOAT, ["N", 64])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, ["N", 10])],
                          [init("w1", w1), init("b1", b1), init("w2", w2), init("w3", w3), init("b3", b3)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def conv_model(seed=1):
    """Conv+Relu, MaxPool, Conv+Clip(0, 6) (bounds from Constant nodes, as torch exports them), a
    residual Add, GlobalAveragePool, Flatten, Gemm: the ops of the ResNet/MobileNet family."""
    r = np.random.default_rng(seed)

    def w(*shape):
        fan_in = int(np.prod(shape[1:]))
        return (r.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    inits = [init("c1w", w(8, 3, 3, 3)), init("c1b", (r.standard_normal(8) * 0.1).astype(np.float32)),
             init("c2w", w(8, 8, 3, 3)), init("c2b", (r.standard_normal(8) * 0.1).astype(np.float32)),
             init("c3w", w(8, 1, 3, 3)),
             init("fcw", w(5, 8)), init("fcb", (r.standard_normal(5) * 0.1).astype(np.float32))]
    nodes = [helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], "pool1", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], "conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Constant", [], ["lo"], "lo", value=helper.make_tensor("lo", TP.FLOAT, [], [0.0])),
             helper.make_node("Constant", [], ["hi"], "hi", value=helper.make_tensor("hi", TP.FLOAT, [], [6.0])),
             helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"], "clip2"),
             helper.make_node("Conv", ["r2", "c3w"], ["c3"], "dwconv3", pads=[1, 1, 1, 1], group=8),
             helper.make_node("Add", ["c3", "p1"], ["s"], "residual"),
             helper.make_node("GlobalAveragePool", ["s"], ["gap"], "gap"),
             helper.make_node("Flatten", ["gap"], ["flat"], "flatten"),
             helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["y"], "fc", transB=1)]
    g = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", TP.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [1, 5])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def samples(shape, n, seed):
    r = np.random.default_rng(seed)
    return [{"x": r.standard_normal(shape).astype(np.float32)} for _ in range(n)]


def run(model, feed):
    return cort.InferenceSession(model.SerializeToString()).run(None, feed)[0]


def ops(model):
    return [n.op_type for n in model.graph.node]


def initializer(model, name):
    return numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == name))


def node_by_output(model, name):
    return next(n for n in model.graph.node if name in n.output)


# ---- arithmetic ----

def test_scale_zero_point_matches_the_definition():
    # uint8 activations: [rmin, rmax] widened to contain 0, onto [0, 255]
    s, z = scale_zero_point(-1.0, 3.0, 0, 255)
    assert np.isclose(s, 4.0 / 255) and z == round(1.0 / (4.0 / 255))
    s, z = scale_zero_point(0.5, 2.0, 0, 255)      # 0 must be representable exactly
    assert np.isclose(s, 2.0 / 255) and z == 0
    s, z = scale_zero_point(-0.5, 2.0, -127, 127, symmetric=True)
    assert np.isclose(s, 4.0 / 254) and z == 0
    s, z = scale_zero_point(0.0, 0.0, 0, 255)      # an all-zero tensor
    assert s == 1.0 and z == 0


def test_per_channel_weights_reconstruct_within_half_a_step():
    r = np.random.default_rng(3)
    w = r.standard_normal((6, 4, 3, 3)).astype(np.float32) * np.arange(1, 7, dtype=np.float32)[:, None, None, None]
    q, s, z = quantize_weight(w, QuantType.QInt8, symmetric=True, axis=0)
    assert q.dtype == np.int8 and s.shape == (6,) and np.all(z == 0)
    assert np.all(np.abs(q.astype(np.int32)) <= 127)
    back = q.astype(np.float32) * s[:, None, None, None]
    assert np.all(np.abs(back - w) <= s[:, None, None, None] / 2 + 1e-7)
    # each channel uses its full range: the largest magnitude maps to +-127
    assert np.all(np.abs(q.reshape(6, -1)).max(axis=1) == 127)
    qu, su, zu = quantize_weight(w, QuantType.QUInt8, symmetric=False)
    assert qu.dtype == np.uint8 and np.ndim(su) == 0
    assert np.abs((qu.astype(np.float32) - zu.astype(np.float32)) * su - w).max() <= su / 2 + 1e-6


# ---- dynamic ----

@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
def test_dynamic_mlp(tmp_path, per_channel, weight_type):
    m = mlp_model()
    out = tmp_path / "q.onnx"
    q = quantize_dynamic(m, out, per_channel=per_channel, weight_type=weight_type)
    assert out.exists()
    o = ops(q)
    assert o.count("MatMulInteger") == 3 and o.count("DynamicQuantizeLinear") == 3
    assert "MatMul" not in o and "Gemm" not in o
    assert o.count("Cast") == 3
    # the float weights are gone, replaced by quantized ones of the requested type
    names = {i.name for i in q.graph.initializer}
    assert not {"w1", "w2", "w3"} & names
    mmi = [n for n in q.graph.node if n.op_type == "MatMulInteger"]
    for n, cols in zip(mmi, (96, 80, 10)):
        b = initializer(q, n.input[1])
        assert b.dtype == weight_type.np_dtype and b.shape[1] == cols
        zp = initializer(q, n.input[3])
        assert zp.shape == ((cols,) if per_channel else ())
    x = samples((4, 64), 1, 11)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


def test_dynamic_respects_exclusions_and_op_types():
    m = mlp_model()
    q = quantize_dynamic(m, None, nodes_to_exclude=["fc2"])
    assert ops(q).count("MatMulInteger") == 2 and "MatMul" in ops(q)
    q = quantize_dynamic(m, None, op_types_to_quantize=["MatMul"])
    assert ops(q).count("MatMulInteger") == 2 and "Gemm" in ops(q)


def test_dynamic_conv_integer():
    m = conv_model()
    q = quantize_dynamic(m, None, op_types_to_quantize=["Conv"])
    assert ops(q).count("ConvInteger") == 3 and "Conv" not in ops(q)
    x = samples((1, 3, 16, 16), 1, 5)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


# ---- static QDQ ----

def check_weight_dq(q, node, axis_len):
    dq = node_by_output(q, node.input[1])
    assert dq.op_type == "DequantizeLinear"
    scale = initializer(q, dq.input[1])
    assert scale.shape == ((axis_len,) if axis_len else ())
    assert initializer(q, dq.input[0]).dtype == np.int8
    assert np.all(initializer(q, dq.input[2]) == 0)
    return scale


@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qdq_convnet(per_channel):
    m = conv_model()
    q = quantize_static(m, None, ListDataReader(samples((1, 3, 16, 16), 4, 7)), quant_format=QuantFormat.QDQ,
                        per_channel=per_channel)
    o = ops(q)
    # Relu and Clip folded into the ranges of the convolutions before them; Constant bounds dropped
    assert "Relu" not in o and "Clip" not in o and "Constant" not in o
    assert o.count("Conv") == 3 and o.count("Gemm") == 1 and "MaxPool" in o and "Add" in o
    assert o.count("QuantizeLinear") >= 7
    for n in q.graph.node:
        if n.op_type == "Conv":
            w = check_weight_dq(q, n, 8 if per_channel else None)
            x_dq = node_by_output(q, n.input[0])
            assert x_dq.op_type == "DequantizeLinear"
            x_scale = initializer(q, x_dq.input[1])
            if len(n.input) > 2:
                b_dq = node_by_output(q, n.input[2])
                assert initializer(q, b_dq.input[0]).dtype == np.int32
                assert np.allclose(initializer(q, b_dq.input[1]), x_scale * w, rtol=1e-6)
                if per_channel:
                    assert any(a.name == "axis" and a.i == 0 for a in b_dq.attribute)
        if n.op_type == "Gemm":
            check_weight_dq(q, n, 5 if per_channel else None)
    # the output of a folded Relu starts at 0: zero point 0
    relu_q = next(n for n in q.graph.node if n.op_type == "QuantizeLinear" and n.input[0].startswith("r1"))
    assert initializer(q, relu_q.input[2]) == 0
    # MaxPool passes the quantized tensor through with the same parameters
    pool = next(n for n in q.graph.node if n.op_type == "MaxPool")
    pool_q = next(n for n in q.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == pool.output[0])
    assert pool_q.input[1] == relu_q.input[1]
    onnx.checker.check_model(q)
    for x in samples((1, 3, 16, 16), 3, 8):
        assert cosine(run(m, x), run(q, x)) > 0.99


def test_static_qdq_mlp_and_graph_output_name():
    m = mlp_model()
    q = quantize_static(m, None, ListDataReader(samples((8, 64), 4, 9)), per_channel=True)
    assert [o.name for o in q.graph.output] == ["y"]
    assert node_by_output(q, "y").op_type == "DequantizeLinear"
    assert ops(q).count("MatMul") == 2 and "Relu" not in ops(q)
    x = samples((8, 64), 1, 10)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


def attention_model(seed=3):
    """x W_q x (x W_k)^T, softmax, x V: MatMuls of two activations next to weight MatMuls."""
    r = np.random.default_rng(seed)
    wq = (r.standard_normal((16, 16)) * 0.1).astype(np.float32)
    wk = (r.standard_normal((16, 16)) * 0.1).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"], "q_proj"),
             helper.make_node("MatMul", ["x", "wk"], ["k"], "k_proj"),
             helper.make_node("Transpose", ["k"], ["kt"], "kt", perm=[1, 0]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], "scores"),
             helper.make_node("Softmax", ["s"], ["p"], "softmax", axis=-1),
             helper.make_node("MatMul", ["p", "x"], ["y"], "context")]
    g = helper.make_graph(nodes, "attn", [helper.make_tensor_value_info("x", TP.FLOAT, [8, 16])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [8, 16])], [init("wq", wq), init("wk", wk)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("fmt", [QuantFormat.QDQ, QuantFormat.QOperator])
def test_static_matmul_of_two_activations(fmt):
    """B of Q x K^T is an activation: quantized like one (QDQ: by its producer's Q/DQ pair), never
    looked up as a weight initializer."""
    m = attention_model()
    q = quantize_static(m, None, ListDataReader(samples((8, 16), 4, 21)), quant_format=fmt, per_channel=True)
    if fmt == QuantFormat.QDQ:
        scores = next(n for n in q.graph.node if n.name == "scores")
        assert node_by_output(q, scores.input[1]).op_type == "DequantizeLinear"
    else:
        assert ops(q).count("QLinearMatMul") >= 3
    x = samples((8, 16), 1, 22)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


def test_static_qdq_gemm_runs_as_qgemm(tmp_path):
    """cort's QDQ pass turns DQ -> Gemm(transB, per-column weights, int32 bias) -> Q into
    com.microsoft.QGemm: the saved graph holds QGemm, and the fused result stays within one output
    step of the graph as written (level 0)."""
    m = mlp_model()
    q = quantize_static(m, None, ListDataReader(samples((8, 64), 4, 9)), per_channel=True)
    assert "Gemm" in ops(q)
    saved = tmp_path / "opt.onnx"
    so = cort.SessionOptions()
    so.optimized_model_filepath = str(saved)
    x = samples((8, 64), 1, 11)[0]
    fused = cort.InferenceSession(q.SerializeToString(), so).run(None, x)[0]
    so0 = cort.SessionOptions()
    so0.graph_optimization_level = cort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = cort.InferenceSession(q.SerializeToString(), so0).run(None, x)[0]
    opt_ops = ops(onnx.load(str(saved)))
    assert "QGemm" in opt_ops and "Gemm" not in opt_ops
    step = float(initializer(q, node_by_output(q, "y").input[1]))
    assert np.abs(fused - plain).max() <= step * 1.001


class CountingReader(CalibrationDataReader):
    def __init__(self, n):
        self.data = samples((2, 64), n, 12)
        self.calls = 0

    def get_next(self):
        self.calls += 1
        return self.data.pop() if self.data else None


def test_calibration_reader_protocol_and_errors():
    r = CountingReader(3)
    quantize_static(mlp_model(), None, r)
    assert r.calls == 4          # three samples, then None
    with pytest.raises(ValueError):
        quantize_static(mlp_model(), None, CountingReader(0))
    with pytest.raises(NotImplementedError):
        quantize_static(mlp_model(), None, CountingReader(1), calibrate_method=CalibrationMethod.Entropy)


# ---- static QOperator ----

@pytest.mark.parametrize("per_channel", [False, True])
def test_static_qoperator_convnet(per_channel):
    m = conv_model()
    q = quantize_static(m, None, ListDataReader(samples((1, 3, 16, 16), 4, 7)),
                        quant_format=QuantFormat.QOperator, per_channel=per_channel)
    o = ops(q)
    assert o.count("QLinearConv") == 3 and "Conv" not in o
    assert "QGemm" in o and "QLinearAdd" in o and "QLinearGlobalAveragePool" in o
    assert o.count("QuantizeLinear") == 1 and o.count("DequantizeLinear") == 1   # only at the boundaries
    assert any(i.domain == "com.microsoft" for i in q.opset_import)
    for n in q.graph.node:
        if n.op_type == "QLinearConv":
            assert initializer(q, n.input[4]).shape == ((8,) if per_channel else ())
            assert initializer(q, n.input[3]).dtype == np.int8
    x = samples((1, 3, 16, 16), 1, 8)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


def test_static_qoperator_mlp():
    m = mlp_model()
    q = quantize_static(m, None, ListDataReader(samples((8, 64), 4, 9)), quant_format=QuantFormat.QOperator)
    assert ops(q).count("QLinearMatMul") == 2 and "QGemm" in ops(q) and "QLinearAdd" in ops(q)
    x = samples((8, 64), 1, 10)[0]
    assert cosine(run(m, x), run(q, x)) > 0.99


# ---- command line ----

def write_samples(folder, shape, n, seed, npy):
    for k, s in enumerate(samples(shape, n, seed)):
        d = folder / ("test_data_set_%d" % k)
        d.mkdir(parents=True)
        if npy:
            np.save(d / "input_0.npy", s["x"])
        else:
            (d / "input_0.pb").write_bytes(numpy_helper.from_array(s["x"], "x").SerializeToString())


def cli_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python") + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.mark.parametrize("npy", [False, True])
def test_module_command_line(tmp_path, npy):
    src = tmp_path / "f.onnx"
    onnx.save(conv_model(), src)
    write_samples(tmp_path / "cal", (1, 3, 16, 16), 3, 4, npy)
    out = tmp_path / "q.onnx"
    p = subprocess.run([sys.executable, "-m", "cort.quantization", "static", str(src), str(out), "--calibration-dir",
                        str(tmp_path / "cal"), "--format", "qoperator", "--per-channel"],
                       env=cli_env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert ops(onnx.load(out)).count("QLinearConv") == 3
    p = subprocess.run([sys.executable, "-m", "cort.quantization", "static", str(src), str(out), "--calibration-dir",
                        str(tmp_path / "nothing")], env=cli_env(), capture_output=True, text=True)
    assert p.returncode == 1 and "does not exist" in p.stderr


def test_cort_quantize_subcommand(tmp_path):
    cli = os.path.join(REPO, "build", "bin", "cort")
    if not os.access(cli, os.X_OK):
        pytest.skip("build/bin/cort is not built")
    src = tmp_path / "f.onnx"
    onnx.save(mlp_model(), src)
    out = tmp_path / "d.onnx"
    p = subprocess.run([cli, "quantize", "dynamic", str(src), str(out), "--per-channel", "--weight-type", "uint8"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    q = onnx.load(out)
    assert ops(q).count("MatMulInteger") == 3
    assert initializer(q, next(n for n in q.graph.node if n.op_type == "MatMulInteger").input[1]).dtype == np.uint8
    p = subprocess.run([cli, "quantize", "bogus"], capture_output=True, text=True)
    assert p.returncode == 2


# ---- ONNX Runtime runs the outputs too ----

def ort_available():
    node = shutil.which("node")
    ort = os.environ.get("ORT_NODE_DIR") or os.path.join(REPO, "build", "ort")
    return node and os.path.isdir(os.path.join(ort, "node_modules", "onnxruntime-node"))


def ort_run(tmp_path, model, x):
    """ONNX Runtime's output on x, through bench/ort_reference.js (which writes output_0.pb)."""
    d = tmp_path / ("ort_%d" % len(list(tmp_path.iterdir())))
    (d / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, d / "model.onnx")
    (d / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    p = subprocess.run(["node", os.path.join(REPO, "bench", "ort_reference.js"), "--threads", "1", str(d)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr + p.stdout
    t = TP()
    t.ParseFromString((d / "test_data_set_0" / "output_0.pb").read_bytes())
    return numpy_helper.to_array(t)


@pytest.mark.skipif(not ort_available(), reason="node or onnxruntime-node (build/ort) is absent")
def test_onnxruntime_runs_the_quantized_models(tmp_path):
    cases = []
    mlp, conv = mlp_model(), conv_model()
    xm = samples((8, 64), 1, 10)[0]["x"]
    xc = samples((1, 3, 16, 16), 1, 8)[0]["x"]
    cases.append((mlp, quantize_dynamic(mlp, None, per_channel=True), xm))
    for fmt in (QuantFormat.QDQ, QuantFormat.QOperator):
        cases.append((conv, quantize_static(conv, None, ListDataReader(samples((1, 3, 16, 16), 4, 7)),
                                            quant_format=fmt, per_channel=True), xc))
        cases.append((mlp, quantize_static(mlp, None, ListDataReader(samples((8, 64), 4, 9)),
                                           quant_format=fmt, per_channel=True), xm))
    for float_model, q, x in cases:
        ref = run(float_model, {"x": x})
        got = ort_run(tmp_path, q, x)
        assert got.shape == ref.shape
        # ORT's u8 x s8 kernels may saturate 16-bit pair sums on AVX2 machines without VNNI: a looser bound
        assert cosine(ref, got) > 0.97, ops(q)
