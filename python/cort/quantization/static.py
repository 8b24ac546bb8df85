"""Static quantization: activation ranges from calibration, written as QDQ pairs or as QLinear ops.

The plan (which tensors are quantized, with which scale and zero point) is the same for both formats;
only the way it is written differs:
  QDQ        every quantized activation T gets QuantizeLinear -> DequantizeLinear right after its
             producer; weights are int8 initializers read through DequantizeLinear, biases int32.
  QOperator  Conv/MatMul/Gemm/Add/Mul/Concat/GlobalAveragePool become QLinearConv, QLinearMatMul and
             the com.microsoft QGemm/QLinearAdd/QLinearMul/QLinearConcat/QLinearGlobalAveragePool;
             QuantizeLinear/DequantizeLinear appear only where float and int8 parts of the graph meet.
Relu and Clip right after a quantized op are folded into that op's output range, and MaxPool, Reshape,
Flatten, Transpose, Squeeze and Unsqueeze pass quantized tensors through with the same scale.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper

from . import graph as g
from .calibrate import CalibrationMethod, collect_ranges, graph_inputs
from .quant_utils import QuantFormat, QuantType, quantize_array, quantize_bias, quantize_weight, qrange, scale_zero_point

WEIGHT_OPS = ("Conv", "MatMul", "Gemm")
GENERIC_OPS = ("Add", "Mul", "Concat", "GlobalAveragePool", "AveragePool")
PASS_OPS = ("MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze")
FOLD_OPS = ("Relu", "Clip")
DEFAULT_STATIC_OPS = WEIGHT_OPS + GENERIC_OPS + PASS_OPS + FOLD_OPS
# QOperator forms of GENERIC_OPS (com.microsoft domain, as ONNX Runtime writes them)
QOP_GENERIC = {"Add": "QLinearAdd", "Mul": "QLinearMul", "Concat": "QLinearConcat",
               "GlobalAveragePool": "QLinearGlobalAveragePool", "AveragePool": "QLinearAveragePool"}


def _float_tensors(model):
    """Names of the float32 tensors of the main graph (after shape inference)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a model shape inference cannot handle still quantizes what it can
        inferred = model
    types = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in inferred.graph.initializer:
        types[init.name] = init.data_type
    return {n for n, t in types.items() if t == TensorProto.FLOAT}


class _Plan:
    def __init__(self, model, args):
        self.model = model
        self.a = args
        self.inits = g.Initializers(model)
        self.params = {}       # activation tensor -> (scale float32, zero point)
        self.kind = {}         # id(node) -> "weight" | "generic" | "pass"
        self.alias = {}        # pass-through output -> the tensor whose parameters it shares
        self.consumers = {}
        self.producer = {}
        self.reindex()

    def reindex(self):
        self.consumers, self.producer = {}, {}
        for n in self.model.graph.node:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
            for o in n.output:
                self.producer[o] = n

    def selected(self, node):
        return g.should_quantize(node, self.a["op_types"], self.a["nodes_to_quantize"], self.a["nodes_to_exclude"])

    def activation_inputs(self, node):
        if node.op_type in ("Reshape", "Clip", "Squeeze", "Unsqueeze"):
            return [node.input[0]]
        if node.op_type in WEIGHT_OPS:
            ins = [node.input[0]]
            if node.op_type == "MatMul" and not self.inits.has(node.input[1]):
                ins.append(node.input[1])
            return ins
        return [i for i in node.input if i]

    def calibration_tensors(self, floats):
        names = []
        for n in self.model.graph.node:
            if not self.selected(n):
                continue
            for t in self.activation_inputs(n) + list(n.output[:1]):
                if t in floats and not self.inits.has(t):
                    names.append(t)
        return names

    def fold_activations(self, ranges):
        """Removes Relu/Clip after a quantized op: the op's output takes the activation's name and so
        its calibrated range, whose lower end (0) makes QuantizeLinear do the clamping."""
        outputs = {o.name for o in self.model.graph.output}
        removed = []
        for n in list(self.model.graph.node):
            if n.op_type not in FOLD_OPS or not self.selected(n) or self.a["activation_symmetric"]:
                continue
            x, y = n.input[0], n.output[0]
            p = self.producer.get(x)
            if p is None or p.op_type not in WEIGHT_OPS + GENERIC_OPS or not self.selected(p):
                continue
            if len(self.consumers.get(x, [])) != 1 or x in outputs or y not in ranges:
                continue
            if n.op_type == "Clip" and not self.clip_bounds_constant(n):
                continue
            p.output[list(p.output).index(x)] = y
            self.model.graph.node.remove(n)
            removed.append(n)
            self.reindex()
        if removed:
            self.drop_dead_constants()
        return removed

    def clip_bounds_constant(self, n):
        for b in n.input[1:]:
            if b and not self.inits.has(b) and (self.producer.get(b) is None or self.producer[b].op_type != "Constant"):
                return False
        return True

    def drop_dead_constants(self):
        used = {i for n in self.model.graph.node for i in n.input} | {o.name for o in self.model.graph.output}
        dead = [n for n in self.model.graph.node if n.op_type == "Constant" and n.output[0] not in used]
        for n in dead:
            self.model.graph.node.remove(n)
        self.reindex()

    def activation_params(self, t, ranges):
        if t in self.params:
            return True
        if t not in ranges:
            return False
        qmin, qmax = qrange(self.a["activation_type"], False, self.a["activation_symmetric"])
        s, z = scale_zero_point(ranges[t][0], ranges[t][1], qmin, qmax, self.a["activation_symmetric"])
        self.params[t] = (np.float32(s), int(z))
        return True

    def const_params(self, t):
        """A float constant read by a generic op (e.g. Add of a constant) is quantized like an activation."""
        if t not in self.params:
            arr = self.inits.array(t)
            qmin, qmax = qrange(self.a["activation_type"], False, self.a["activation_symmetric"])
            s, z = scale_zero_point(arr.min() if arr.size else 0.0, arr.max() if arr.size else 0.0, qmin, qmax,
                                    self.a["activation_symmetric"])
            self.params[t] = (np.float32(s), int(z))

    def build(self, ranges, floats):
        for n in self.model.graph.node:
            if not self.selected(n):
                continue
            op = n.op_type
            if op in WEIGHT_OPS:
                if op in ("Conv", "Gemm") and not self.inits.has(n.input[1]):
                    continue
                if op == "MatMul" and not self.inits.has(n.input[1]) and self.a["matmul_const_b_only"]:
                    continue
                if op in ("MatMul", "Gemm") and self.inits.has(n.input[1]) and self.inits.array(n.input[1]).ndim != 2:
                    continue
                if op == "Gemm" and len(n.input) > 2 and n.input[2] and not (
                        self.inits.has(n.input[2]) and self.inits.array(n.input[2]).ndim == 1):
                    continue
                acts = self.activation_inputs(n)
                if any(a not in floats or self.inits.has(a) for a in acts) or n.output[0] not in ranges:
                    continue
                if all(self.activation_params(a, ranges) for a in acts) and self.activation_params(n.output[0], ranges):
                    self.kind[id(n)] = "weight"
            elif op in GENERIC_OPS or (op in FOLD_OPS and n.input[0] in self.params):
                ins = self.activation_inputs(n)
                if any(i not in floats for i in ins) or n.output[0] not in ranges:
                    continue
                ok = True
                for i in ins:
                    if self.inits.has(i):
                        self.const_params(i)
                    elif not self.activation_params(i, ranges):
                        ok = False
                if ok and self.activation_params(n.output[0], ranges):
                    self.kind[id(n)] = "generic"
            elif op in PASS_OPS and n.input[0] in self.params and n.output[0] in floats:
                self.params[n.output[0]] = self.params[n.input[0]]
                self.alias[n.output[0]] = self.alias.get(n.input[0], n.input[0])
                self.kind[id(n)] = "pass"

    # ---- weights ----
    def weight_axis(self, n):
        if not self.a["per_channel"]:
            return None
        if n.op_type == "Conv":
            return 0
        if n.op_type == "Gemm":
            return 0 if g.attr(n, "transB", 0) else 1
        return 1   # MatMul B [K, N]: one scale per output column

    def quantized_weight(self, name, axis):
        key = ("w", name, axis)
        if key not in self.cache:
            q, s, z = quantize_weight(self.inits.array(name), self.a["weight_type"], self.a["weight_symmetric"],
                                      self.a["reduce_range"], axis=axis)
            self.cache[key] = (self.inits.add(self.inits.unique(name + "_quantized"), q),
                               self.inits.add(self.inits.unique(name + "_scale"), np.asarray(s, np.float32)),
                               self.inits.add(self.inits.unique(name + "_zero_point"), np.asarray(z)),
                               np.asarray(s, np.float32))
        return self.cache[key]

    def quantized_bias(self, name, input_scale, weight_scale, axis):
        key = ("b", name, float(input_scale), weight_scale.tobytes())
        if key not in self.cache:
            q, s = quantize_bias(self.inits.array(name), input_scale, weight_scale)
            self.cache[key] = (self.inits.add(self.inits.unique(name + "_quantized"), q),
                               self.inits.add(self.inits.unique(name + "_quantized_scale"), np.asarray(s, np.float32)),
                               self.inits.add(self.inits.unique(name + "_quantized_zero_point"),
                                              np.zeros(np.shape(s), np.int32)))
        return self.cache[key]

    def tensor_qparams(self, t):
        """Initializer names (scale, zero point) of an activation's parameters."""
        t = self.alias.get(t, t)
        key = ("p", t)
        if key not in self.cache:
            s, z = self.params[t]
            zp = np.asarray(z).astype(self.a["activation_type"].np_dtype)
            self.cache[key] = (self.inits.add(self.inits.unique(t + "_scale"), np.asarray(s, np.float32)),
                               self.inits.add(self.inits.unique(t + "_zero_point"), zp))
        return self.cache[key]

    def const_quantized(self, t):
        key = ("c", t)
        if key not in self.cache:
            s, z = self.params[t]
            q = quantize_array(self.inits.array(t), s, z, self.a["activation_type"])
            self.cache[key] = self.inits.add(self.inits.unique(t + "_quantized"), q)
        return self.cache[key]


def _dq(inputs, output, name, axis=None):
    node = helper.make_node("DequantizeLinear", inputs, [output], name)
    if axis is not None:
        node.attribute.append(helper.make_attribute("axis", axis))
    return node


def _write_qdq(plan):
    m, inits, cache = plan.model, plan.inits, plan.cache
    graph_ins = {i.name for i in graph_inputs(m)}
    nodes = []
    rename_in = {}    # graph input -> its DequantizeLinear output

    def qdq_pair(t, src):
        s, z = plan.tensor_qparams(t)
        qname = inits.unique(t + "_QuantizeLinear_Output")
        nodes.append(helper.make_node("QuantizeLinear", [src, s, z], [qname], inits.unique(t + "_QuantizeLinear")))
        return qname, s, z

    for t in [i.name for i in m.graph.input if i.name in graph_ins and i.name in plan.params]:
        qname, s, z = qdq_pair(t, t)
        out = inits.unique(t + "_DequantizeLinear_Output")
        nodes.append(_dq([qname, s, z], out, inits.unique(t + "_DequantizeLinear")))
        rename_in[t] = out
    for n in m.graph.node:
        x = n.input[0] if n.input else ""
        for k, i in enumerate(n.input):
            if i in rename_in:
                n.input[k] = rename_in[i]
        kind = plan.kind.get(id(n))
        # a MatMul of two activations (attention's Q x K^T, P x V): B is Q/DQ'd after its producer
        # like any activation, there is no weight to quantize
        if kind == "weight" and inits.has(n.input[1]):
            axis = plan.weight_axis(n)
            key = ("dqw", n.input[1], axis)
            wq, ws, wz, wscale = plan.quantized_weight(n.input[1], axis)
            if key not in cache:
                cache[key] = inits.unique(n.input[1] + "_DequantizeLinear_Output")
                nodes.append(_dq([wq, ws, wz], cache[key], inits.unique(n.input[1] + "_DequantizeLinear"), axis))
            if len(n.input) > 2 and n.input[2]:
                bq, bs, bz = plan.quantized_bias(n.input[2], plan.params[x][0], wscale, axis)
                bout = inits.unique(n.input[2] + "_DequantizeLinear_Output")
                nodes.append(_dq([bq, bs, bz], bout, inits.unique(n.input[2] + "_DequantizeLinear"),
                                 0 if np.ndim(wscale) == 1 else None))
                n.input[2] = bout
            n.input[1] = cache[key]
        elif kind == "generic":
            for k, i in enumerate(n.input):
                if i and inits.has(i) and i in plan.params:
                    s, z = plan.tensor_qparams(i)
                    out = inits.unique(i + "_DequantizeLinear_Output")
                    nodes.append(_dq([plan.const_quantized(i), s, z], out, inits.unique(i + "_DequantizeLinear")))
                    n.input[k] = out
        # The producer writes T_QuantizeLinear_Input and the DequantizeLinear writes T itself, so every
        # consumer (and a graph output T) reads the quantized-dequantized value without rewiring.
        renamed = {}
        for k, o in enumerate(n.output):
            if o in plan.params:
                renamed[o] = n.output[k] = inits.unique(o + "_QuantizeLinear_Input")
        nodes.append(n)
        for o, src in renamed.items():
            qname, s, z = qdq_pair(o, src)
            nodes.append(_dq([qname, s, z], o, inits.unique(o + "_DequantizeLinear")))
    del m.graph.node[:]
    m.graph.node.extend(nodes)


def _write_qoperator(plan):
    m, inits = plan.model, plan.inits
    have_f = {i.name for i in m.graph.input} | set(inits.protos)
    have_q = {}
    nodes = []
    used_ms = [False]

    def get_q(t):
        if t not in have_q:
            if inits.has(t) and t in plan.params:
                have_q[t] = plan.const_quantized(t)
            else:
                s, z = plan.tensor_qparams(t)
                q = inits.unique(t + "_quantized")
                nodes.append(helper.make_node("QuantizeLinear", [get_f(t), s, z], [q], inits.unique(t + "_QuantizeLinear")))
                have_q[t] = q
        return have_q[t]

    def get_f(t):
        if t == "" or t in have_f:
            return t
        if t in have_q:
            s, z = plan.tensor_qparams(t)
            nodes.append(helper.make_node("DequantizeLinear", [have_q[t], s, z], [t], inits.unique(t + "_DequantizeLinear")))
            have_f.add(t)
            return t
        return t   # produced later (cannot happen in a sorted graph) or an outer-scope name

    def qparams(t):
        return list(plan.tensor_qparams(t))

    def new_q_output(t):
        q = inits.unique(t + "_quantized")
        have_q[t] = q
        return q

    for n in list(m.graph.node):
        kind = plan.kind.get(id(n))
        op = n.op_type
        name = n.name or n.output[0]
        if kind == "weight" and op == "Gemm" and (float(g.attr(n, "alpha", 1.0)) != 1.0 or float(g.attr(n, "beta", 1.0)) != 1.0):
            kind = None
        if kind == "weight":
            axis = plan.weight_axis(n)
            x = n.input[0]
            wq, ws, wz, wscale = plan.quantized_weight(n.input[1], axis) if inits.has(n.input[1]) else (None,) * 4
            y = n.output[0]
            if op == "Conv":
                ins = [get_q(x)] + qparams(x) + [wq, ws, wz] + qparams(y)
                if len(n.input) > 2 and n.input[2]:
                    ins.append(plan.quantized_bias(n.input[2], plan.params[x][0], wscale, axis)[0])
                new = helper.make_node("QLinearConv", ins, [new_q_output(y)], inits.unique(name + "_quant"))
                new.attribute.extend(n.attribute)
            elif op == "MatMul":
                b = n.input[1]
                bins = [wq, ws, wz] if wq else [get_q(b)] + qparams(b)
                new = helper.make_node("QLinearMatMul", [get_q(x)] + qparams(x) + bins + qparams(y),
                                       [new_q_output(y)], inits.unique(name + "_quant"))
            else:
                ins = [get_q(x)] + qparams(x) + [wq, ws, wz]
                c = ""
                if len(n.input) > 2 and n.input[2]:
                    c = plan.quantized_bias(n.input[2], plan.params[x][0], wscale, axis)[0]
                ins += [c] + qparams(y)
                new = helper.make_node("QGemm", ins, [new_q_output(y)], inits.unique(name + "_quant"),
                                       domain="com.microsoft")
                for a in n.attribute:
                    if a.name in ("transA", "transB", "alpha"):
                        new.attribute.append(a)
                used_ms[0] = True
            nodes.append(new)
        elif kind == "generic" and op in QOP_GENERIC:
            y = n.output[0]
            if op == "Concat":
                ins = qparams(y)
                for i in n.input:
                    ins += [get_q(i)] + qparams(i)
            elif op in ("Add", "Mul"):
                ins = [get_q(n.input[0])] + qparams(n.input[0]) + [get_q(n.input[1])] + qparams(n.input[1]) + qparams(y)
            else:
                ins = [get_q(n.input[0])] + qparams(n.input[0]) + qparams(y)
            new = helper.make_node(QOP_GENERIC[op], ins, [new_q_output(y)], inits.unique(name + "_quant"),
                                   domain="com.microsoft")
            new.attribute.extend(n.attribute)
            if op in ("GlobalAveragePool", "AveragePool"):
                new.attribute.append(helper.make_attribute("channels_last", 0))
            used_ms[0] = True
            nodes.append(new)
        elif kind == "pass" and (n.input[0] in have_q or n.input[0] not in have_f):
            n.input[0] = get_q(n.input[0])
            for k in range(1, len(n.input)):
                n.input[k] = get_f(n.input[k])
            n.output[0] = new_q_output(n.output[0])
            nodes.append(n)
        else:
            for k, i in enumerate(n.input):
                n.input[k] = get_f(i)
            have_f.update(n.output)
            nodes.append(n)
    for o in m.graph.output:
        get_f(o.name)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    if used_ms[0]:
        g.ensure_ms_domain(m)


def quantize_static(model_input, model_output, calibration_data_reader, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, use_external_data_format=False,
                    calibrate_method=CalibrationMethod.MinMax, extra_options=None):
    """Quantizes weights and activations with ranges from running the float model (in cort) on the
    samples of calibration_data_reader. Writes model_output and returns the onnx.ModelProto.

    quant_format: QuantFormat.QDQ (QuantizeLinear/DequantizeLinear pairs around float ops) or
    QuantFormat.QOperator (QLinearConv, QLinearMatMul, com.microsoft QGemm/QLinearAdd/...).
    per_channel: one weight scale per output channel (Conv axis 0, MatMul/Gemm per output column).
    extra_options: ActivationSymmetric (False), WeightSymmetric (True for int8 weights),
    MatMulConstBOnly (False)."""
    if isinstance(quant_format, str):
        quant_format = QuantFormat.from_string(quant_format)
    if isinstance(activation_type, str):
        activation_type = QuantType.from_string(activation_type)
    if isinstance(weight_type, str):
        weight_type = QuantType.from_string(weight_type)
    opts = dict(extra_options or {})
    model = g.load(model_input)
    opset = g.default_opset(model)
    if opset < 10:
        raise ValueError("static quantization needs opset >= 10 (QuantizeLinear); the model has %d" % opset)
    if per_channel and quant_format is QuantFormat.QDQ and opset < 13:
        raise ValueError("per-channel QDQ needs opset >= 13 (DequantizeLinear axis); the model has %d" % opset)
    args = {
        "op_types": set(op_types_to_quantize or DEFAULT_STATIC_OPS),
        "nodes_to_quantize": set(nodes_to_quantize or ()),
        "nodes_to_exclude": set(nodes_to_exclude or ()),
        "per_channel": per_channel, "reduce_range": reduce_range,
        "activation_type": activation_type, "weight_type": weight_type,
        "activation_symmetric": bool(opts.get("ActivationSymmetric", False)),
        "weight_symmetric": bool(opts.get("WeightSymmetric", weight_type is QuantType.QInt8)),
        "matmul_const_b_only": bool(opts.get("MatMulConstBOnly", False)),
    }
    floats = _float_tensors(model)
    plan = _Plan(model, args)
    plan.cache = {}
    ranges = collect_ranges(model, plan.calibration_tensors(floats), calibration_data_reader, calibrate_method,
                            opts.get("SessionFactory"))
    plan.fold_activations(ranges)
    plan.build(ranges, floats)
    if quant_format is QuantFormat.QDQ:
        _write_qdq(plan)
    else:
        _write_qoperator(plan)
    plan.inits.drop_unused()
    model.producer_name = "cort.quantization"
    if model_output is not None:
        if use_external_data_format:
            onnx.save_model(model, str(model_output), save_as_external_data=True, all_tensors_to_one_file=True)
        else:
            g.save(model, model_output)
    return model
