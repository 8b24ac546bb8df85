#!/usr/bin/python3
"""Two cort builds (or two settings of one) side by side: A B A B ..., a fresh process each.

    /usr/bin/python3 bench/ab_cort.py --a OLD/bin/cort --b build/bin/cort --models resnet50,mlp
    /usr/bin/python3 bench/ab_cort.py --a build/bin/cort --a-env CORT_ISA=avx2 \\
                                      --b build/bin/cort --b-env CORT_ISA=avx512 --threads 1,2

For a change to cort itself (a kernel, a pass, a layout move) this is the measurement that
matters: both sides run `cort bench MODEL --json` with the same inputs, runs and warm-up, in
alternation, so load from other processes hits both alike. Per model and thread count it prints
the median of the per-process medians of each side, their ratio B/A (< 1: B is faster) and the
ratio of the per-round pairs' medians; at the end the geometric mean of B/A. Models are the
folders of bench/make_models.py (build/models/NAME). Speed against ONNX Runtime is
bench/run_bench.py's job.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                  "bert_encoder", "mlp", "ocr_det", "ocr_rec", "fc_head", "cnn_batch"]


def env_pairs(items):
    out = {}
    for it in items:
        if "=" not in it:
            sys.exit(f"ab_cort: --a-env/--b-env need NAME=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        out[k] = v
    return out


def run(binary, extra_env, model_dir, threads, runs, warmup):
    model = os.path.join(model_dir, "model.onnx")
    cmd = [binary, "bench", model, "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup),
           "--json"]
    inputs = os.path.join(model_dir, "test_data_set_0")
    if os.path.isfile(os.path.join(inputs, "input_0.pb")):
        cmd += ["--input-dir", inputs]
    env = dict(os.environ, OMP_NUM_THREADS="1", **extra_env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
    if p.returncode != 0 or line is None:
        sys.exit(f"ab_cort: {' '.join(cmd)} failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(line)["median_ms"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="cort binary A (the baseline)")
    ap.add_argument("--b", required=True, help="cort binary B")
    ap.add_argument("--a-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--b-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--models-dir", default=os.path.join(REPO, "build", "models"))
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target-s", type=float, default=1.0, help="seconds of timed runs per process")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    ea, eb = env_pairs(a.a_env), env_pairs(a.b_env)
    threads = [int(t) for t in a.threads.split(",") if t]
    rows = []
    for name in [m for m in a.models.split(",") if m]:
        mdir = os.path.join(a.models_dir, name)
        if not os.path.isfile(os.path.join(mdir, "model.onnx")):
            sys.exit(f"ab_cort: {mdir}/model.onnx not found (bench/make_models.py --only {name})")
        est = run(a.a, ea, mdir, threads[0], 3, 1)
        runs = int(min(500, max(10, round(a.target_s * 1000.0 / max(est, 1e-3)))))
        for t in threads:
            ma, mb = [], []
            for _ in range(a.rounds):
                ma.append(run(a.a, ea, mdir, t, runs, a.warmup))
                mb.append(run(a.b, eb, mdir, t, runs, a.warmup))
            pa, pb = statistics.median(ma), statistics.median(mb)
            paired = statistics.median(y / x for x, y in zip(ma, mb))
            rows.append((name, t, pa, pb, pb / pa, paired))
            print(f"{name:16s} t{t}  A {pa:9.3f} ms  B {pb:9.3f} ms  B/A {pb / pa:.3f}  paired {paired:.3f}",
                  file=sys.stderr, flush=True)
    g = math.exp(sum(math.log(r[4]) for r in rows) / len(rows))
    if a.markdown:
        print("| model | thr | A ms | B ms | B/A | paired B/A |")
        print("|---|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} |")
        print(f"\n**geometric mean B/A {g:.3f}** ({a.rounds} rounds)")
    else:
        print(f"geometric mean B/A {g:.3f} ({a.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
