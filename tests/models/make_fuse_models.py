#!/usr/bin/python3
"""Builds the small models tests/test_fuse.c runs at optimization levels 0 and 2 (checked in; rerun
to regenerate). Each exercises one level-2 pattern of src/graph/passes/, or a near miss that must
not be fused. Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy)."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
S, D, H = 8, 16, 2          # sequence, hidden, heads
HD = D // H


class B:
    """Tiny graph builder: unique names, constants as initializers."""
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return "%s_%d" % (p, self.n)

    def const(self, arr, p="c"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, t, ins, **attrs):
        out = self.name(t.lower())
        self.nodes.append(helper.make_node(t, ins, [out], name=out, **attrs))
        return out

    def linear(self, x, i, o, bias=True):
        w = self.const((rng.standard_normal((i, o)) * 0.3).astype(np.float32), "w")
        y = self.op("MatMul", [x, w])
        if bias:
            y = self.op("Add", [self.const((rng.standard_normal(o) * 0.1).astype(np.float32), "b"), y])
        return y

    def layernorm(self, x, eps=1e-5, affine=True, opset18=False, pow_exp=2.0, out_extra=None):
        if opset18:
            ax = self.const(np.array([-1], np.int64), "axes")
            mu = self.op("ReduceMean", [x, ax])
        else:
            mu = self.op("ReduceMean", [x], axes=[-1])
        d = self.op("Sub", [x, mu])
        if out_extra is not None:
            out_extra.append(d)
        p = self.op("Pow", [d, self.const(np.float32(pow_exp), "two")])
        v = self.op("ReduceMean", [p, ax] if opset18 else [p], **({} if opset18 else {"axes": [-1]}))
        s = self.op("Sqrt", [self.op("Add", [v, self.const(np.float32(eps), "eps")])])
        y = self.op("Div", [d, s])
        if affine:
            y = self.op("Mul", [y, self.const((1 + rng.standard_normal(D) * 0.1).astype(np.float32), "gamma")])
            y = self.op("Add", [y, self.const((rng.standard_normal(D) * 0.1).astype(np.float32), "beta")])
        return y

    def gelu(self, h, variant="a", half=0.5):
        if variant == "a":    # (h * 0.5) * (1 + erf(h / sqrt2)), torch's export
            m = self.op("Mul", [h, self.const(np.float32(half), "half")])
            e = self.op("Erf", [self.op("Div", [h, self.const(np.float32(1.4142135381698608), "sqrt2")])])
            return self.op("Mul", [m, self.op("Add", [e, self.const(np.float32(1.0), "one")])])
        # (h * (1 + erf(h * 1/sqrt2))) * 0.5
        e = self.op("Erf", [self.op("Mul", [self.const(np.float32(0.7071067690849304), "isq"), h])])
        a = self.op("Add", [self.const(np.float32(1.0), "one"), e])
        return self.op("Mul", [self.op("Mul", [h, a]), self.const(np.float32(half), "half")])

    def save(self, fname, outputs, opset=14, in_shape=(1, S, D), check=True, out_shapes=None):
        out_shapes = out_shapes or [list(in_shape)] * len(outputs)
        g = helper.make_graph(self.nodes, fname.replace(".onnx", ""),
                              [helper.make_tensor_value_info("x", T.FLOAT, list(in_shape))],
                              [helper.make_tensor_value_info(o, T.FLOAT, sh) for o, sh in zip(outputs, out_shapes)],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="cort-tests")
        m.ir_version = 8
        if check:   # onnx 1.12's checker predates opset 18's ReduceMean(data, axes)
            onnx.checker.check_model(m)
        onnx.save(m, os.path.join(here, fname))


def attention(b, x):
    def heads(t, perm):
        r = b.op("Reshape", [t, b.const(np.array([1, S, H, HD], np.int64), "shape")])
        return b.op("Transpose", [r], perm=perm)
    q = heads(b.linear(x, D, D), [0, 2, 1, 3])
    k = heads(b.linear(x, D, D), [0, 2, 3, 1])
    v = heads(b.linear(x, D, D), [0, 2, 1, 3])
    sc = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.float32(np.sqrt(HD)), "scale")])
    p = b.op("Softmax", [sc], axis=-1)
    o = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.const(np.array([1, S, D], np.int64), "shape")])
    return b.linear(o, D, D)


# a BERT-like encoder layer: every pattern fires
b = B()
h = b.layernorm(b.op("Add", ["x", attention(b, "x")]))
f = b.linear(b.gelu(b.linear(h, D, 4 * D), "a"), 4 * D, D)
y = b.layernorm(b.op("Add", [h, f]))
b.save("fuse_encoder.onnx", [y])

# the other GELU form, LayerNorm without affine and with opset-18 ReduceMean (axes as input)
b = B()
y = b.layernorm(b.linear(b.gelu(b.linear("x", D, D), "b"), D, D, bias=False), affine=False, opset18=True)
b.save("fuse_variants.onnx", [y], opset=18, check=False)

# near misses: intermediates that are graph outputs or read elsewhere, wrong constants
b = B()
extra = []
mm = b.linear("x", D, D, bias=False)                 # MatMul output is a graph output: no bias fusion
y1 = b.op("Add", [mm, b.const(np.zeros(D, np.float32) + 0.5, "b")])
y2 = b.layernorm(y1, out_extra=extra)                # Sub output is a graph output: no LayerNorm
y3 = b.layernorm(y2, pow_exp=4.0)                    # Pow exponent 4: not a variance
y4 = b.gelu(y3, "a", half=0.25)                      # 0.25 instead of 0.5: not GELU
b.save("fuse_blocked.onnx", [mm, extra[0], y4])

# MatMuls whose B is computed at run time become cort.FusedMatMul with bias, GELU and residual
b = B()
bd = b.op("Reshape", ["x", b.const(np.array([1, D, S], np.int64), "shape")])
g1 = b.gelu(b.op("Add", [b.op("MatMul", ["x", bd]), b.const((rng.standard_normal(S) * 0.1).astype(np.float32), "b")]))
b2 = b.op("Reshape", ["x", b.const(np.array([1, S, D], np.int64), "shape")])
m2 = b.op("Add", [b.const((rng.standard_normal(D) * 0.1).astype(np.float32), "b"), b.op("MatMul", [g1, b2])])
y = b.layernorm(b.op("Add", [m2, "x"]))
b.save("fuse_dynamic.onnx", [y])

# the internal ops used directly with bad inputs: must fail cleanly with a message
def bad(fname, node, inits):
    g = helper.make_graph([node], fname.replace(".onnx", ""),
                          [helper.make_tensor_value_info("x", T.FLOAT, [1, S, D])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("cort", 1)],
                          producer_name="cort-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, fname))


bad("fuse_bad_ln.onnx", helper.make_node("LayerNorm", ["x", "g"], ["y"], name="bad_ln", domain="cort"),
    [numpy_helper.from_array(np.ones(5, np.float32), "g")])
bad("fuse_bad_gelu.onnx", helper.make_node("Gelu", ["x", "b"], ["y"], name="bad_gelu", domain="cort"),
    [numpy_helper.from_array(np.ones(3, np.float32), "b")])
bad("fuse_bad_mm.onnx", helper.make_node("FusedMatMul", ["x", "w", "b", "x"], ["y"], name="bad_mm", domain="cort"),
    [numpy_helper.from_array(np.ones((D, 4), np.float32), "w"), numpy_helper.from_array(np.ones(4, np.float32), "b")])

# x * HardSigmoid(x) with torch's hardswish constants fuses; with the default alpha it does not
b = B()
h1 = b.op("Mul", ["x", b.op("HardSigmoid", ["x"], alpha=1.0 / 6.0)])
h2 = b.op("Mul", [b.op("HardSigmoid", [h1]), h1])
b.save("fuse_hardswish.onnx", [h2], opset=11)

# Conv epilogue fusions (src/graph/compile.c): residual Add (+ Relu), HardSwish, and near misses
b = B()
def conv(b, x, cin, cout, k, group=1, bias=True):
    w = b.const((rng.standard_normal((cout, cin // group, k, k)) * 0.3).astype(np.float32), "w")
    ins = [x, w] + ([b.const((rng.standard_normal(cout) * 0.1).astype(np.float32), "b")] if bias else [])
    return b.op("Conv", ins, kernel_shape=[k, k], pads=[k // 2] * 4, group=group)
r1 = b.op("Relu", [b.op("Add", [conv(b, "x", 8, 8, 3), "x"])])          # fused: Conv + Add + Relu
c2 = conv(b, r1, 8, 8, 1)
c3 = conv(b, r1, 8, 8, 3, bias=False)
a2 = b.op("Add", [c2, c3])                                             # fused into c3 (c2 exists first; no B)
hs = b.op("HardSwish", [conv(b, a2, 8, 8, 3)])                         # fused activation
dw = b.op("HardSwish", [conv(b, hs, 8, 8, 3, group=8)])                # fused into a depthwise conv
bc = b.op("Add", [conv(b, dw, 8, 8, 1), b.const(np.ones((1, 8, 1, 1), np.float32), "bc")])   # broadcast: kept
c5 = conv(b, bc, 8, 8, 1)
self_add = b.op("Add", [c5, c5])                                       # addend is the conv itself: kept
c6 = conv(b, self_add, 8, 8, 3)
y = b.op("Add", [c6, self_add])                                        # c6 is also a graph output: kept
b.save("fuse_conv_epilogue.onnx", [y, c6], in_shape=(1, 8, 5, 5))

# In-place Concat (src/graph/compile.c): fire-module branches written straight into the concat
# output, plus near misses that must copy (an input also used elsewhere, the graph input itself,
# a concat along an axis with a non-1 dimension before it)
b = B()
sq = b.op("Relu", [conv(b, "x", 8, 4, 1)])
e1 = b.op("Relu", [conv(b, sq, 4, 6, 1)])
e3 = b.op("Relu", [conv(b, sq, 4, 6, 3)])
cat = b.op("Concat", [e1, e3], axis=1)                                  # planned in place
c2 = conv(b, cat, 12, 8, 1)
reused = conv(b, cat, 12, 8, 3)
cat2 = b.op("Concat", [c2, reused, "x"], axis=-3)                       # "x" is a graph input: copies
side = b.op("Mul", [reused, reused])                                   # reused has 2 consumers
cat3 = b.op("Concat", [conv(b, cat2, 24, 8, 1), conv(b, cat2, 24, 8, 1)], axis=2)   # axis 2: copies
y = b.op("Add", [b.op("ReduceMean", [cat3], axes=[2], keepdims=1), b.op("ReduceMean", [side], axes=[2], keepdims=1)])
b.save("fuse_concat.onnx", [y, cat], in_shape=(1, 8, 5, 5), out_shapes=[[1, 8, 1, 5], [1, 12, 5, 5]])

# Residual Add whose other operand is produced after the conv (an FPN's upsampled branch): the conv
# is moved right before the Add and fused
b = B()
c1 = conv(b, "x", 8, 8, 3)
up = b.op("Relu", [b.op("Mul", ["x", b.const(np.float32(0.5), "h")])])   # produced after c1
y = b.op("Add", [c1, up])
y2 = b.op("Add", [conv(b, y, 8, 8, 1), b.op("Sigmoid", [y])])
b.save("fuse_conv_later.onnx", [y2], in_shape=(1, 8, 5, 5))

# BatchNormalization folded into the Conv / ConvTranspose before it (src/graph/passes/fold_bn.c), the Relu
# after it then fused too; kept when the conv output has another reader or a parameter is computed
b = B()
def bn(b, x, c, mean=None):
    ps = [(rng.standard_normal(c) * 0.5 + 1).astype(np.float32), (rng.standard_normal(c) * 0.2).astype(np.float32),
          (rng.standard_normal(c) * 0.3).astype(np.float32), (rng.random(c) + 0.5).astype(np.float32)]
    ins = [b.const(p, "bn") for p in ps]
    if mean is not None:
        ins[2] = mean
    return b.op("BatchNormalization", [x] + ins, epsilon=1e-3)
r1 = b.op("Relu", [bn(b, conv(b, "x", 8, 8, 3), 8)])                   # folded, Relu fused
wt = b.const((rng.standard_normal((8, 2, 2, 2)) * 0.3).astype(np.float32), "wt")
t2 = bn(b, b.op("ConvTranspose", [r1, wt, b.const((rng.standard_normal(4) * 0.1).astype(np.float32), "bt")],
                strides=[2, 2], group=2), 4)                           # folded (groups of the transpose)
c3 = bn(b, conv(b, t2, 4, 4, 1, bias=False), 4)                       # folded, bias created
c4 = conv(b, c3, 4, 4, 3)
k4 = b.op("Add", [bn(b, c4, 4), c4])                                   # conv output read twice: kept
mc = b.op("Relu", [b.const((rng.standard_normal(4) * 0.3).astype(np.float32), "m")])
y = bn(b, conv(b, k4, 4, 4, 1), 4, mean=mc)                            # computed mean: kept
b.save("fuse_conv_bn.onnx", [y], in_shape=(1, 8, 5, 5), out_shapes=[[1, 4, 10, 10]])

# Convs whose fused residual is written over (src/providers/cpu/ops/nn/conv.c): the gemm path at
# 14x14, the transposed small-plane path at 7x7 (1x1 and 3x3); never when the residual is the conv's
# own input, or read later
b = B()
a = b.op("Relu", ["x"])
r1 = b.op("Add", [conv(b, a, 32, 32, 1), a])              # residual = the conv's input: not over it
bb = b.op("Relu", [r1])
r2 = b.op("Add", [conv(b, bb, 32, 32, 1), r1])            # r1 dead after: in place (gemm)
r3 = b.op("Add", [conv(b, r2, 32, 32, 3), bb])            # bb dead after: 3x3 (indirect path: copies)
d = b.op("Conv", [r3, b.const((rng.standard_normal((32, 32, 3, 3)) * 0.2).astype(np.float32), "wd")],
         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
e = b.op("Relu", [d])
r4 = b.op("Add", [conv(b, e, 32, 32, 1), d])              # d dead after: in place (small plane, 1x1)
r5 = b.op("Add", [conv(b, r4, 32, 32, 3), e])             # e dead after: in place (small plane, 3x3)
r6 = b.op("Add", [conv(b, r5, 32, 32, 1), r4])            # r4 also a graph output: not over it
b.save("fuse_conv_inplace.onnx", [r6, r4], in_shape=(1, 32, 14, 14), out_shapes=[[1, 32, 7, 7]] * 2)

# In-place elementwise (src/graph/exec.c cort_kernel_reusable_input): a binary op writes over a dead
# input of the output's shape; never over the graph inputs, a graph output, or an input read again
# later. s (a second graph input) broadcasts per channel like a squeeze-excitation scale.
b = B()
m = b.op("Mul", [b.op("Relu", ["x"]), "s"])            # dead input 0: in place
n = b.op("Mul", ["s", b.op("Sigmoid", ["x"])])         # dead input 1 (input 0 broadcast): in place
r = b.op("Relu", ["x"])
sq = b.op("Add", [r, r])                               # the same value as both inputs
d = b.op("Neg", ["x"])
e = b.op("Mul", [d, "s"])                              # d is also a graph output: kept
t = b.op("Tanh", ["x"])
u = b.op("Sub", [t, "s"])                              # t is read again below: kept
v = b.op("Add", [u, t])
r2 = b.op("Relu", ["x"])
rs = b.op("Reshape", [r2, b.const(np.array([1, 4, 30], np.int64), "shape")])
w = b.op("Mul", [rs, b.const(np.full((1, 4, 1), 2.0, np.float32), "two")])   # a view of r2, read below
w = b.op("Add", [b.op("Reshape", [w, b.const(np.array([1, 4, 6, 5], np.int64), "shape")]), r2])
g1 = b.op("Sigmoid", [b.op("Neg", ["x"])])             # unary over a dead input: in place
g2 = b.op("Clip", [g1, b.const(np.float32(0.2), "lo"), b.const(np.float32(0.6), "hi")])
g3 = b.op("Exp", [d])                                  # d is a graph output: kept
f = b.op("Mul", ["x", "s"])                            # the graph input, read last here: kept
outs = [m, n, sq, d, e, f, v, w, g2, g3]
g = helper.make_graph(b.nodes, "inplace_ew", [helper.make_tensor_value_info("x", T.FLOAT, [1, 4, 6, 5]),
                                              helper.make_tensor_value_info("s", T.FLOAT, [1, 4, 1, 1])],
                      [helper.make_tensor_value_info(o, T.FLOAT, [1, 4, 6, 5]) for o in outs], b.inits)
mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="cort-tests")
mdl.ir_version = 8
onnx.checker.check_model(mdl)
onnx.save(mdl, os.path.join(here, "inplace_ew.onnx"))

# A 1 MB feature map negated, rectified and scaled per channel: Relu and Mul computed in place, the
# run holds one such block, not two
b = B()
s = b.const((rng.standard_normal((1, 16, 1, 1)) + 1.5).astype(np.float32), "s")
b.save("inplace_mem.onnx", [b.op("Mul", [b.op("Relu", [b.op("Neg", ["x"])]), s])], opset=14,
       in_shape=(1, 16, 128, 128))

# Expand (1x1) + depthwise conv pairs with an intermediate of 6 MB or more -> cort.PwDwConv
# (src/graph/passes/fuse_pw_dw.c, src/providers/cpu/ops/fused/pwdw_conv.c): odd sizes, stride 1 and 2, asymmetric pads, with
# and without biases and activations; near misses keep both convs (a 5x5 depthwise, a HardSwish on
# the depthwise, an expanded tensor read twice, a small one)
def pw(b, x, cin, cout, bias=True):
    w = b.const((rng.standard_normal((cout, cin, 1, 1)) * 0.3).astype(np.float32), "wp")
    ins = [x, w] + ([b.const((rng.standard_normal(cout) * 0.1).astype(np.float32), "bp")] if bias else [])
    return b.op("Conv", ins, kernel_shape=[1, 1])
def dwc(b, x, c, k, stride, pads, bias=True):
    w = b.const((rng.standard_normal((c, 1, k, k)) * 0.3).astype(np.float32), "wd")
    ins = [x, w] + ([b.const((rng.standard_normal(c) * 0.1).astype(np.float32), "bd")] if bias else [])
    return b.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=pads, group=c)
b = B()
zero, six = b.const(np.float32(0.0), "lo"), b.const(np.float32(6.0), "hi")
a1 = b.op("LeakyRelu", [dwc(b, b.op("Relu", [pw(b, "x", 4, 100, bias=False)]), 100, 3, 1, [1, 1, 1, 1])], alpha=0.1)
p1 = pw(b, a1, 100, 6)                                                    # fused above: 100 x 70 x 230
a2 = dwc(b, b.op("Clip", [pw(b, p1, 6, 100), zero, six]), 100, 3, 2, [0, 1, 1, 0], bias=False)   # fused, stride 2
n1 = dwc(b, b.op("Relu", [pw(b, p1, 6, 96)]), 96, 5, 2, [2, 2, 2, 2])    # 5x5: kept
e2 = pw(b, p1, 6, 96)
n2 = b.op("HardSwish", [dwc(b, e2, 96, 3, 2, [1, 1, 1, 1])])             # HardSwish on the depthwise: kept
n3 = dwc(b, pw(b, p1, 6, 60), 60, 3, 2, [1, 1, 1, 1])                    # 60 x 70 x 230 (3.9 MB): kept
t4 = pw(b, p1, 6, 96)
n4 = b.op("Add", [dwc(b, t4, 96, 3, 2, [0, 1, 1, 0]), dwc(b, t4, 96, 3, 2, [0, 1, 1, 0])])   # read twice: kept
y = b.op("Concat", [a2, n1, n2, n4], axis=1)
b.save("fuse_pwdw.onnx", [y, n3], opset=14, in_shape=(1, 4, 70, 230), out_shapes=[[1, 388, 35, 115], [1, 60, 35, 115]])

# a batch of 2, stride 2, band boundaries inside the image (120 output rows)
b = B()
six = b.const(np.float32(6.0), "hi")
y = dwc(b, b.op("Clip", [pw(b, "x", 3, 32), b.const(np.float32(-1.0), "lo"), six]), 32, 3, 2, [1, 1, 1, 1])
b.save("fuse_pwdw_batch.onnx", [b.op("Relu", [y])], opset=14, in_shape=(2, 3, 240, 130), out_shapes=[[2, 32, 120, 65]])

bad("fuse_bad_pwdw.onnx", helper.make_node("PwDwConv", ["x", "wp", "", "wd"], ["y"], name="bad_pwdw", domain="cort",
                                           kernel_shape=[3, 3], group=4),
    [numpy_helper.from_array(np.ones((4, 8, 1, 1), np.float32), "wp"),
     numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "wd")])

# activations into the conv before them (src/graph/passes/fuse_activation.c): SiLU (Sigmoid + Mul),
# LeakyRelu, HardSigmoid, Clip; a Sigmoid read twice keeps its Sigmoid and Mul
b = B()
c1 = conv(b, "x", 8, 8, 3)
s1 = b.op("Mul", [c1, b.op("Sigmoid", [c1])])                          # fused: SiLU
l2 = b.op("LeakyRelu", [conv(b, s1, 8, 8, 3)], alpha=0.1)              # fused
h3 = b.op("HardSigmoid", [conv(b, l2, 8, 8, 1)], alpha=0.3, beta=0.4)  # fused
c4 = b.op("Clip", [conv(b, h3, 8, 8, 3), b.const(np.float32(0.1), "lo"), b.const(np.float32(0.7), "hi")])   # fused
c5 = conv(b, c4, 8, 8, 3)
sg = b.op("Sigmoid", [c5])
y = b.op("Add", [b.op("Mul", [c5, sg]), sg])                           # sigmoid read twice: kept
b.save("fuse_conv_act.onnx", [y], in_shape=(1, 8, 5, 5))

# GELU without a MatMul before it (src/graph/passes/fuse_gelu.c): Add(x, bias) + GELU becomes
# cort.Gelu(x, bias); the other GELU form after a Relu becomes cort.Gelu(h)
b = B()
y1 = b.gelu(b.op("Add", ["x", b.const((rng.standard_normal(D) * 0.1).astype(np.float32), "b")]), "a")
y2 = b.gelu(b.op("Relu", ["x"]), "b")
b.save("fuse_gelu_bias.onnx", [y1, y2])

# The dynamic quantizer's MatMulInteger -> Cast -> Mul(Mul(a_scale, b_scale)) tail
# (src/graph/passes/fuse_int_matmul.c): uint8 weights with a scalar scale, int8 weights with scales
# and zero points per column (factors swapped), and a near miss whose Cast is also a graph output
b = B()
xq, xs, xz = "xq", "xs", "xz"
b.nodes.append(helper.make_node("DynamicQuantizeLinear", ["x"], [xq, xs, xz], name="dql"))
N2 = 24


def int_mm(b, w, wz, ws, swap=False, keep_cast=None):
    mm = b.op("MatMulInteger", [xq, b.const(w, "w"), xz, b.const(wz, "wz")])
    c = b.op("Cast", [mm], to=T.FLOAT)
    if keep_cast is not None:
        keep_cast.append(c)
    wsn = b.const(ws, "ws")
    s = b.op("Mul", [wsn, xs] if swap else [xs, wsn])
    return b.op("Mul", [s, c] if swap else [c, s])


y1 = int_mm(b, rng.integers(0, 256, (D, N2)).astype(np.uint8), np.uint8(131), np.float32(0.0123))
y2 = int_mm(b, rng.integers(-128, 128, (D, N2)).astype(np.int8), rng.integers(-3, 4, N2).astype(np.int8),
            (rng.random(N2) * 0.02 + 0.001).astype(np.float32), swap=True)
kept = []
y3 = int_mm(b, rng.integers(0, 256, (D, N2)).astype(np.uint8), np.uint8(7), np.float32(0.031), keep_cast=kept)
b.save("fuse_int_matmul.onnx", [y1, y2, y3, kept[0]], opset=14, out_shapes=[[1, S, N2]] * 4)

# GELU (with its bias) into MatMulIntegerToFloat's tile epilogue (src/graph/passes/fuse_int_matmul.c):
# N = 48 (a multiple of 16: fused; a full 32-column tile and a 16-column edge), and a near miss with
# N = 24 (not a multiple of 16: cort.Gelu stays). The _ref model also outputs the products, so its
# GELUs cannot fuse: test_fuse compares the two bit for bit.
for ref in (False, True):
    rng = np.random.default_rng(29)
    b = B()
    b.nodes.append(helper.make_node("DynamicQuantizeLinear", ["x"], [xq, xs, xz], name="dql"))
    outs, shapes, prods = [], [], []
    for n in (48, 24):
        p = int_mm(b, rng.integers(-128, 128, (D, n)).astype(np.int8), np.int8(0),
                   (rng.random(n) * 0.02 + 0.001).astype(np.float32))
        prods.append(p)
        h = b.op("Add", [p, b.const((rng.standard_normal(n) * 0.5).astype(np.float32), "b")])
        outs.append(b.gelu(h, "a"))
        shapes.append([1, S, n])
    if ref:
        outs += prods
        shapes += shapes[:2]
    b.save("fuse_int_matmul_gelu_ref.onnx" if ref else "fuse_int_matmul_gelu.onnx", outs, opset=14, out_shapes=shapes)
