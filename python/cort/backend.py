"""onnx.backend implementation over cort, so `onnx.backend.test.BackendTest(cort.backend, __name__)`
runs ONNX's backend test suite through the Python binding (requires the `onnx` package)."""
import numpy as np

import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .session import InferenceSession, SessionOptions, GraphOptimizationLevel


class CortBackendRep(BackendRep):
    """A prepared model; run() takes inputs as a list (model input order), a dict or one array."""

    def __init__(self, session):
        self._session = session

    @property
    def session(self):
        return self._session

    def run(self, inputs, **kwargs):
        names = [i.name for i in self._session.get_inputs()]
        if isinstance(inputs, dict):
            feed = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) > len(names):
                raise RuntimeError("Model expects %d inputs, got %d" % (len(names), len(inputs)))
            feed = dict(zip(names, inputs))
        else:
            if len(names) != 1:
                raise RuntimeError("Model expects %d inputs, got a single value" % len(names))
            feed = {names[0]: inputs}
        return self._session.run(None, feed)


class CortBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device):
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        """model: ModelProto, serialized bytes or a path. kwargs set SessionOptions attributes of the
        same name (e.g. graph_optimization_level=0, intra_op_num_threads=1)."""
        if not cls.supports_device(device):
            raise RuntimeError("cort supports only the CPU device, not '%s'" % device)
        if isinstance(model, InferenceSession):
            return CortBackendRep(model)
        options = SessionOptions()
        for key, value in kwargs.items():
            if hasattr(options, key) and not key.startswith("_"):
                setattr(options, key, value)
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        return CortBackendRep(InferenceSession(model, options))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Runs one node by wrapping it in a one-node model (inputs typed from the arrays)."""
        if isinstance(inputs, dict):
            feed = inputs
        else:
            feed = {name: value for name, value in zip(node.input, inputs) if name}
        graph_inputs = []
        for name in node.input:
            if not name:
                continue
            arr = np.asarray(feed[name])
            elem = helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
                else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]
            graph_inputs.append(helper.make_tensor_value_info(name, elem, arr.shape))
        graph_outputs = []
        for i, name in enumerate(node.output):
            if outputs_info and i < len(outputs_info):
                dtype, shape = outputs_info[i]
                elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
                graph_outputs.append(helper.make_tensor_value_info(name, elem, shape))
            else:
                graph_outputs.append(helper.make_empty_tensor_value_info(name))
        opset = kwargs.pop("opset_version", None) or onnx.defs.onnx_opset_version()
        model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
                                  opset_imports=[helper.make_opsetid(node.domain or "", opset)])
        outputs = cls.prepare(model, device, **kwargs).run(feed)
        names = [n for n in node.output]
        return namedtupledict("Outputs", names)(*outputs)


is_compatible = CortBackend.is_compatible
prepare = CortBackend.prepare
run = CortBackend.run_model
run_model = CortBackend.run_model
run_node = CortBackend.run_node
supports_device = CortBackend.supports_device

__all__ = ["CortBackend", "CortBackendRep", "is_compatible", "prepare", "run", "run_model", "run_node",
           "supports_device", "GraphOptimizationLevel"]
