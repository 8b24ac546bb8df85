"""Writes tests/fuzz/serve_models/*.onnx, the models fuzz_serve parses requests against: one per
KServe v2 datatype (Identity x_T -> y_T, shape [N, 3]) and add.onnx (a float [M, 4] + itself, two
outputs). The fuzzer picks one by the first byte of its input.
Run: /usr/bin/python3 tests/fuzz/make_serve_model.py"""
import os
import onnx
from onnx import TensorProto, helper

TYPES = {"BOOL": TensorProto.BOOL, "UINT8": TensorProto.UINT8, "UINT16": TensorProto.UINT16,
         "UINT32": TensorProto.UINT32, "UINT64": TensorProto.UINT64, "INT8": TensorProto.INT8,
         "INT16": TensorProto.INT16, "INT32": TensorProto.INT32, "INT64": TensorProto.INT64,
         "FP16": TensorProto.FLOAT16, "FP32": TensorProto.FLOAT, "FP64": TensorProto.DOUBLE,
         "BF16": TensorProto.BFLOAT16, "BYTES": TensorProto.STRING}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_models")
os.makedirs(out, exist_ok=True)
opset = [helper.make_opsetid("", 17)]
for name, et in TYPES.items():
    g = helper.make_graph([helper.make_node("Identity", ["x_" + name], ["y_" + name])], "serve_fuzz_" + name,
                          [helper.make_tensor_value_info("x_" + name, et, ["N", 3])],
                          [helper.make_tensor_value_info("y_" + name, et, ["N", 3])])
    onnx.save(helper.make_model(g, opset_imports=opset, ir_version=8), os.path.join(out, name + ".onnx"))
g = helper.make_graph([helper.make_node("Add", ["a", "a"], ["b"]), helper.make_node("Neg", ["a"], ["c"])], "serve_fuzz_add",
                      [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["M", 4])],
                      [helper.make_tensor_value_info("b", TensorProto.FLOAT, ["M", 4]),
                       helper.make_tensor_value_info("c", TensorProto.FLOAT, ["M", 4])])
onnx.save(helper.make_model(g, opset_imports=opset, ir_version=8), os.path.join(out, "add.onnx"))
