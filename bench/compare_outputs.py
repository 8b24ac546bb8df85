#!/usr/bin/python3
"""Print the cort-vs-ONNX-Runtime error table collected by compare_ort.sh.

For each model NAME it reads

  MODELS/NAME/test_data_set_0/output_K.pb    ORT's outputs (the reference)
  MODELS/NAME/torch_output_K.npy              PyTorch's outputs (optional)
  RESULTS/NAME/out/output_K.npy|.pb           cort's outputs (`cort run --output-dir`)
  RESULTS/NAME/test.txt                       `cort test` log (PASS/FAIL line)
  RESULTS/NAME/bench.json, ort.json           latencies (optional, --time)

and prints, per output: max |cort - ort|, that error relative to max |ort|,
the worst ratio |cort - ort| / (atol + rtol*|ort|) (<= 1 means within the
tolerance `cort test` applies) and, as a yardstick, max |torch - ort|.

Usage: compare_outputs.py --models DIR --results DIR [--rtol R] [--atol A]
                          [--markdown] NAME...
"""
import argparse
import glob
import json
import os
import re

import numpy as np
import onnx
from onnx import numpy_helper


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def load_any(stem):
    if os.path.exists(stem + ".npy"):
        return np.load(stem + ".npy")
    if os.path.exists(stem + ".pb"):
        return load_pb(stem + ".pb")
    return None


def test_status(path):
    if not os.path.exists(path):
        return "not run", ""
    text = open(path, errors="replace").read()
    for line in text.splitlines():
        m = re.match(r"^(PASS|FAIL|SKIP)\b[^:]*:?\s*(.*?)(?:\s*\(\d+(?:\.\d+)? ms\))?$", line)
        if m:
            return m.group(1), m.group(2)
    last = text.strip().splitlines()[-1] if text.strip() else "no output"
    return "ERROR", last


def load_json(path, key):
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    return json.loads(line).get(key)
    except (OSError, ValueError):
        pass
    return None


def fmt(v, spec=".2e"):
    return "-" if v is None else format(v, spec)


def rows_for(name, args):
    ref_dir = os.path.join(args.models, name, "test_data_set_0")
    res_dir = os.path.join(args.results, name)
    status, reason = test_status(os.path.join(res_dir, "test.txt"))
    cort_ms = load_json(os.path.join(res_dir, "bench.json"), "median_ms")
    ort_ms = load_json(os.path.join(res_dir, "ort.json"), "medianMs")
    refs = sorted(glob.glob(os.path.join(ref_dir, "output_*.pb")),
                  key=lambda p: int(re.search(r"output_(\d+)\.pb$", p).group(1)))
    rows = []
    for ref_path in refs:
        k = int(re.search(r"output_(\d+)\.pb$", ref_path).group(1))
        ref = load_pb(ref_path).astype(np.float64)
        got = load_any(os.path.join(res_dir, "out", f"output_{k}"))
        torch_out = load_any(os.path.join(args.models, name, f"torch_output_{k}"))
        row = {"model": name, "status": status, "reason": reason, "output": k,
               "shape": "x".join(map(str, ref.shape)), "abs": None, "rel": None,
               "tol": None, "torch": None, "cort_ms": cort_ms, "ort_ms": ort_ms}
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        if got is not None and got.shape == ref.shape:
            err = np.abs(got.astype(np.float64) - ref)
            row["abs"] = float(err.max()) if err.size else 0.0
            row["rel"] = row["abs"] / scale if scale > 0 else row["abs"]
            row["tol"] = float((err / (args.atol + args.rtol * np.abs(ref))).max()) if err.size else 0.0
        elif got is not None:
            row["reason"] = f"cort output {k} has shape {list(got.shape)}, ORT {list(ref.shape)}"
        if torch_out is not None and torch_out.shape == ref.shape:
            row["torch"] = float(np.abs(torch_out.astype(np.float64) - ref).max())
        rows.append(row)
    if not rows:
        rows.append({"model": name, "status": status, "reason": reason or "no ORT reference outputs",
                     "output": "-", "shape": "-", "abs": None, "rel": None, "tol": None,
                     "torch": None, "cort_ms": cort_ms, "ort_ms": ort_ms})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()

    rows = [r for n in args.names for r in rows_for(n, args)]
    head = ["model", "cort test", "out", "shape", "max abs err", "max rel err",
            "err/tol", "ORT-torch abs", "cort ms", "ORT ms"]
    table = [[r["model"], r["status"], str(r["output"]), r["shape"], fmt(r["abs"]),
              fmt(r["rel"]), fmt(r["tol"], ".3f"), fmt(r["torch"]),
              fmt(r["cort_ms"], ".1f"), fmt(r["ort_ms"], ".1f")] for r in rows]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for t in table:
            print("| " + " | ".join(t) + " |")
    else:
        widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    notes = [(r["model"], r["reason"]) for r in rows if r["status"] != "PASS" and r["reason"]]
    seen = set()
    for model, reason in notes:
        if model not in seen:
            seen.add(model)
            print(f"\n{model}: {reason[:400]}")
    print(f"\nerr/tol = max |cort-ort| / (atol + rtol*|ort|) with rtol={args.rtol:g} "
          f"atol={args.atol:g}; <= 1 passes. max rel err = max abs err / max |ort|.")


if __name__ == "__main__":
    main()
