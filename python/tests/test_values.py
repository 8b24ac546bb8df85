"""Sequences and optionals in and out of run()."""
import numpy as np
from onnx import helper, TensorProto as TP

from conftest import make_model, vi, session


def seq_vi(name, elem=TP.FLOAT):
    return helper.make_tensor_sequence_value_info(name, elem, None)


def opt_vi(name, inner):
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def test_sequence_output_is_list_of_arrays():
    m = make_model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"])],
                   [vi("a", TP.FLOAT, [2]), vi("b", TP.FLOAT, [3])], [seq_vi("s")])
    s = session(m)
    assert s.get_outputs()[0].type == "seq(tensor(float))"
    (out,) = s.run(None, {"a": np.ones(2, np.float32), "b": np.zeros(3, np.float32)})
    assert isinstance(out, list) and [x.tolist() for x in out] == [[1, 1], [0, 0, 0]]


def test_sequence_input():
    m = make_model([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)], [seq_vi("s")],
                   [vi("y", TP.FLOAT)])
    s = session(m)
    items = [np.array([1, 2], np.float32), np.array([3], np.float32)]
    assert s.run(None, {"s": items})[0].tolist() == [1, 2, 3]
    assert s.run(None, {"s": tuple(items)})[0].tolist() == [1, 2, 3]
    n = make_model([helper.make_node("SequenceLength", ["s"], ["n"])], [seq_vi("s", TP.INT64)], [vi("n", TP.INT64, [])])
    assert int(session(n).run(None, {"s": []})[0]) == 0
    assert int(session(n).run(None, {"s": [np.zeros(1, np.int64)] * 3})[0]) == 3


def test_split_to_sequence_and_back():
    m = make_model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),
                    helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                   [vi("x", TP.INT32, [3, 2]), vi("i", TP.INT64, [])], [vi("y", TP.INT32), seq_vi("s", TP.INT32)])
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    y, seq = session(m).run(None, {"x": x, "i": np.array(-1, np.int64)})
    assert y.tolist() == [[4, 5]]
    assert [a.tolist() for a in seq] == [[[0, 1]], [[2, 3]], [[4, 5]]]


def test_optional_tensor_in_and_out():
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TP.FLOAT, [2]))
    m = make_model([helper.make_node("OptionalHasElement", ["o"], ["h"]), helper.make_node("Identity", ["o"], ["p"])],
                   [opt_vi("o", helper.make_tensor_type_proto(TP.FLOAT, [2]))],
                   [vi("h", TP.BOOL, []), helper.make_value_info("p", opt_t)], opset=16)
    s = session(m)
    assert s.get_inputs()[0].type == "optional(tensor(float))"
    h, p = s.run(None, {"o": np.array([1, 2], np.float32)})
    assert bool(h) is True and p.tolist() == [1, 2]
    h, p = s.run(None, {"o": None})
    assert bool(h) is False and p is None


def test_optional_get_element_and_construct():
    m = make_model([helper.make_node("Optional", ["x"], ["o"]), helper.make_node("OptionalGetElement", ["o"], ["y"])],
                   [vi("x", TP.INT64, [2])], [vi("y", TP.INT64, [2])], opset=16)
    assert session(m).run(None, {"x": np.array([7, 8])})[0].tolist() == [7, 8]
