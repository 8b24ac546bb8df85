#!/usr/bin/python3
"""Generates the tiny models in tests/data/loader/ used by tests/test_loader.c (checked in; rerun
with /usr/bin/python3 tests/data/make_test_models.py from the repo root if they need to change).

  if_function.onnx     If with then/else subgraphs, a local function with attribute defaults,
                       metadata, a sparse initializer, int8/bool/float16 typed-field initializers
  external.onnx        an initializer in external.bin (offset 16) next to it
  typed_strings.onnx   a string initializer and a double_data initializer
  bad_truncated.onnx   external.onnx cut in the middle of the graph (must fail: INVALID_MODEL)
  bad_dotdot.onnx      external data at "../external.bin" (must fail: INVALID_MODEL)
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loader")
os.makedirs(OUT, exist_ok=True)


def save(model, name):
    data = model.SerializeToString()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    return data


def if_function():
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["y_then"])], "then",
                               [], [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["y_else"])], "else",
                               [], [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, [2])])
    fn_node = helper.make_node("LeakyRelu", ["a"], ["b"])
    fn_node.attribute.append(onnx.AttributeProto(name="alpha", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT))
    fn = helper.make_function("local", "MyLeaky", ["a"], ["b"], [fn_node],
                              [helper.make_opsetid("", 17)], ["alpha"])
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sp", TensorProto.FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("", TensorProto.INT64, [2], [0, 5]), [2, 3])
    inits = [
        helper.make_tensor("i8", TensorProto.INT8, [3], [-1, 0, 127]),
        helper.make_tensor("b", TensorProto.BOOL, [2], [True, False]),
        helper.make_tensor("h", TensorProto.FLOAT16, [2], [1.0, -2.0]),
    ]
    nodes = [
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("MyLeaky", ["y"], ["z"], domain="local", alpha=0.2),
    ]
    g = helper.make_graph(nodes, "if_function",
                          [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
                          initializer=inits, sparse_initializer=[sparse])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[fn], producer_name="make_test_models")
    helper.set_model_props(m, {"purpose": "loader test"})
    return save(m, "if_function.onnx")


def external():
    w = np.arange(6, dtype=np.float32)
    with open(os.path.join(OUT, "external.bin"), "wb") as f:
        f.write(b"\0" * 16 + w.tobytes())

    def model(location):
        t = onnx.TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[6])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", "16"), ("length", str(w.nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"])], "ext",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])], initializer=[t])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    data = save(model("external.bin"), "external.onnx")
    with open(os.path.join(OUT, "bad_truncated.onnx"), "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    save(model("../loader/external.bin"), "bad_dotdot.onnx")


def typed_strings():
    inits = [
        helper.make_tensor("s", TensorProto.STRING, [2], [b"hello", b""]),
        helper.make_tensor("d", TensorProto.DOUBLE, [2], [0.5, -1.25]),
    ]
    g = helper.make_graph([helper.make_node("Identity", ["s"], ["y"])], "typed", [],
                          [helper.make_tensor_value_info("y", TensorProto.STRING, [2])], initializer=inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "typed_strings.onnx")


if __name__ == "__main__":
    if_function()
    external()
    typed_strings()
