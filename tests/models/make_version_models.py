#!/usr/bin/python3
"""Models for the operator versions after ONNX 1.12 (checked in; rerun to regenerate).
Run with Debian's /usr/bin/python3 (python3-onnx 1.12, python3-numpy, python3-torch).

Each versions/<name>/ holds model.onnx and test_data_set_0/{input,output}_K.pb in the layout of the
ONNX backend tests; scripts/run_tests.sh runs them with `cort test tests/models/versions/*`.
Expected outputs come from numpy (or torch's grid_sample) written here from the ONNX spec text, not
from ONNX's reference implementation. onnx 1.12 does not know opsets above 17, so the models are
not passed through onnx.checker.

  avgpool19_dilated_pad      AveragePool-19 dilations + pads + count_include_pad: the divisor counts
                             the dilated taps inside the padded input
  avgpool22_dilated_ceil     AveragePool-22 the same with ceil_mode (windows running past the padding)
  dft20_axis_input           DFT-20: the axis is input 2 (a graph input), forward complex transform
  dft20_default_axis         DFT-20 without the axis input: the last signal axis (-2)
  dft20_irfft_odd            DFT-20 onesided + inverse with dft_length 9: inverse real transform
  dft17_irfft                DFT-17 (opset 19) onesided + inverse with the attribute axis
  gridsample20_3d_linear     GridSample-20 on [N,C,D,H,W] with mode linear (torch trilinear reference)
  gridsample20_3d_nearest    ... mode nearest, border padding
  gridsample20_1d_cubic      GridSample-20 on [N,C,W] with mode cubic, reflection padding (numpy)
  gridsample22_2d_linear     GridSample-22 4-D, align_corners (torch bilinear reference)
  gridsample20_int32_linear  GridSample-20 on int32 X: interpolated, then truncated
  range27_float16            Range-27 float16 in the default stash_type (float)
  reduce20_bool              ReduceMax / ReduceMin-20 on bool, axes as input
  groupnorm21_channel_scale  GroupNormalization-21: scale and bias per channel
  pad25_wrap                 Pad-25 wrap mode with axes
  shape_ops25                Shape-25 (start/end), Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
                             Identity, Size, Constant at opset 25 (caps raised; semantics as before)
"""
import os
import shutil
import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "versions")
rng = np.random.default_rng(20)
shutil.rmtree(root, ignore_errors=True)


def save(name, nodes, inputs, outputs, opset, inits=()):
    """inputs / outputs: lists of (name, array); writes versions/<name>/."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))

    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape))

    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="cort-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, vals in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(vals):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


# ---------------- AveragePool with dilations ----------------
def avgpool_ref(x, k, s, d, pads, ceil_mode, count_include_pad):
    """Windows of k taps spaced d apart; a tap counts toward the divisor if it lies inside the input
    (count_include_pad=0) or inside the input extended by the pads (count_include_pad=1)."""
    nd = len(k)
    spatial = x.shape[2:]
    out = []
    for i in range(nd):
        span = spatial[i] + pads[i] + pads[nd + i] - ((k[i] - 1) * d[i] + 1)
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= spatial[i] + pads[i]:
            o -= 1   # a window may not start in the end padding
        out.append(o)
    y = np.zeros(x.shape[:2] + tuple(out), np.float64)
    for idx in np.ndindex(*out):
        total = np.zeros(x.shape[:2])
        n_in = n_pad = 0
        for taps in np.ndindex(*k):
            pos = [idx[i] * s[i] - pads[i] + taps[i] * d[i] for i in range(nd)]
            if all(p < spatial[i] + pads[nd + i] for i, p in enumerate(pos)):
                n_pad += 1
            if all(0 <= p < spatial[i] for i, p in enumerate(pos)):
                n_in += 1
                total += x[(slice(None), slice(None)) + tuple(pos)]
        y[(slice(None), slice(None)) + idx] = total / (n_pad if count_include_pad else n_in)
    return y.astype(np.float32)


x = rng.standard_normal((1, 2, 7, 8)).astype(np.float32)
attrs = dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[2, 3], pads=[2, 1, 1, 2], count_include_pad=1)
save("avgpool19_dilated_pad", [helper.make_node("AveragePool", ["x"], ["y"], **attrs)], [("x", x)],
     [("y", avgpool_ref(x, [3, 2], [2, 1], [2, 3], [2, 1, 1, 2], 0, 1))], 19)
attrs = dict(kernel_shape=[3, 3], strides=[3, 2], dilations=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1,
             ceil_mode=1)
x = rng.standard_normal((2, 1, 9, 10)).astype(np.float32)
save("avgpool22_dilated_ceil", [helper.make_node("AveragePool", ["x"], ["y"], **attrs)], [("x", x)],
     [("y", avgpool_ref(x, [3, 3], [3, 2], [2, 2], [1, 1, 1, 1], 1, 1))], 22)

# ---------------- DFT ----------------
def complex_of(a):
    return a[..., 0] + 1j * a[..., 1] if a.shape[-1] == 2 else a[..., 0].astype(np.complex128)


def stack(c):
    return np.stack([c.real, c.imag], axis=-1).astype(np.float32)


x = rng.standard_normal((2, 5, 6, 2)).astype(np.float32)
axis = np.array(1, np.int64)
save("dft20_axis_input", [helper.make_node("DFT", ["x", "", "axis"], ["y"])], [("x", x), ("axis", axis)],
     [("y", stack(np.fft.fft(complex_of(x.astype(np.float64)), axis=1)))], 20)
x = rng.standard_normal((3, 4, 7, 1)).astype(np.float32)
save("dft20_default_axis", [helper.make_node("DFT", ["x"], ["y"], inverse=1)], [("x", x)],
     [("y", stack(np.fft.ifft(complex_of(x.astype(np.float64)), axis=2)))], 20)
spec = np.fft.rfft(rng.standard_normal((2, 9, 3)), axis=1)           # 5 bins of a length-9 signal
x = stack(spec)
n = np.array(9, np.int64)
save("dft20_irfft_odd", [helper.make_node("DFT", ["x", "n", "axis"], ["y"], onesided=1, inverse=1)],
     [("x", x), ("n", n), ("axis", np.array(-3, np.int64))],
     [("y", np.fft.irfft(complex_of(x.astype(np.float64)), n=9, axis=1)[..., None].astype(np.float32))], 20)
spec = np.fft.rfft(rng.standard_normal((1, 10, 4)), axis=1)          # 6 bins, default length 10
x = stack(spec)
save("dft17_irfft", [helper.make_node("DFT", ["x"], ["y"], onesided=1, inverse=1, axis=1)], [("x", x)],
     [("y", np.fft.irfft(complex_of(x.astype(np.float64)), axis=1)[..., None].astype(np.float32))], 19)

# ---------------- GridSample ----------------
def torch_gs(x, g, mode, pad, align):
    return torch.nn.functional.grid_sample(torch.from_numpy(x).double(), torch.from_numpy(g).double(), mode=mode,
                                           padding_mode=pad, align_corners=bool(align)).numpy().astype(np.float32)


x = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
g = rng.uniform(-1.2, 1.2, (2, 3, 2, 4, 3)).astype(np.float32)
save("gridsample20_3d_linear", [helper.make_node("GridSample", ["x", "g"], ["y"], mode="linear")],
     [("x", x), ("g", g)], [("y", torch_gs(x, g, "bilinear", "zeros", 0))], 20)
# nearest: keep grid points away from the halfway ties, where rounding conventions differ
g = ((rng.integers(-6, 7, (1, 2, 3, 4, 3)) + rng.uniform(-0.3, 0.3, (1, 2, 3, 4, 3))) / 5).astype(np.float32)
x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
save("gridsample20_3d_nearest", [helper.make_node("GridSample", ["x", "g"], ["y"], mode="nearest",
                                                  padding_mode="border", align_corners=1)],
     [("x", x), ("g", g)], [("y", torch_gs(x, g, "nearest", "border", 1))], 20)
x = rng.standard_normal((2, 4, 4, 7)).astype(np.float32)
g = rng.uniform(-1.1, 1.1, (2, 5, 3, 2)).astype(np.float32)
save("gridsample22_2d_linear", [helper.make_node("GridSample", ["x", "g"], ["y"], align_corners=1)],
     [("x", x), ("g", g)], [("y", torch_gs(x, g, "bilinear", "zeros", 1))], 22)

# integer X: interpolated as floating point, then cast (truncated toward zero)
x = rng.integers(-50, 50, (1, 2, 5, 6)).astype(np.int32)
g = rng.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
save("gridsample20_int32_linear", [helper.make_node("GridSample", ["x", "g"], ["y"])],
     [("x", x), ("g", g)], [("y", np.trunc(torch.nn.functional.grid_sample(
         torch.from_numpy(x).double(), torch.from_numpy(g).double(), align_corners=False).numpy()).astype(np.int32))], 20)


def cubic_w(t, a=-0.75):
    """Keys cubic convolution weights of the taps at -1, 0, 1, 2 for a point t in [0, 1)."""
    def k(u):
        u = abs(u)
        if u <= 1:
            return (a + 2) * u ** 3 - (a + 3) * u ** 2 + 1
        if u < 2:
            return a * u ** 3 - 5 * a * u ** 2 + 8 * a * u - 4 * a
        return 0.0
    return [k(t + 1), k(t), k(1 - t), k(2 - t)]


def reflect(v, lo, hi):
    rng_ = hi - lo
    while v < lo or v > hi:
        v = 2 * lo - v if v < lo else 2 * hi - v
    return v


def gs1d_cubic_reflect(x, g):
    """1-D GridSample, cubic, reflection padding, align_corners=0 (bounds -0.5 .. W-0.5)."""
    N, C, W = x.shape
    y = np.zeros((N, C, g.shape[1]))
    for n in range(N):
        for o in range(g.shape[1]):
            p = ((g[n, o, 0] + 1) * W - 1) / 2
            p = reflect(p, -0.5, W - 0.5)
            f = int(np.floor(p))
            w = cubic_w(p - f)
            for t in range(4):
                i = int(reflect(f - 1 + t, -0.5, W - 0.5))
                i = min(max(i, 0), W - 1)
                y[n, :, o] += w[t] * x[n, :, i]
    return y.astype(np.float32)


x = rng.standard_normal((2, 3, 6)).astype(np.float32)
g = rng.uniform(-1.6, 1.6, (2, 9, 1)).astype(np.float32)
save("gridsample20_1d_cubic", [helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic",
                                                padding_mode="reflection")],
     [("x", x), ("g", g)], [("y", gs1d_cubic_reflect(x.astype(np.float64), g.astype(np.float64)))], 20)

# ---------------- Range-27 ----------------
start, limit, delta = np.float16(1000), np.float16(1010), np.float16(0.75)
vals = (np.float32(start) + np.arange(int(np.ceil((float(limit) - float(start)) / float(delta))),
                                      dtype=np.float32) * np.float32(delta)).astype(np.float16)
save("range27_float16", [helper.make_node("Range", ["s", "l", "d"], ["y"])],
     [("s", np.array(start)), ("l", np.array(limit)), ("d", np.array(delta))], [("y", vals)], 27)

# ---------------- ReduceMax / ReduceMin on bool ----------------
b = rng.integers(0, 2, (3, 4, 2)).astype(bool)
b[1] = False
b[2] = True
axes = np.array([1], np.int64)
save("reduce20_bool", [helper.make_node("ReduceMax", ["b", "axes"], ["mx"], keepdims=0),
                       helper.make_node("ReduceMin", ["b", "axes"], ["mn"])],
     [("b", b), ("axes", axes)], [("mx", b.any(axis=1)), ("mn", b.all(axis=1, keepdims=True))], 20)

# ---------------- GroupNormalization-21 ----------------
x = rng.standard_normal((2, 6, 3, 2)).astype(np.float32)
scale = rng.standard_normal(6).astype(np.float32)
bias = rng.standard_normal(6).astype(np.float32)
xg = x.astype(np.float64).reshape(2, 3, -1)
norm = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-4)).reshape(x.shape)
save("groupnorm21_channel_scale", [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3,
                                                    epsilon=1e-4)],
     [("x", x), ("s", scale), ("b", bias)],
     [("y", (norm * scale[None, :, None, None] + bias[None, :, None, None]).astype(np.float32))], 21)

# ---------------- Pad wrap ----------------
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
pads = np.array([2, 1, 3, 5], np.int64)      # axes [2, 0]: begin 2, 1; end 3, 5
save("pad25_wrap", [helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="wrap")],
     [("x", x), ("p", pads), ("a", np.array([2, 0], np.int64))],
     [("y", x[(np.arange(8) - 1) % 2][:, :, (np.arange(9) - 2) % 4])], 25)
# (the torus of the spec: output index o reads input (o - pad_begin) mod size; numpy 1.24's
# np.pad(mode="wrap") is not periodic when both pads exceed the size)

# ---------------- data movement at opset 25 ----------------
x = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
nodes = [
    helper.make_node("Shape", ["x"], ["sh"], start=2),                       # [3, 4]
    helper.make_node("Constant", [], ["minus1"], value=numpy_helper.from_array(np.array([-1], np.int64))),
    helper.make_node("Concat", ["minus1", "sh"], ["newshape"], axis=0),      # [-1, 3, 4]
    helper.make_node("Reshape", ["x", "newshape"], ["r"]),                   # [2, 3, 4]
    helper.make_node("Transpose", ["r"], ["t"], perm=[2, 0, 1]),             # [4, 2, 3]
    helper.make_node("Unsqueeze", ["t", "ax"], ["u"]),                       # [4, 1, 2, 3]
    helper.make_node("Squeeze", ["u", "ax"], ["s"]),                         # [4, 2, 3]
    helper.make_node("Flatten", ["s"], ["f"], axis=2),                       # [8, 3]
    helper.make_node("Identity", ["f"], ["y"]),
    helper.make_node("Size", ["x"], ["n"]),
]
t = np.transpose(x.reshape(2, 3, 4), (2, 0, 1))
save("shape_ops25", nodes, [("x", x)], [("y", t.reshape(8, 3)), ("n", np.array(x.size, np.int64))], 25,
     inits=[("ax", np.array([1], np.int64))])
print("wrote", len(os.listdir(root)), "models into", root)
