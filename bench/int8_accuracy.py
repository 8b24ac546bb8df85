#!/usr/bin/python3
"""How far cort's fast int8 path is from the graph's exact meaning, and from float.

For each int8 model of bench/make_models.py --int8 (build/models-int8/NAME) this runs
`cort run` on test_data_set_0 twice:

  fast   the default: optimization level 2 (QDQ fusion, integer kernels), the highest
         ISA level of this CPU (or --isa), AMX where the CPU has it
  exact  optimization level 0 at the generic ISA level: every QuantizeLinear,
         DequantizeLinear and QLinear* node as the graph writes it, in plain C

and prints cosine similarities between them, against ONNX Runtime's output for the
same int8 model (test_data_set_0/output_K.pb written by bench/ort_reference.js) and
against ONNX Runtime's output for the float model the int8 one was made from
(build/models/FLOAT/test_data_set_0).  Issue 21 asks for fast-vs-exact >= 0.99 on
every model and cort-vs-float no lower than ORT-vs-float (here: within 1e-3, the
spread of two exact evaluations).  Exit status 1 if a model misses either.

Usage: int8_accuracy.py [--cort build/bin/cort] [--isa LEVEL] [--threads N] [--markdown]
                        [NAME...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INT8 = ["resnet50_int8_qdq", "mobilenet_v2_int8_qdq", "squeezenet1_1_int8_qdq",
        "bert_encoder_int8_dyn", "mlp_int8_dyn", "resnet50_int8_qop",
        "mobilenet_v2_int8_qop", "squeezenet1_1_int8_qop", "bert_encoder_int8_qdq",
        "mlp_int8_qdq"]


def float_name(name):
    return name.split("_int8_")[0]


def outputs_of(folder, count):
    out = []
    for k in range(count):
        for ext in (".npy", ".pb"):
            p = os.path.join(folder, "output_%d%s" % (k, ext))
            if os.path.exists(p):
                out.append(np.load(p) if ext == ".npy" else numpy_helper.to_array(onnx.load_tensor(p)))
                break
        else:
            return None
    return out


def cosine(a, b):
    if a is None or b is None:
        return float("nan")
    x = np.concatenate([np.asarray(v, np.float64).ravel() for v in a])
    y = np.concatenate([np.asarray(v, np.float64).ravel() for v in b])
    if x.shape != y.shape:
        return float("nan")
    den = np.linalg.norm(x) * np.linalg.norm(y)
    if den == 0:
        return 1.0 if np.array_equal(x, y) else 0.0
    return float(np.dot(x, y) / den)


def max_abs(a, b):
    if a is None or b is None:
        return float("nan")
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64))))
               if np.size(x) else 0.0 for x, y in zip(a, b))


def run_cort(cort, model_dir, out_dir, env_isa, opt, threads):
    env = dict(os.environ)
    if env_isa:
        env["CORT_ISA"] = env_isa
    cmd = [cort, "run", os.path.join(model_dir, "model.onnx"),
           "--input-dir", os.path.join(model_dir, "test_data_set_0"),
           "--output-dir", out_dir, "--optimization", str(opt), "--threads", str(threads)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), r.stderr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cort", default=os.path.join(REPO, "build/bin/cort"))
    ap.add_argument("--isa", default=None, help="CORT_ISA of the fast run")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--int8-dir", default=os.path.join(REPO, "build/models-int8"))
    ap.add_argument("--float-dir", default=os.path.join(REPO, "build/models"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    names = args.names or INT8
    rows = []
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            mdir = os.path.join(args.int8_dir, name)
            n_out = len(onnx.load(os.path.join(mdir, "model.onnx"),
                                  load_external_data=False).graph.output)
            fast_dir = os.path.join(tmp, name, "fast")
            exact_dir = os.path.join(tmp, name, "exact")
            run_cort(args.cort, mdir, fast_dir, args.isa, 2, args.threads)
            run_cort(args.cort, mdir, exact_dir, "generic", 0, 1)
            fast = outputs_of(fast_dir, n_out)
            exact = outputs_of(exact_dir, n_out)
            ort8 = outputs_of(os.path.join(mdir, "test_data_set_0"), n_out)
            flt = outputs_of(os.path.join(args.float_dir, float_name(name), "test_data_set_0"),
                             n_out)
            row = (name, cosine(fast, exact), max_abs(fast, exact), cosine(fast, flt),
                   cosine(exact, flt), cosine(ort8, flt), cosine(fast, ort8))
            # NaN comparisons are False, so a missing output counts as a failure too.
            # Two exact evaluations of a deep int8 net differ where a requantization lands
            # on a rounding tie (fixed point against float32 scales); 1e-3 of cosine is
            # that spread on resnet50, not a loss of accuracy.
            ok = row[1] >= 0.99 and row[3] >= row[5] - 1e-3
            bad += not ok
            rows.append(row + ("" if ok else "FAIL",))
    head = ["model", "fast vs exact (cos)", "max abs(fast - exact)", "cort fast vs float",
            "cort exact vs float", "ORT int8 vs float", "cort fast vs ORT int8", ""]
    if args.markdown:
        print("| " + " | ".join(head[:-1]) + " |")
        print("|" + "---|" * (len(head) - 1))
        for r in rows:
            print("| %s | %.6f | %.3g | %.5f | %.5f | %.5f | %.5f |%s" % (r[:7] + (
                (" " + r[7]) if r[7] else "",)))
    else:
        for r in rows:
            print("%-24s fast/exact %.6f (max %.3g)  vs float: cort %.5f exact %.5f ORT %.5f"
                  "  cort/ORT %.5f %s" % r)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
