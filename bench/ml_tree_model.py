#!/usr/bin/python3
"""A big tree ensemble for timing TreeEnsembleRegressor: a scikit-learn random forest (100 trees,
depth <= 12, 20 features) on make_regression data, converted like tests/models/ml, with a batch of
ROWS inputs in OUT/input_0.pb.

    /usr/bin/python3 bench/ml_tree_model.py OUT [ROWS]
    build/bin/cort bench OUT/model.onnx --input-dir OUT --threads 1
    node bench/ort_bench.js OUT/model.onnx --input-dir OUT --threads 1
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models", "ml"))
from make_ml_models import tree_attrs  # noqa: E402

out = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
x, y = make_regression(n_samples=20000, n_features=20, noise=5.0, random_state=0)
x = x.astype(np.float32)
rf = RandomForestRegressor(n_estimators=100, max_depth=12, random_state=0, n_jobs=1).fit(x, y)
a = tree_attrs(rf.estimators_, lambda ti, tr, n: [(0, tr.value[n][0][0])], False, "target")
node = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain="ai.onnx.ml", n_targets=1,
                        aggregate_function="AVERAGE", **a)
g = helper.make_graph([node], "rf", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 20])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
m.ir_version = 8
os.makedirs(out, exist_ok=True)
onnx.save(m, os.path.join(out, "model.onnx"))
with open(os.path.join(out, "input_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(x[:rows], "X").SerializeToString())
pred = rf.predict(x[:rows])
np.save(os.path.join(out, "sklearn_pred.npy"), pred)
print("nodes", sum(e.tree_.node_count for e in rf.estimators_), "rows", rows)
