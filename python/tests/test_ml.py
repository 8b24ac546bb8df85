"""ai.onnx.ml through the Python binding: ZipMap's output as a list of dicts (as ONNX Runtime
returns it), a dict fed to DictVectorizer, and scikit-learn estimators converted by hand whose
predictions cort must reproduce."""
import os

import numpy as np
import pytest
from onnx import helper, TensorProto as TP

from conftest import session, vi

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_iris, load_diabetes  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

ML = "ai.onnx.ml"
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models", "ml")


def ml_model(nodes, inputs, outputs, ml_opset=1):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)])
    m.ir_version = 8
    return m.SerializeToString()


def seq_map_vi(name, key):
    tp = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TP.FLOAT, None))
    vi_ = helper.make_value_info(name, tp)
    # replace the element type by map(key, tensor(float)): onnx 1.12's helper has no map type maker
    elem = vi_.type.sequence_type.elem_type
    elem.Clear()
    elem.map_type.key_type = key
    elem.map_type.value_type.tensor_type.elem_type = TP.FLOAT
    return vi_


def test_logistic_regression_zipmap_list_of_dicts():
    d = load_iris()
    x = d.data.astype(np.float32)
    clf = LogisticRegression(max_iter=2000).fit(x, d.target)
    names = [str(n) for n in d.target_names]
    nodes = [helper.make_node("LinearClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_strings=names,
                              coefficients=clf.coef_.ravel().tolist(), intercepts=clf.intercept_.tolist(),
                              post_transform="SOFTMAX"),
             helper.make_node("ZipMap", ["prob"], ["probs"], domain=ML, classlabels_strings=names)]
    m = ml_model(nodes, [vi("X", TP.FLOAT, [None, 4])], [vi("label", TP.STRING, [None]), seq_map_vi("probs", TP.STRING)])
    s = session(m)
    rows = x[::15]
    label, probs = s.run(None, {"X": rows})
    assert label.tolist() == [names[i] for i in clf.predict(rows)]
    assert isinstance(probs, list) and len(probs) == len(rows)
    want = clf.predict_proba(rows)
    for got, w in zip(probs, want):
        assert isinstance(got, dict) and list(got) == names
        np.testing.assert_allclose([got[n] for n in names], w, rtol=1e-4, atol=1e-6)


def test_zipmap_int_keys():
    m = ml_model([helper.make_node("ZipMap", ["x"], ["z"], domain=ML, classlabels_int64s=[3, 1, 2])],
                 [vi("x", TP.FLOAT, [None, 3])], [seq_map_vi("z", TP.INT64)])
    (z,) = session(m).run(None, {"x": np.array([[0.5, 0.25, 0.25], [0, 1, 0]], np.float32)})
    assert z == [{3: 0.5, 1: 0.25, 2: 0.25}, {3: 0.0, 1: 1.0, 2: 0.0}]


def test_dict_vectorizer_from_dict():
    tp = helper.make_tensor_type_proto(TP.FLOAT, None)
    xin = helper.make_value_info("x", tp)
    xin.type.Clear()
    xin.type.map_type.key_type = TP.STRING
    xin.type.map_type.value_type.tensor_type.elem_type = TP.FLOAT
    m = ml_model([helper.make_node("DictVectorizer", ["x"], ["y"], domain=ML, string_vocabulary=["a", "b", "c", "d"])],
                 [xin], [vi("y", TP.FLOAT, [1, 4])])
    (y,) = session(m).run(None, {"x": {"c": 2.5, "a": -1.0}})
    assert y.tolist() == [[-1.0, 0.0, 2.5, 0.0]]


def test_random_forest_regressor_threads():
    d = load_diabetes()
    x = d.data.astype(np.float32)
    rf = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=1).fit(x, d.target)
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
                         "nodes_falsenodeids", "target_treeids", "target_nodeids", "target_ids")}
    values, weights = [], []
    for ti, est in enumerate(rf.estimators_):
        t = est.tree_
        for n in range(t.node_count):
            leaf = t.children_left[n] == -1
            a["nodes_treeids"].append(ti)
            a["nodes_nodeids"].append(n)
            a["nodes_featureids"].append(0 if leaf else int(t.feature[n]))
            a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            a["nodes_truenodeids"].append(0 if leaf else int(t.children_left[n]))
            a["nodes_falsenodeids"].append(0 if leaf else int(t.children_right[n]))
            values.append(float(t.threshold[n]) if not leaf else 0.0)
            if leaf:
                a["target_treeids"].append(ti)
                a["target_nodeids"].append(n)
                a["target_ids"].append(0)
                weights.append(float(t.value[n][0][0]))
    node = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["y"], domain=ML, n_targets=1, aggregate_function="AVERAGE",
        nodes_values_as_tensor=helper.make_tensor("v", TP.DOUBLE, [len(values)], values),
        target_weights_as_tensor=helper.make_tensor("w", TP.DOUBLE, [len(weights)], weights), **a)
    m = ml_model([node], [vi("X", TP.FLOAT, [None, 10])], [vi("y", TP.FLOAT, [None, 1])], ml_opset=3)
    want = rf.predict(x).reshape(-1, 1)
    for threads in (1, 2):
        (y,) = session(m, threads=threads).run(None, {"X": x})
        np.testing.assert_allclose(y, want, rtol=1e-5)


@pytest.mark.skipif(not os.path.isdir(MODELS), reason="tests/models/ml not built")
def test_stored_sklearn_models_load_and_run():
    """Every stored scikit-learn model opens and runs on its stored input (make_ml_models.py)."""
    from onnx import numpy_helper, TensorProto
    names = sorted(n for n in os.listdir(MODELS) if os.path.isfile(os.path.join(MODELS, n, "model.onnx")))
    assert len(names) >= 20
    for name in names:
        if name == "dict_vectorizer":
            continue                      # its input is a MapProto (covered above)
        d = os.path.join(MODELS, name)
        s = session(os.path.join(d, "model.onnx"))
        feeds = {}
        for i, inp in enumerate(s.get_inputs()):
            t = TensorProto()
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "rb") as f:
                t.ParseFromString(f.read())
            feeds[inp.name] = numpy_helper.to_array(t)
        outs = s.run(None, feeds)
        assert len(outs) == len(s.get_outputs())
