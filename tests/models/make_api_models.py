"""Models for the session-option tests (tests/test_initializers.c): run with /usr/bin/python3 from
tests/models/.

ext_weights.onnx: Y = X * W + B, X float [2, 3]; W [2, 3] and B [3] live in ext_weights.bin (W at
offset 0, B at offset 64), W = 0.5 * (1..6), B = (-1, 0, 1)."""
import numpy as np
import onnx
from onnx import helper, TensorProto as TP

W = (np.arange(1, 7, dtype=np.float32) * 0.5).reshape(2, 3)
B = np.array([-1, 0, 1], np.float32)
blob = bytearray(64 + B.nbytes)
blob[0:W.nbytes] = W.tobytes()
blob[64:64 + B.nbytes] = B.tobytes()
with open("ext_weights.bin", "wb") as f:
    f.write(bytes(blob))


def ext_tensor(name, arr, offset):
    t = onnx.TensorProto()
    t.name = name
    t.data_type = TP.FLOAT
    t.dims.extend(arr.shape)
    t.data_location = TP.EXTERNAL
    for k, v in (("location", "ext_weights.bin"), ("offset", str(offset)), ("length", str(arr.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


g = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["T"]), helper.make_node("Add", ["T", "B"], ["Y"])],
                      "ext_weights", [helper.make_tensor_value_info("X", TP.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("Y", TP.FLOAT, [2, 3])],
                      [ext_tensor("W", W, 0), ext_tensor("B", B, 64)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
with open("ext_weights.onnx", "wb") as f:
    f.write(m.SerializeToString())
