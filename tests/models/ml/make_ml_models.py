#!/usr/bin/python3
"""Builds ai.onnx.ml test models from scikit-learn estimators fitted on sklearn's bundled data sets.

Each model is converted by hand with onnx.helper (no skl2onnx), and each test folder holds the
model and one data set whose expected outputs are scikit-learn's own predictions (predict,
predict_proba, decision_function, transform). `cort test tests/models/ml/*` runs them.

Usage: /usr/bin/python3 tests/models/ml/make_ml_models.py [OUT_DIR]   (default: next to this file)
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn import datasets
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingClassifier,
                              HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor)
from sklearn.feature_extraction import DictVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.preprocessing import Binarizer, LabelEncoder, Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
ML = "ai.onnx.ml"
F = TensorProto.FLOAT
I64 = TensorProto.INT64
S = TensorProto.STRING


def data(name):
    """(X as float32-exact float64, y) of a bundled data set and the rows used as test inputs."""
    d = getattr(datasets, "load_" + name)()
    x = d.data.astype(np.float32).astype(np.float64)
    rng = np.random.RandomState(7)
    rows = np.sort(rng.choice(len(x), 40, replace=False))
    return x, d.target, rows, d


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def map_type(key_type):
    tp = onnx.TypeProto()
    tp.map_type.key_type = key_type
    tp.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(F, None))
    return tp


def seq_map_info(name, key_type):
    return helper.make_value_info(name, helper.make_sequence_type_proto(map_type(key_type)))


def save(name, nodes, inputs, outputs, feeds, expected, ml_opset=1, initializers=()):
    """Writes OUT/name/model.onnx and test_data_set_0 (feeds and expected are lists of proto values)."""
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)],
                              producer_name="cort make_ml_models.py")
    model.ir_version = 8
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, values in (("input", feeds), ("output", expected)):
        for i, v in enumerate(values):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(v.SerializeToString())
    print("wrote", d)


def t(arr, name, dtype=None):
    a = np.asarray(arr)
    if dtype is not None:
        a = a.astype(dtype)
    if a.dtype.kind in "US":
        a = a.astype(object)
    return numpy_helper.from_array(a, name)


def zipmap_value(name, keys, probs):
    """Expected ZipMap output: a sequence of maps {label: probability}, one per row."""
    key_type = S if isinstance(keys[0], str) else I64
    maps = []
    for row in probs:
        vals = helper.make_sequence("v", onnx.SequenceProto.TENSOR,
                                    [numpy_helper.from_array(np.array(v, dtype=np.float32)) for v in row])
        maps.append(helper.make_map("m", key_type, [k.encode() if isinstance(k, str) else int(k) for k in keys], vals))
    return helper.make_sequence(name, onnx.SequenceProto.MAP, maps)


def float_threshold(th):
    """Largest float32 <= th: for float32 inputs, x <= th exactly when x <= this float."""
    f = np.float32(th)
    if np.float64(f) > th:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


# ---------------------------------------------------------------- linear models
def linear_models():
    x, y, rows, d = data("iris")
    xs = x[rows]
    clf = LogisticRegression(max_iter=2000, multi_class="multinomial").fit(x, y)
    node = helper.make_node("LinearClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_ints=[0, 1, 2],
                            coefficients=clf.coef_.ravel().tolist(), intercepts=clf.intercept_.tolist(),
                            multi_class=1, post_transform="SOFTMAX")
    save("logreg_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("prob", F, [None, 3])],
         [t(xs, "X", np.float32)], [t(clf.predict(xs), "label", np.int64), t(clf.predict_proba(xs), "prob", np.float32)])

    # standardized inputs, ZipMap output with string keys (what converters emit by default)
    sc = StandardScaler().fit(x)
    clf2 = LogisticRegression(max_iter=2000).fit(sc.transform(x), y)
    names = [str(n) for n in d.target_names]
    nodes = [helper.make_node("Scaler", ["X"], ["xs"], domain=ML, offset=sc.mean_.tolist(), scale=(1 / sc.scale_).tolist()),
             helper.make_node("LinearClassifier", ["xs"], ["label", "prob"], domain=ML, classlabels_strings=names,
                              coefficients=clf2.coef_.ravel().tolist(), intercepts=clf2.intercept_.tolist(),
                              post_transform="SOFTMAX"),
             helper.make_node("ZipMap", ["prob"], ["probs"], domain=ML, classlabels_strings=names)]
    pr = clf2.predict_proba(sc.transform(xs))
    save("scaler_logreg_zipmap_iris", nodes, [vi("X", F, [None, 4])], [vi("label", S, [None]), seq_map_info("probs", S)],
         [t(xs, "X", np.float32)], [t(np.array(names)[clf2.predict(sc.transform(xs))], "label"), zipmap_value("probs", names, pr)])

    # binary: one coefficient row, LOGISTIC gives [1 - p, p]
    x, y, rows, d = data("breast_cancer")
    xs = x[rows]
    sc = StandardScaler().fit(x)
    clf = LogisticRegression(max_iter=5000).fit(sc.transform(x), y)
    names = [str(n) for n in d.target_names]
    nodes = [helper.make_node("Scaler", ["X"], ["xs"], domain=ML, offset=sc.mean_.tolist(), scale=(1 / sc.scale_).tolist()),
             helper.make_node("LinearClassifier", ["xs"], ["label", "prob"], domain=ML, classlabels_strings=names,
                              coefficients=clf.coef_.ravel().tolist(), intercepts=clf.intercept_.tolist(),
                              post_transform="LOGISTIC")]
    save("logreg_binary_cancer", nodes, [vi("X", F, [None, 30])], [vi("label", S, [None]), vi("prob", F, [None, 2])],
         [t(xs, "X", np.float32)],
         [t(np.array(names)[clf.predict(sc.transform(xs))], "label"), t(clf.predict_proba(sc.transform(xs)), "prob", np.float32)])

    x, y, rows, _ = data("diabetes")
    xs = x[rows]
    reg = LinearRegression().fit(x, y)
    node = helper.make_node("LinearRegressor", ["X"], ["y"], domain=ML, coefficients=reg.coef_.tolist(),
                            intercepts=[float(reg.intercept_)])
    save("linreg_diabetes", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
         [t(reg.predict(xs).reshape(-1, 1), "y", np.float32)])

    # two targets at once
    y2 = np.stack([y, np.log(y)], 1)
    reg = Ridge(alpha=0.1).fit(x, y2)
    node = helper.make_node("LinearRegressor", ["X"], ["y"], domain=ML, coefficients=reg.coef_.ravel().tolist(),
                            intercepts=reg.intercept_.tolist(), targets=2)
    save("ridge_2targets_diabetes", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 2])], [t(xs, "X", np.float32)],
         [t(reg.predict(xs), "y", np.float32)])


# ---------------------------------------------------------------- SVMs
def svm_attrs(m):
    k = m.kernel
    gamma = float(m._gamma) if k != "linear" else 0.0
    return dict(kernel_type=k.upper(), kernel_params=[gamma, float(m.coef0), float(m.degree)])


def svm_models():
    x, y, rows, _ = data("iris")
    xs = x[rows]
    for kernel in ("linear", "rbf", "poly"):
        m = SVC(kernel=kernel, gamma="scale", degree=3, coef0=0.5).fit(x, y)
        m.decision_function_shape = "ovo"
        node = helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML, classlabels_ints=[0, 1, 2],
                                coefficients=m._dual_coef_.ravel().tolist(), support_vectors=m.support_vectors_.ravel().tolist(),
                                vectors_per_class=m.n_support_.tolist(), rho=m._intercept_.tolist(), **svm_attrs(m))
        save("svc_%s_iris" % kernel, [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("scores", F, [None, 3])],
             [t(xs, "X", np.float32)], [t(m.predict(xs), "label", np.int64), t(m.decision_function(xs), "scores", np.float32)])

    # probabilities (Platt scaling, pairwise coupling)
    m = SVC(kernel="rbf", probability=True, random_state=0).fit(x, y)
    node = helper.make_node("SVMClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_ints=[0, 1, 2],
                            coefficients=m._dual_coef_.ravel().tolist(), support_vectors=m.support_vectors_.ravel().tolist(),
                            vectors_per_class=m.n_support_.tolist(), rho=m._intercept_.tolist(),
                            prob_a=m.probA_.tolist(), prob_b=m.probB_.tolist(), **svm_attrs(m))
    save("svc_rbf_proba_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("prob", F, [None, 3])],
         [t(xs, "X", np.float32)], [t(m.predict(xs), "label", np.int64), t(m.predict_proba(xs), "prob", np.float32)])

    # binary: one decision value s (libsvm's sign: positive votes for the first class) gives [-s, s]
    x, y, rows, _ = data("breast_cancer")
    sc = StandardScaler().fit(x)
    xt = sc.transform(x)
    m = SVC(kernel="rbf").fit(xt, y)
    s = -m.decision_function(xt[rows])
    node = helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML, classlabels_ints=[0, 1],
                            coefficients=m._dual_coef_.ravel().tolist(), support_vectors=m.support_vectors_.ravel().tolist(),
                            vectors_per_class=m.n_support_.tolist(), rho=m._intercept_.tolist(), **svm_attrs(m))
    save("svc_rbf_binary_cancer", [node], [vi("X", F, [None, 30])], [vi("label", I64, [None]), vi("scores", F, [None, 2])],
         [t(xt[rows], "X", np.float32)], [t(m.predict(xt[rows]), "label", np.int64), t(np.stack([-s, s], 1), "scores", np.float32)])

    # LinearSVC as converters emit it: a LinearClassifier with raw scores
    x, y, rows, _ = data("iris")
    m = LinearSVC(max_iter=20000, dual=True, random_state=0).fit(x, y)
    node = helper.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML, classlabels_ints=[0, 1, 2],
                            coefficients=m.coef_.ravel().tolist(), intercepts=m.intercept_.tolist())
    save("linear_svc_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("scores", F, [None, 3])],
         [t(x[rows], "X", np.float32)], [t(m.predict(x[rows]), "label", np.int64), t(m.decision_function(x[rows]), "scores", np.float32)])

    # SVMClassifier's liblinear form (no support vectors): one coefficient row per class and one
    # rho shared by all classes, so the intercepts must be equal: fit without intercept
    m = LinearSVC(max_iter=20000, dual=True, random_state=0, fit_intercept=False).fit(x, y)
    node = helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML, classlabels_ints=[0, 1, 2],
                            coefficients=m.coef_.ravel().tolist(), rho=[0.0], kernel_type="LINEAR",
                            kernel_params=[0.0, 0.0, 0.0])
    save("linear_svc_noint_svm_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("scores", F, [None, 3])],
         [t(x[rows], "X", np.float32)], [t(m.predict(x[rows]), "label", np.int64), t(m.decision_function(x[rows]), "scores", np.float32)])

    x, y, rows, _ = data("diabetes")
    xs = x[rows]
    for kernel in ("linear", "rbf"):
        m = SVR(kernel=kernel, C=50.0, gamma="scale").fit(x, y)
        node = helper.make_node("SVMRegressor", ["X"], ["y"], domain=ML, coefficients=m.dual_coef_.ravel().tolist(),
                                support_vectors=m.support_vectors_.ravel().tolist(), n_supports=len(m.support_),
                                rho=m.intercept_.tolist(), **svm_attrs(m))
        save("svr_%s_diabetes" % kernel, [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
             [t(m.predict(xs).reshape(-1, 1), "y", np.float32)])


# ---------------------------------------------------------------- trees
def tree_attrs(trees, leaf_fn, as_tensor, prefix):
    """Legacy (v1/v3) node and leaf attributes of sklearn trees; leaf_fn(tree_index, tree, node) ->
    [(target or class id, weight)]."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", prefix + "_treeids", prefix + "_nodeids",
                         prefix + "_ids", prefix + "_weights")}
    for ti, est in enumerate(trees):
        tr = est.tree_
        for n in range(tr.node_count):
            leaf = tr.children_left[n] == -1
            a["nodes_treeids"].append(ti)
            a["nodes_nodeids"].append(n)
            a["nodes_featureids"].append(0 if leaf else int(tr.feature[n]))
            a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            th = float(tr.threshold[n]) if not leaf else 0.0
            a["nodes_values"].append(th if as_tensor else float_threshold(th))
            a["nodes_truenodeids"].append(0 if leaf else int(tr.children_left[n]))
            a["nodes_falsenodeids"].append(0 if leaf else int(tr.children_right[n]))
            if leaf:
                for cid, w in leaf_fn(ti, tr, n):
                    a[prefix + "_treeids"].append(ti)
                    a[prefix + "_nodeids"].append(n)
                    a[prefix + "_ids"].append(int(cid))
                    a[prefix + "_weights"].append(float(w))
    if as_tensor:
        a["nodes_values_as_tensor"] = helper.make_tensor("nodes_values_as_tensor", TensorProto.DOUBLE,
                                                         [len(a["nodes_values"])], a.pop("nodes_values"))
        w = a.pop(prefix + "_weights")
        a[prefix + "_weights_as_tensor"] = helper.make_tensor(prefix + "_weights_as_tensor", TensorProto.DOUBLE, [len(w)], w)
    return a


def proba_leaf(n_trees):
    def fn(ti, tr, n):
        v = tr.value[n][0]
        v = v / v.sum()
        return [(c, v[c] / n_trees) for c in range(len(v))]
    return fn


def tree_models():
    x, y, rows, d = data("iris")
    xs = x[rows]
    dt = DecisionTreeClassifier(max_depth=4, random_state=0).fit(x, y)
    a = tree_attrs([dt], proba_leaf(1), False, "class")
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_int64s=[0, 1, 2],
                            post_transform="NONE", **a)
    save("dtree_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("prob", F, [None, 3])],
         [t(xs, "X", np.float32)], [t(dt.predict(xs), "label", np.int64), t(dt.predict_proba(xs), "prob", np.float32)])

    rf = RandomForestClassifier(n_estimators=12, max_depth=6, random_state=0).fit(x, y)
    a = tree_attrs(rf.estimators_, proba_leaf(len(rf.estimators_)), True, "class")
    names = [str(n) for n in d.target_names]
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_strings=names, **a)
    save("rf_iris_v3", [node], [vi("X", F, [None, 4])], [vi("label", S, [None]), vi("prob", F, [None, 3])],
         [t(xs, "X", np.float32)], [t(np.array(names)[rf.predict(xs)], "label"), t(rf.predict_proba(xs), "prob", np.float32)],
         ml_opset=3)

    gb = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0).fit(x, y)
    k = gb.estimators_.shape[1]
    trees, ids = [], []
    for i in range(gb.estimators_.shape[0]):
        for c in range(k):
            trees.append(gb.estimators_[i, c])
            ids.append(c)
    lr = gb.learning_rate
    a = tree_attrs(trees, lambda ti, tr, n: [(ids[ti], lr * tr.value[n][0][0])], False, "class")
    base = gb._raw_predict_init(x[:1])[0].tolist()
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_int64s=[0, 1, 2],
                            base_values=base, post_transform="SOFTMAX", **a)
    save("gb_iris", [node], [vi("X", F, [None, 4])], [vi("label", I64, [None]), vi("prob", F, [None, 3])],
         [t(xs, "X", np.float32)], [t(gb.predict(xs), "label", np.int64), t(gb.predict_proba(xs), "prob", np.float32)])

    # binary boosting: every vote to class 0's column, LOGISTIC gives [1 - p, p]
    x, y, rows, _ = data("breast_cancer")
    xs = x[rows]
    gb = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(x, y)
    lr = gb.learning_rate
    a = tree_attrs(gb.estimators_[:, 0], lambda ti, tr, n: [(0, lr * tr.value[n][0][0])], False, "class")
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_int64s=[0, 1],
                            base_values=[float(gb._raw_predict_init(x[:1])[0, 0])], post_transform="LOGISTIC", **a)
    save("gb_binary_cancer", [node], [vi("X", F, [None, 30])], [vi("label", I64, [None]), vi("prob", F, [None, 2])],
         [t(xs, "X", np.float32)], [t(gb.predict(xs), "label", np.int64), t(gb.predict_proba(xs), "prob", np.float32)])

    x, y, rows, _ = data("diabetes")
    xs = x[rows]
    dt = DecisionTreeRegressor(max_depth=5, random_state=0).fit(x, y)
    a = tree_attrs([dt], lambda ti, tr, n: [(0, tr.value[n][0][0])], False, "target")
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain=ML, n_targets=1, **a)
    save("dtree_reg_diabetes", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
         [t(dt.predict(xs).reshape(-1, 1), "y", np.float32)])

    rf = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0).fit(x, y)
    a = tree_attrs(rf.estimators_, lambda ti, tr, n: [(0, tr.value[n][0][0])], True, "target")
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain=ML, n_targets=1, aggregate_function="AVERAGE", **a)
    save("rf_reg_diabetes_v3", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
         [t(rf.predict(xs).reshape(-1, 1), "y", np.float32)], ml_opset=3)

    gb = GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0).fit(x, y)
    lr = gb.learning_rate
    a = tree_attrs(gb.estimators_[:, 0], lambda ti, tr, n: [(0, lr * tr.value[n][0][0])], False, "target")
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain=ML, n_targets=1,
                            base_values=[float(gb._raw_predict_init(x[:1])[0, 0])], **a)
    save("gb_reg_diabetes", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
         [t(gb.predict(xs).reshape(-1, 1), "y", np.float32)])

    # the same forest as TreeEnsemble (ai.onnx.ml 5): leaves are their own entries; double in, double out
    v5 = tree_v5(rf.estimators_, lambda tr, n: tr.value[n][0][0] / len(rf.estimators_))
    node = helper.make_node("TreeEnsemble", ["X"], ["y"], domain=ML, n_targets=1, aggregate_function=1, post_transform=0, **v5)
    save("rf_reg_diabetes_v5", [node], [vi("X", TensorProto.DOUBLE, [None, 10])], [vi("y", TensorProto.DOUBLE, [None, 1])],
         [t(xs, "X", np.float64)], [t(rf.predict(xs).reshape(-1, 1), "y", np.float64)], ml_opset=5)


def hgb_attrs(predictors, prefix):
    """Legacy attributes of HistGradientBoosting predictors: double thresholds, NaN routed by
    missing_go_to_left through nodes_missing_value_tracks_true."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
                         "nodes_falsenodeids", "nodes_missing_value_tracks_true", prefix + "_treeids", prefix + "_nodeids",
                         prefix + "_ids")}
    values, weights = [], []
    for ti, pred in enumerate(predictors):
        for n, node in enumerate(pred.nodes):
            leaf = bool(node["is_leaf"])
            a["nodes_treeids"].append(ti)
            a["nodes_nodeids"].append(n)
            a["nodes_featureids"].append(0 if leaf else int(node["feature_idx"]))
            a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            a["nodes_truenodeids"].append(0 if leaf else int(node["left"]))
            a["nodes_falsenodeids"].append(0 if leaf else int(node["right"]))
            a["nodes_missing_value_tracks_true"].append(0 if leaf else int(node["missing_go_to_left"]))
            values.append(0.0 if leaf else float(node["num_threshold"]))
            if leaf:
                a[prefix + "_treeids"].append(ti)
                a[prefix + "_nodeids"].append(n)
                a[prefix + "_ids"].append(0)
                weights.append(float(node["value"]))
    a["nodes_values_as_tensor"] = helper.make_tensor("nodes_values_as_tensor", TensorProto.DOUBLE, [len(values)], values)
    a[prefix + "_weights_as_tensor"] = helper.make_tensor(prefix + "_weights_as_tensor", TensorProto.DOUBLE, [len(weights)],
                                                         weights)
    return a


def hgb_models():
    """HistGradientBoosting fitted on data with missing values: NaN inputs follow each split's
    learned direction (nodes_missing_value_tracks_true)."""
    rng = np.random.RandomState(11)
    x, y, rows, _ = data("diabetes")
    x = x.copy()
    x[rng.rand(*x.shape) < 0.15] = np.nan
    xs = x[rows]
    m = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(x, y)
    a = hgb_attrs([p[0] for p in m._predictors], "target")
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain=ML, n_targets=1,
                            base_values=[float(m._baseline_prediction.ravel()[0])], **a)
    save("hgb_reg_nan_diabetes", [node], [vi("X", F, [None, 10])], [vi("y", F, [None, 1])], [t(xs, "X", np.float32)],
         [t(m.predict(xs).reshape(-1, 1), "y", np.float32)], ml_opset=3)

    x, y, rows, _ = data("breast_cancer")
    x = x.copy()
    x[rng.rand(*x.shape) < 0.15] = np.nan
    xs = x[rows]
    m = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(x, y)
    a = hgb_attrs([p[0] for p in m._predictors], "class")
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "prob"], domain=ML, classlabels_int64s=[0, 1],
                            base_values=[float(m._baseline_prediction.ravel()[0])], post_transform="LOGISTIC", **a)
    save("hgb_binary_nan_cancer", [node], [vi("X", F, [None, 30])], [vi("label", I64, [None]), vi("prob", F, [None, 2])],
         [t(xs, "X", np.float32)], [t(m.predict(xs), "label", np.int64), t(m.predict_proba(xs), "prob", np.float32)],
         ml_opset=3)


def tree_v5(trees, leaf_value):
    a = {k: [] for k in ("tree_roots", "nodes_featureids", "nodes_truenodeids", "nodes_trueleafs", "nodes_falsenodeids",
                         "nodes_falseleafs", "leaf_targetids")}
    splits, modes, weights = [], [], []
    for est in trees:
        tr = est.tree_
        node_index, leaf_index = {}, {}
        for n in range(tr.node_count):
            if tr.children_left[n] == -1:
                leaf_index[n] = len(weights)
                weights.append(leaf_value(tr, n))
                a["leaf_targetids"].append(0)
            else:
                node_index[n] = len(splits)
                splits.append(float(tr.threshold[n]))
                modes.append(0)
                a["nodes_featureids"].append(int(tr.feature[n]))
        for n in node_index:
            for side, child in (("true", tr.children_left[n]), ("false", tr.children_right[n])):
                leaf = child in leaf_index
                a["nodes_%snodeids" % side].append(leaf_index[child] if leaf else node_index[child])
                a["nodes_%sleafs" % side].append(int(leaf))
        a["tree_roots"].append(node_index[0])
    a["nodes_splits"] = helper.make_tensor("nodes_splits", TensorProto.DOUBLE, [len(splits)], splits)
    a["nodes_modes"] = helper.make_tensor("nodes_modes", TensorProto.UINT8, [len(modes)], modes)
    a["leaf_weights"] = helper.make_tensor("leaf_weights", TensorProto.DOUBLE, [len(weights)], weights)
    return a


# ---------------------------------------------------------------- preprocessing
def preprocessing_models():
    x, y, rows, _ = data("diabetes")
    xs = x[rows]
    outs, nodes, exp = [], [], []
    for norm in ("l1", "l2", "max"):
        nodes.append(helper.make_node("Normalizer", ["X"], ["y_" + norm], domain=ML, norm=norm.upper()))
        outs.append(vi("y_" + norm, F, [None, 10]))
        exp.append(t(Normalizer(norm=norm).fit(x).transform(xs), "y_" + norm, np.float32))
    b = Binarizer(threshold=0.01)
    nodes.append(helper.make_node("Binarizer", ["X"], ["y_bin"], domain=ML, threshold=0.01))
    outs.append(vi("y_bin", F, [None, 10]))
    exp.append(t(b.fit(x).transform(xs), "y_bin", np.float32))
    save("normalizer_binarizer_diabetes", nodes, [vi("X", F, [None, 10])], outs, [t(xs, "X", np.float32)], exp)

    # missing values: mean imputation, scaling, ridge regression
    rng = np.random.RandomState(3)
    xn = x.copy()
    xn[rng.rand(*xn.shape) < 0.1] = np.nan
    imp = SimpleImputer(strategy="mean").fit(xn)
    sc = StandardScaler().fit(imp.transform(xn))
    reg = Ridge(alpha=1.0).fit(sc.transform(imp.transform(xn)), y)
    nodes = [helper.make_node("Imputer", ["X"], ["xi"], domain=ML, imputed_value_floats=imp.statistics_.tolist(),
                              replaced_value_float=float("nan")),
             helper.make_node("Scaler", ["xi"], ["xs"], domain=ML, offset=sc.mean_.tolist(), scale=(1 / sc.scale_).tolist()),
             helper.make_node("LinearRegressor", ["xs"], ["y"], domain=ML, coefficients=reg.coef_.tolist(),
                              intercepts=[float(reg.intercept_)])]
    xsn = xn[rows]
    save("imputer_scaler_ridge_diabetes", nodes, [vi("X", F, [None, 10])], [vi("xi", F, [None, 10]), vi("y", F, [None, 1])],
         [t(xsn, "X", np.float32)],
         [t(imp.transform(xsn), "xi", np.float32), t(reg.predict(sc.transform(imp.transform(xsn))).reshape(-1, 1), "y", np.float32)])

    # one-hot encoding of integer columns, each with its own categories: per column
    # ArrayFeatureExtractor -> OneHotEncoder -> Reshape, joined by FeatureVectorizer
    rng = np.random.RandomState(5)
    xc = np.stack([rng.randint(0, 4, 60), rng.randint(10, 13, 60), rng.choice([-1, 7, 100, 5], 60)], 1).astype(np.int64)
    enc = OneHotEncoder(handle_unknown="ignore").fit(xc[:50])
    test = xc.copy()
    test[-1, 0] = 9                      # unseen category -> all zeros
    nodes, inits, parts, dims = [], [], [], []
    for j, cats in enumerate(enc.categories_):
        inits.append(numpy_helper.from_array(np.array([j], np.int64), "col%d" % j))
        inits.append(numpy_helper.from_array(np.array([-1, len(cats)], np.int64), "shape%d" % j))
        nodes += [helper.make_node("ArrayFeatureExtractor", ["X", "col%d" % j], ["c%d" % j], domain=ML),
                  helper.make_node("OneHotEncoder", ["c%d" % j], ["o%d" % j], domain=ML, cats_int64s=[int(c) for c in cats], zeros=1),
                  helper.make_node("Reshape", ["o%d" % j, "shape%d" % j], ["r%d" % j])]
        parts.append("r%d" % j)
        dims.append(len(cats))
    nodes.append(helper.make_node("FeatureVectorizer", parts, ["y"], domain=ML, inputdimensions=dims))
    save("onehot_int_columns", nodes, [vi("X", I64, [None, 3])], [vi("y", F, [None, sum(dims)])], [t(test, "X", np.int64)],
         [t(enc.transform(test).toarray(), "y", np.float32)], initializers=inits)

    # string categories, and a LabelEncoder both ways
    x, y, rows, d = data("iris")
    words = np.array([str(n) for n in d.target_names])[y[rows]].reshape(-1, 1)
    enc = OneHotEncoder().fit(words)
    le = LabelEncoder().fit(np.array(["virginica", "setosa", "versicolor"]))
    test = words.ravel().copy()
    test[3] = "rosa"                       # unknown: default value
    codes = np.array([le.transform([w])[0] if w in le.classes_ else -1 for w in test])
    nodes = [helper.make_node("OneHotEncoder", ["W"], ["oh"], domain=ML, cats_strings=[str(c) for c in enc.categories_[0]]),
             helper.make_node("LabelEncoder", ["S"], ["code"], domain=ML, keys_strings=[str(c) for c in le.classes_],
                              values_int64s=list(range(len(le.classes_))), default_int64=-1),
             helper.make_node("LabelEncoder", ["code"], ["back"], domain=ML, keys_int64s=list(range(len(le.classes_))),
                              values_strings=[str(c) for c in le.classes_], default_string="unknown")]
    back = np.array([le.inverse_transform([c])[0] if c >= 0 else "unknown" for c in codes])
    save("onehot_labelencoder_strings", nodes, [vi("W", S, [None, 1]), vi("S", S, [None])],
         [vi("oh", F, [None, 1, 3]), vi("code", I64, [None]), vi("back", S, [None])],
         [t(words, "W"), t(test, "S")],
         [t(enc.transform(words).toarray().reshape(-1, 1, 3), "oh", np.float32), t(codes, "code", np.int64), t(back, "back")],
         ml_opset=2)

    # DictVectorizer: a map(string, float) to a dense [1, V] row
    dv = DictVectorizer(sparse=False).fit([{"apple": 1.0, "pear": 2.0}, {"kiwi": 3.0, "plum": 0.5}, {"fig": 1.0}])
    sample = {"pear": 4.5, "fig": -2.0, "kiwi": 0.25}
    vals = helper.make_sequence("v", onnx.SequenceProto.TENSOR,
                                [numpy_helper.from_array(np.array(v, dtype=np.float32)) for v in sample.values()])
    feed = helper.make_map("X", S, [k.encode() for k in sample], vals)
    node = helper.make_node("DictVectorizer", ["X"], ["y"], domain=ML, string_vocabulary=list(dv.feature_names_))
    xin = helper.make_value_info("X", map_type(S))
    save("dict_vectorizer", [node], [xin], [vi("y", F, [1, len(dv.feature_names_)])], [feed],
         [t(dv.transform([sample]), "y", np.float32)])


def main():
    os.makedirs(OUT, exist_ok=True)
    linear_models()
    svm_models()
    tree_models()
    hgb_models()
    preprocessing_models()


if __name__ == "__main__":
    main()
