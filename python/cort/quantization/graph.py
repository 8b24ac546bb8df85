"""Small helpers over an ONNX graph shared by the dynamic and static quantizers."""
import onnx
from onnx import helper, numpy_helper


def load(model_input):
    if isinstance(model_input, onnx.ModelProto):
        m = onnx.ModelProto()
        m.CopyFrom(model_input)
        return m
    return onnx.load(str(model_input))


def save(model, model_output):
    onnx.save_model(model, str(model_output))


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    raise ValueError("the model imports no ai.onnx opset")


def ensure_ms_domain(model):
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def should_quantize(node, op_types, nodes_to_quantize, nodes_to_exclude):
    if node.op_type not in op_types:
        return False
    if nodes_to_quantize and node.name not in nodes_to_quantize:
        return False
    if nodes_to_exclude and node.name in nodes_to_exclude:
        return False
    return True


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


class Initializers:
    """Name -> numpy array view of the initializers, plus the new ones a quantizer adds."""

    def __init__(self, model):
        self.model = model
        self.protos = {i.name: i for i in model.graph.initializer}
        self._arrays = {}
        self.used_names = set(self.protos)
        for n in model.graph.node:
            self.used_names.update(n.output)
        self.used_names.update(i.name for i in model.graph.input)

    def has(self, name):
        return name in self.protos

    def array(self, name):
        if name not in self._arrays:
            self._arrays[name] = numpy_helper.to_array(self.protos[name])
        return self._arrays[name]

    def add(self, name, array):
        t = numpy_helper.from_array(array, name)
        self.model.graph.initializer.append(t)
        self.protos[name] = t
        self.used_names.add(name)
        return name

    def unique(self, base):
        name, k = base, 1
        while name in self.used_names:
            name = "%s_%d" % (base, k)
            k += 1
        self.used_names.add(name)
        return name

    def drop_unused(self):
        """Removes initializers no node, subgraph or graph output reads (the float weights that were
        replaced by their quantized copies)."""
        used = set(o.name for o in self.model.graph.output)

        def visit(graph):
            for n in graph.node:
                used.update(n.input)
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        visit(a.g)
                    elif a.type == onnx.AttributeProto.GRAPHS:
                        for g in a.graphs:
                            visit(g)
        visit(self.model.graph)
        keep = [i for i in self.model.graph.initializer if i.name in used]
        dropped = {i.name for i in self.model.graph.initializer} - {i.name for i in keep}
        del self.model.graph.initializer[:]
        self.model.graph.initializer.extend(keep)
        # Models of IR < 4 list initializers as graph inputs too.
        inputs = [i for i in self.model.graph.input if i.name not in dropped]
        del self.model.graph.input[:]
        self.model.graph.input.extend(inputs)
        for n in dropped:
            self.protos.pop(n, None)
            self._arrays.pop(n, None)
