"""Dynamic quantization: int8 weights, activations quantized at run time by DynamicQuantizeLinear.

MatMul (and Gemm) with a constant 2-D weight becomes
    DynamicQuantizeLinear(A) -> MatMulInteger(A_q, B_q, A_zp, B_zp) -> Cast(float) -> Mul(A_scale * B_scale)
and Conv becomes the same around ConvInteger, the graph ONNX Runtime's quantize_dynamic writes.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper

from . import graph as g
from .quant_utils import QuantType, quantize_weight

DEFAULT_DYNAMIC_OPS = ("MatMul", "Gemm", "Conv")


class _DynamicQuantizer:
    def __init__(self, model, per_channel, reduce_range, weight_type, op_types, nodes_to_quantize,
                 nodes_to_exclude, extra_options):
        self.model = model
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.weight_type = weight_type
        self.op_types = set(op_types)
        self.nodes_to_quantize = set(nodes_to_quantize or ())
        self.nodes_to_exclude = set(nodes_to_exclude or ())
        opts = dict(extra_options or {})
        self.weight_symmetric = opts.get("WeightSymmetric", weight_type is QuantType.QInt8)
        self.const_b_only = opts.get("MatMulConstBOnly", True)
        self.inits = g.Initializers(model)
        self.dql = {}       # activation name -> (q, scale, zp) outputs of its DynamicQuantizeLinear
        self.weights = {}   # (name, axis, transpose, alpha) -> (q, scale, zp) initializer names
        self.new_nodes = []
        self.quantized = 0

    def name(self, base):
        return self.inits.unique(base)

    def dynamic_quantize(self, tensor):
        if tensor not in self.dql:
            outs = [self.name(tensor + "_quantized"), self.name(tensor + "_scale"),
                    self.name(tensor + "_zero_point")]
            self.new_nodes.append(helper.make_node("DynamicQuantizeLinear", [tensor], outs,
                                                   self.name(tensor + "_DynamicQuantizeLinear")))
            self.dql[tensor] = tuple(outs)
        return self.dql[tensor]

    def quantize_constant(self, tensor, axis, transpose=False, alpha=1.0):
        key = (tensor, axis, transpose, alpha)
        if key not in self.weights:
            w = self.inits.array(tensor).astype(np.float32)
            if transpose:
                w = w.T
            if alpha != 1.0:
                w = w * np.float32(alpha)
            q, scale, zp = quantize_weight(w, self.weight_type, self.weight_symmetric, self.reduce_range,
                                           axis=axis)
            stem = tensor + ("_T" if transpose else "")
            self.weights[key] = (self.inits.add(self.name(stem + "_quantized"), q),
                                 self.inits.add(self.name(stem + "_scale"), np.asarray(scale, np.float32)),
                                 self.inits.add(self.name(stem + "_zero_point"), np.asarray(zp)))
        return self.weights[key]

    def rescale(self, node, int_out, a_scale, b_scale, output):
        """Cast(int32 -> float) * (a_scale * b_scale) into `output`."""
        cast_out = self.name(int_out + "_cast_output")
        scales = self.name((node.name or output) + "_scales_mul")
        self.new_nodes += [
            helper.make_node("Cast", [int_out], [cast_out], self.name(int_out + "_cast"), to=TensorProto.FLOAT),
            helper.make_node("Mul", [a_scale, b_scale], [scales], self.name(scales + "_node")),
            helper.make_node("Mul", [cast_out, scales], [output], self.name((node.name or output) + "_output_scale_mul")),
        ]

    def matmul(self, node, a, b, output, transpose_b=False, alpha=1.0):
        if not self.inits.has(b):
            if self.const_b_only:
                return False
            bq, bs, bz = self.dynamic_quantize(b)
        else:
            if self.inits.array(b).ndim != 2:
                return False
            axis = 1 if self.per_channel else None
            bq, bs, bz = self.quantize_constant(b, axis, transpose_b, alpha)
        aq, as_, az = self.dynamic_quantize(a)
        int_out = self.name(output + "_output_quantized")
        self.new_nodes.append(helper.make_node("MatMulInteger", [aq, bq, az, bz], [int_out],
                                               self.name((node.name or output) + "_quant")))
        self.rescale(node, int_out, as_, bs, output)
        return True

    def quantize_matmul(self, node):
        return self.matmul(node, node.input[0], node.input[1], node.output[0])

    def quantize_gemm(self, node):
        if g.attr(node, "transA", 0) or not self.inits.has(node.input[1]):
            return False
        if self.inits.array(node.input[1]).ndim != 2:
            return False
        alpha = float(g.attr(node, "alpha", 1.0))
        beta = float(g.attr(node, "beta", 1.0))
        has_c = len(node.input) > 2 and node.input[2] != ""
        y = self.name(node.output[0] + "_matmul") if has_c else node.output[0]
        if not self.matmul(node, node.input[0], node.input[1], y, bool(g.attr(node, "transB", 0)), alpha):
            return False
        if has_c:
            c = node.input[2]
            if beta != 1.0:
                if self.inits.has(c):
                    c = self.inits.add(self.name(c + "_beta"), (self.inits.array(c) * np.float32(beta)).astype(np.float32))
                else:
                    beta_name = self.inits.add(self.name(c + "_beta_value"), np.asarray(beta, np.float32))
                    scaled = self.name(c + "_beta")
                    self.new_nodes.append(helper.make_node("Mul", [c, beta_name], [scaled], self.name(scaled + "_mul")))
                    c = scaled
            self.new_nodes.append(helper.make_node("Add", [y, c], [node.output[0]],
                                                   self.name((node.name or node.output[0]) + "_bias_add")))
        return True

    def quantize_conv(self, node):
        if not self.inits.has(node.input[1]):
            return False
        # Per-tensor weights, as ONNX Runtime does for ConvInteger.
        wq, ws, wz = self.quantize_constant(node.input[1], None)
        xq, xs, xz = self.dynamic_quantize(node.input[0])
        has_b = len(node.input) > 2 and node.input[2] != ""
        out = node.output[0]
        y = self.name(out + "_without_bias") if has_b else out
        int_out = self.name(out + "_output_quantized")
        conv = helper.make_node("ConvInteger", [xq, wq, xz, wz], [int_out], self.name((node.name or out) + "_quant"))
        conv.attribute.extend(node.attribute)
        self.new_nodes.append(conv)
        self.rescale(node, int_out, xs, ws, y)
        if has_b:
            rank = self.inits.array(node.input[1]).ndim
            if self.inits.has(node.input[2]):
                b = self.inits.array(node.input[2]).astype(np.float32)
                bias = self.inits.add(self.name(node.input[2] + "_reshaped"), b.reshape([1, -1] + [1] * (rank - 2)))
            else:
                shape = self.inits.add(self.name(node.input[2] + "_shape"),
                                       np.asarray([1, -1] + [1] * (rank - 2), np.int64))
                bias = self.name(node.input[2] + "_reshaped")
                self.new_nodes.append(helper.make_node("Reshape", [node.input[2], shape], [bias], self.name(bias + "_node")))
            self.new_nodes.append(helper.make_node("Add", [y, bias], [out], self.name((node.name or out) + "_bias_add")))
        return True

    def run(self):
        handlers = {"MatMul": self.quantize_matmul, "Gemm": self.quantize_gemm, "Conv": self.quantize_conv}
        for node in list(self.model.graph.node):
            handler = handlers.get(node.op_type)
            done = False
            if handler and g.should_quantize(node, self.op_types, self.nodes_to_quantize, self.nodes_to_exclude):
                mark = len(self.new_nodes)
                done = handler(node)
                if not done:
                    del self.new_nodes[mark:]
            if done:
                self.quantized += 1
            else:
                self.new_nodes.append(node)
        del self.model.graph.node[:]
        self.model.graph.node.extend(self.new_nodes)
        self.inits.drop_unused()
        return self.model


def quantize_dynamic(model_input, model_output, op_types_to_quantize=None, per_channel=False, reduce_range=False,
                     weight_type=QuantType.QInt8, nodes_to_quantize=None, nodes_to_exclude=None,
                     use_external_data_format=False, extra_options=None):
    """Quantizes the weights of MatMul, Gemm and Conv to int8 (or uint8); activations are quantized at
    run time. Writes the model to model_output and returns it (an onnx.ModelProto).

    per_channel: one scale per output column (MatMul, Gemm) instead of one per tensor.
    reduce_range: 7-bit weights. extra_options: WeightSymmetric (default: True for int8 weights),
    MatMulConstBOnly (default True: MatMuls whose B is not a constant stay float)."""
    if isinstance(weight_type, str):
        weight_type = QuantType.from_string(weight_type)
    model = g.load(model_input)
    if g.default_opset(model) < 11:
        raise ValueError("dynamic quantization needs opset >= 11 (DynamicQuantizeLinear); the model has %d"
                         % g.default_opset(model))
    op_types = op_types_to_quantize or DEFAULT_DYNAMIC_OPS
    q = _DynamicQuantizer(model, per_channel, reduce_range, weight_type, op_types, nodes_to_quantize,
                          nodes_to_exclude, extra_options)
    model = q.run()
    model.producer_name = "cort.quantization"
    if model_output is not None:
        if use_external_data_format:
            onnx.save_model(model, str(model_output), save_as_external_data=True, all_tensors_to_one_file=True)
        else:
            g.save(model, model_output)
    return model
