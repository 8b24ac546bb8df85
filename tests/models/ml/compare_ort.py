#!/usr/bin/python3
"""Compares cort and ONNX Runtime on the scikit-learn models of this folder, both against
scikit-learn's predictions (the stored expected outputs). Prints a Markdown table (docs/ml.md).

    node bench/ml_ort_outputs.js tests/models/ml/*/ > ort.jsonl
    CORT_LIBRARY=build/lib/libcort.so PYTHONPATH=python /usr/bin/python3 tests/models/ml/compare_ort.py ort.jsonl
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import cort

HERE = os.path.dirname(os.path.abspath(__file__))


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def diff(got, want):
    """(max |got - want| / (1 + |want|), mismatching elements for strings/ints) of one output."""
    got, want = np.asarray(got), np.asarray(want)
    if got.size != want.size:
        return "shape %s vs %s" % (list(got.shape), list(want.shape))
    if want.dtype.kind in "OSU" or want.dtype.kind in "iu":
        g = [x.decode() if isinstance(x, bytes) else x for x in got.ravel().tolist()]
        w = [x.decode() if isinstance(x, bytes) else x for x in want.ravel().tolist()]
        bad = sum(a != b for a, b in zip(g, w))
        return "labels equal" if not bad else "%d labels differ" % bad
    e = np.max(np.abs(got.ravel().astype(np.float64) - want.ravel()) / (1 + np.abs(want.ravel())))
    return "%.1e" % e


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    print("| model | output | cort vs sklearn | ORT 1.30 vs sklearn |")
    print("|---|---|---|---|")
    for r in rows:
        d = os.path.join(HERE, r["model"])
        so = cort.SessionOptions()
        so.intra_op_num_threads = 1
        s = cort.InferenceSession(os.path.join(d, "model.onnx"), so)
        if r["model"] == "dict_vectorizer":
            feeds = None
        else:
            feeds = {i.name: load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k))
                     for k, i in enumerate(s.get_inputs())}
        outs = s.run(None, feeds) if feeds is not None else None
        for k, o in enumerate(s.get_outputs()):
            exp_path = os.path.join(d, "test_data_set_0", "output_%d.pb" % k)
            if o.type.startswith("seq"):
                cort_d, ort_d = "(seq(map); cort test checks it)", "not supported by onnxruntime-node"
            else:
                want = load_pb(exp_path)
                cort_d = diff(outs[k], want) if outs is not None else "(map input; cort test checks it)"
                if "error" in r:
                    ort_d = "fails: " + r["error"][-90:]
                else:
                    oo = r["outputs"][k]
                    ort_d = diff(np.array(oo["data"]).reshape(oo["dims"]), want) if "data" in oo else oo.get("error")
            print("| %s | %s | %s | %s |" % (r["model"], o.name, cort_d, ort_d))


if __name__ == "__main__":
    main()
