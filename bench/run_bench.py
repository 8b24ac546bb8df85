#!/usr/bin/python3
"""Latency, session creation and memory of cort against ONNX Runtime 1.30, side by side.

    /usr/bin/python3 bench/run_bench.py                       # all 10 models, threads 1 and 2, 3 rounds
    /usr/bin/python3 bench/run_bench.py --quick               # 1 round, short runs (~3 min)
    /usr/bin/python3 bench/run_bench.py --models resnet50,mlp --threads 1 --rounds 5 --markdown
    /usr/bin/python3 bench/run_bench.py --model my.onnx [--input-dir DIR] [--dim N=1]
    ORT_NODE_DIR=build/ort-avx2 /usr/bin/python3 bench/run_bench.py --isa avx2   # both at AVX2

Every measurement is a fresh process: `cort bench MODEL --json` and its ONNX Runtime twin
`node bench/ort_bench.js MODEL --json` (CPU EP, optimisation level 'all', intraOpNumThreads N,
interOpNumThreads 1), with the same inputs, runs and warm-up. The two runtimes alternate
(cort, ORT, cort, ORT, ...) and rounds go over the whole model list, so load from other
processes on a shared machine hits both alike instead of one configuration.

Per model and thread count it reports the median of the per-process median latencies of each
runtime and their ratio (cort/ORT, < 1 means cort is faster), the ratio of the best single runs
(less sensitive to load), the session-creation ratio (first session in a fresh process, ORT's
environment set-up included) and the peak-RSS ratio (ORT's RSS net of node's own, measured before
onnxruntime is loaded). It ends with the geometric mean of the latency ratios, flags every
configuration with a ratio above 1.05 and every model where cort with more threads is slower than
with fewer. Configurations whose per-process medians spread by more than 10 % are re-measured
(--retry-noisy pairs). Raw records go to build/bench/last.json.

Runs per process default to "auto": a short cort pilot per model estimates the latency and each
process then times about --target-s seconds (10 to 500 runs, the same for both runtimes).
Before timing, models with ORT's outputs stored (test_data_set_0/output_0.pb, from
bench/compare_ort.sh) are checked with `cort test --rtol 1e-3 --atol 1e-4`; a failure is flagged.
The default run takes ~5 min on an idle-ish 2-core machine, --quick under 1 min.
On an AVX-512 CPU, `--isa avx2` caps cort at its avx2 level; ORT then still runs its AVX-512
kernels unless ORT_NODE_DIR names the AVX2-only copy bench/ort_avx2_copy.py makes.
See docs/performance.md.
"""
import argparse
import json
import math
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                  "bert_encoder", "mlp", "ocr_det", "ocr_rec", "fc_head", "cnn_batch"]
# The int8 group (`--models int8`, or names from it): quantized by cort.quantization from the float
# models (bench/make_models.py --int8) into --int8-models-dir; not part of the default run.
INT8_MODELS = ["resnet50_int8_qdq", "mobilenet_v2_int8_qdq", "squeezenet1_1_int8_qdq",
               "bert_encoder_int8_dyn", "mlp_int8_dyn", "resnet50_int8_qop", "mobilenet_v2_int8_qop",
               "squeezenet1_1_int8_qop", "bert_encoder_int8_qdq", "mlp_int8_qdq"]
RATIO_LIMIT = 1.05
NOISY_SPREAD = 1.10
SCALING_TOLERANCE = 1.01   # "more threads slower" only beyond timer-level differences
CHILD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated names from bench/make_models.py (default: all 10); "
                                    "'int8' stands for the int8 group (%s)" % ", ".join(INT8_MODELS))
    p.add_argument("--isa", help="CORT_ISA for cort's processes (generic, avx2, avx512, neon): the level "
                                 "cort may use; default: the highest this CPU has (or CORT_ISA if set)")
    p.add_argument("--model", action="append", default=[], metavar="PATH",
                   help="your own model (.onnx file or folder with model.onnx); repeatable; "
                        "random inputs unless --input-dir or PATH's test_data_set_0 exists")
    p.add_argument("--input-dir", help="inputs input_K.pb for --model")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a symbolic input dim for random inputs (both runtimes)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--rounds", type=int, help="alternating rounds (default 3, --quick 1)")
    p.add_argument("--runs", default=None, help="timed runs per process, or 'auto' (default)")
    p.add_argument("--warmup", type=int, help="untimed runs after the first (default 3, --quick 1)")
    p.add_argument("--target-s", type=float, help="with --runs auto: seconds of timed runs per process "
                                                  "(default 2, --quick 0.5)")
    p.add_argument("--retry-noisy", type=int, help="extra cort/ORT pairs for configurations whose "
                                                   "per-process medians spread > 10%% (default 1, --quick 0)")
    p.add_argument("--quick", action="store_true", help="1 round, ~0.5 s per process, no retries")
    p.add_argument("--cort", default=os.path.join(REPO, "build", "bin", "cort"), help="cort binary")
    p.add_argument("--cort-args", default="", metavar="'ARGS'",
                   help="extra arguments for `cort bench`, e.g. '--provider xnnpack'")
    p.add_argument("--ort-args", default="", metavar="'ARGS'",
                   help="extra arguments for bench/ort_bench.js, e.g. '--opt extended'")
    p.add_argument("--models-dir", default=os.path.join(REPO, "build", "models"))
    p.add_argument("--int8-models-dir", default=os.path.join(REPO, "build", "models-int8"),
                   help="folder of the int8 group (written by bench/make_models.py --int8 when missing)")
    p.add_argument("--timeout", type=float, default=900, help="seconds per process (default 900)")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench", "last.json"),
                   help="raw records and summary (default build/bench/last.json)")
    p.add_argument("--no-check", dest="check", action="store_false",
                   help="skip `cort test` against ORT's outputs (done when DIR/test_data_set_0/output_0.pb exists)")
    p.add_argument("--report", metavar="FILE", help="only print the table of a saved run (--out file)")
    p.add_argument("--markdown", action="store_true", help="print the docs/performance.md table")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = p.parse_args(argv)
    a.threads = [int(t) for t in a.threads.split(",") if t.strip()]
    if not a.threads or any(t < 0 for t in a.threads):
        p.error("--threads needs non-negative integers")
    if a.rounds is None:
        a.rounds = 1 if a.quick else 3
    if a.warmup is None:
        a.warmup = 1 if a.quick else 3
    if a.target_s is None:
        a.target_s = 0.5 if a.quick else 2.0
    if a.retry_noisy is None:
        a.retry_noisy = 0 if a.quick else 1
    if a.runs in (None, "auto"):
        a.runs = None
    else:
        try:
            a.runs = int(a.runs)
        except ValueError:
            p.error("--runs needs an integer or 'auto'")
        if a.runs < 1:
            p.error("--runs must be >= 1")
    if a.rounds < 1:
        p.error("--rounds must be >= 1")
    for d in a.dim:
        if "=" not in d:
            p.error("--dim needs NAME=VALUE")
    return a


# ---- targets ----

def find_inputs(model_path):
    folder = os.path.dirname(model_path)
    ds = os.path.join(folder, "test_data_set_0")
    return ds if os.path.isfile(os.path.join(ds, "input_0.pb")) else None


def targets(a):
    """[(name, model.onnx path, input dir or None)]"""
    out = []
    names = [n for n in a.models.split(",") if n] if a.models else ([] if a.model else list(DEFAULT_MODELS))
    names = [x for n in names for x in (INT8_MODELS if n == "int8" else [n])]
    if names:
        unknown = [n for n in names if n not in DEFAULT_MODELS + INT8_MODELS]
        if unknown:
            sys.exit(f"run_bench: unknown model(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_MODELS)}, "
                     f"int8 ({', '.join(INT8_MODELS)}) (use --model PATH for your own)")
        folder = {n: a.int8_models_dir if n in INT8_MODELS else a.models_dir for n in names}

        def absent(group):
            return [n for n in group if not os.path.isfile(os.path.join(folder[n], n, "model.onnx"))
                    or not find_inputs(os.path.join(folder[n], n, "model.onnx"))]
        int8_missing = absent([n for n in names if n in INT8_MODELS])
        # the float models the missing int8 ones are quantized from
        sources = {n.split("_int8")[0] for n in int8_missing}
        missing = sorted(set(absent([n for n in names if n not in INT8_MODELS])) |
                         {f for f in sources if not os.path.isfile(os.path.join(a.models_dir, f, "model.onnx"))})
        if missing:
            log(f"== exporting {', '.join(missing)} with bench/make_models.py (~1 min for all)")
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "make_models.py"),
                            "--out", a.models_dir, "--only", ",".join(missing)], check=True)
        if int8_missing:
            log(f"== quantizing {', '.join(int8_missing)} with bench/make_models.py --int8")
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "make_models.py"), "--int8",
                            "--float-dir", a.models_dir, "--out", a.int8_models_dir,
                            "--only", ",".join(int8_missing)], check=True)
        for n in names:
            path = os.path.join(folder[n], n, "model.onnx")
            out.append((n, path, find_inputs(path)))
    for m in a.model:
        path = os.path.join(m, "model.onnx") if os.path.isdir(m) else m
        if not os.path.isfile(path):
            sys.exit(f"run_bench: --model {m}: {path} not found")
        name = os.path.basename(os.path.dirname(os.path.abspath(path))) if os.path.isdir(m) \
            else os.path.splitext(os.path.basename(path))[0]
        out.append((name, os.path.abspath(path), a.input_dir or find_inputs(path)))
    return out


# ---- one measurement = one fresh process ----

def command(a, runtime, model, input_dir, threads, runs, warmup):
    if runtime == "cort":
        cmd = [a.cort, "bench", model]
    else:
        cmd = ["node", os.path.join(REPO, "bench", "ort_bench.js"), model]
    cmd += shlex.split(a.cort_args if runtime == "cort" else a.ort_args)
    cmd += ["--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup), "--json"]
    if input_dir:
        cmd += ["--input-dir", input_dir]
    for d in a.dim:
        cmd += ["--dim", d]
    return cmd


def measure(a, runtime, model, input_dir, threads, runs, warmup):
    cmd = command(a, runtime, model, input_dir, threads, runs, warmup)
    env = dict(os.environ, **CHILD_ENV)
    if runtime == "cort" and a.isa:
        env["CORT_ISA"] = a.isa
    load_before = os.getloadavg()[0]
    t0 = time.monotonic()
    rec = {"runtime": runtime, "threads": threads, "cmd": " ".join(cmd), "load1_before": load_before,
           "cpu": CPU_MODEL, "isa": a.cort_isa if runtime == "cort" else None,
           "ort_dir": ORT_DIR if runtime == "ort" else None}
    try:
        # Through sh, which forks the benchmark: a process exec'd straight from this Python inherits
        # Python's RSS high-water mark in getrusage()'s ru_maxrss (Linux keeps it across exec), which
        # would inflate peak_rss_kb; a forked dash passes on ~1 MB instead.
        # Own process group, so a timeout ends the benchmark too, not just sh.
        p = subprocess.Popen(["/bin/sh", "-c", '"$@"; exit $?', "sh"] + cmd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        stdout, stderr = p.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        rec["error"] = f"timed out after {a.timeout:g} s"
        return rec
    rec["wall_s"] = round(time.monotonic() - t0, 3)
    rec["load1_after"] = os.getloadavg()[0]
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("{")), None)
    if p.returncode != 0 or line is None:
        err = (stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        rec["error"] = err[:300]
        return rec
    rec.update(json.loads(line))
    return rec


def pilot_runs(a, name, model, input_dir):
    """Timed runs per process for this model (same for both runtimes and all thread counts)."""
    if a.runs:
        return a.runs
    lo, hi = (5, 200) if a.quick else (10, 500)
    for runtime in ("cort", "ort"):
        r = measure(a, runtime, model, input_dir, min(a.threads), 3, 1)
        if "error" not in r:
            est = max(r["median_ms"], 1e-3)
            return int(min(hi, max(lo, round(a.target_s * 1000.0 / est))))
        log(f"   pilot {runtime} {name}: {r['error']}")
    return lo


def pair(a, name, model, input_dir, threads, runs, records, rnd):
    for runtime in ("cort", "ort"):
        r = measure(a, runtime, model, input_dir, threads, runs, a.warmup)
        r.update(model_name=name, round=rnd)
        records.append(r)
        status = r.get("error") or (f"median {r['median_ms']:.3f} ms  create {r['create_ms']:.1f} ms  "
                                    f"rss {r['peak_rss_kb'] / 1024:.0f} MB")
        log(f"   r{rnd} {name:16s} t{threads} {runtime:4s} {status}  (load {r['load1_before']:.1f})")


# ---- summary ----

def med(xs):
    return statistics.median(xs) if xs else None


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ok(records, name, threads, runtime):
    return [r for r in records if r["model_name"] == name and r["threads"] == threads
            and r["runtime"] == runtime and "error" not in r]


def spread(rs):
    m = [r["median_ms"] for r in rs]
    return max(m) / min(m) if len(m) >= 2 and min(m) > 0 else 1.0


def summarize(records, names, threads):
    rows = []
    for name in names:
        for t in threads:
            c, o = ok(records, name, t, "cort"), ok(records, name, t, "ort")
            errs = [r["error"] for r in records if r["model_name"] == name and r["threads"] == t and "error" in r]
            row = {"model": name, "threads": t, "cort_procs": len(c), "ort_procs": len(o),
                   "errors": sorted(set(errs)),
                   "cpu": "; ".join(sorted({r["cpu"] for r in c + o if r.get("cpu")})) or None,
                   "isa": "/".join(sorted({r.get("isa") or "unknown" for r in c})) or None}
            if c:
                row.update(cort_ms=med([r["median_ms"] for r in c]), cort_min_ms=min(r["min_ms"] for r in c),
                           cort_create_ms=med([r["create_ms"] for r in c]),
                           cort_rss_kb=max(r["peak_rss_kb"] for r in c), cort_spread=spread(c))
            if o:
                row.update(ort_ms=med([r["median_ms"] for r in o]), ort_min_ms=min(r["min_ms"] for r in o),
                           ort_create_ms=med([r["create_ms"] for r in o]),
                           ort_rss_kb=max(r["peak_rss_kb"] for r in o),
                           ort_net_rss_kb=max(r["peak_rss_kb"] - r.get("base_rss_kb", 0) for r in o),
                           ort_spread=spread(o))
            if c and o:
                row["ratio"] = row["cort_ms"] / row["ort_ms"]
                row["min_ratio"] = row["cort_min_ms"] / row["ort_min_ms"]
                row["create_ratio"] = row["cort_create_ms"] / row["ort_create_ms"]
                row["rss_ratio"] = row["cort_rss_kb"] / row["ort_net_rss_kb"] if row["ort_net_rss_kb"] > 0 else None
                row["rss_ratio_raw"] = row["cort_rss_kb"] / row["ort_rss_kb"]
            rows.append(row)
    flags = []
    for row in rows:
        if row.get("ratio") and row["ratio"] > RATIO_LIMIT:
            flags.append(f"{row['model']} t{row['threads']}: cort/ORT {row['ratio']:.2f} > {RATIO_LIMIT}")
        if "errors" in row and row["errors"]:
            flags.append(f"{row['model']} t{row['threads']}: errors: {'; '.join(row['errors'])}")
    for name in names:
        by_t = sorted((r["threads"], r["cort_ms"]) for r in rows if r["model"] == name and "cort_ms" in r
                      and r["threads"] > 0)
        ort_t = {r["threads"]: r["ort_ms"] for r in rows if r["model"] == name and "ort_ms" in r}
        for (t1, m1), (t2, m2) in zip(by_t, by_t[1:]):
            if m2 > m1 * SCALING_TOLERANCE:
                also = (" (ORT too, so probably the machine was busy)"
                        if t1 in ort_t and t2 in ort_t and ort_t[t2] > ort_t[t1] else "")
                flags.append(f"{name}: cort with {t2} threads ({m2:.3f} ms) is slower than with {t1} "
                             f"({m1:.3f} ms){also}")
    summary = {"geomean_ratio": gmean([r.get("ratio") for r in rows]),
               "geomean_min_ratio": gmean([r.get("min_ratio") for r in rows]),
               "geomean_create_ratio": gmean([r.get("create_ratio") for r in rows]),
               "geomean_rss_ratio": gmean([r.get("rss_ratio") for r in rows]),
               "geomean_ratio_by_threads": {str(t): gmean([r.get("ratio") for r in rows if r["threads"] == t])
                                            for t in threads},
               "flags": flags}
    return rows, summary


def fmt(x, spec, dash="—"):
    return dash if x is None else format(x, spec)


def rf(x):
    return "—" if x is None else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def ms(x):
    if x is None:
        return "—"
    return f"{x:.3g}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def table(rows, summary, markdown):
    head = ["model", "thr", "isa", "cort ms", "ORT ms", "cort/ORT", "best-run ratio", "create cort/ORT ms",
            "create ratio", "RSS cort/ORT MB", "RSS ratio", "note"]
    lines = []
    for r in rows:
        note = []
        if r.get("ratio") and r["ratio"] > RATIO_LIMIT:
            note.append("SLOWER")
        if max(r.get("cort_spread", 1), r.get("ort_spread", 1)) > NOISY_SPREAD:
            note.append(f"noisy ±{(max(r.get('cort_spread', 1), r.get('ort_spread', 1)) - 1) * 50:.0f}%")
        if r["errors"]:
            note.append("error")
        lines.append([r["model"], str(r["threads"]), r.get("isa") or "—", ms(r.get("cort_ms")), ms(r.get("ort_ms")),
                      rf(r.get("ratio")), rf(r.get("min_ratio")),
                      f"{ms(r.get('cort_create_ms'))} / {ms(r.get('ort_create_ms'))}",
                      rf(r.get("create_ratio")),
                      f"{fmt(r.get('cort_rss_kb') and r['cort_rss_kb'] / 1024, '.0f')} / "
                      f"{fmt(r.get('ort_net_rss_kb') and r['ort_net_rss_kb'] / 1024, '.0f')}",
                      rf(r.get("rss_ratio")), ", ".join(note)])
    g = summary
    geo = (f"geometric mean cort/ORT latency {fmt(g['geomean_ratio'], '.2f')} (best runs "
           f"{fmt(g['geomean_min_ratio'], '.2f')}; by threads: "
           + ", ".join(f"{t}: {fmt(v, '.2f')}" for t, v in g["geomean_ratio_by_threads"].items())
           + f"); session creation {fmt(g['geomean_create_ratio'], '.2f')}; peak RSS {fmt(g['geomean_rss_ratio'], '.2f')}")
    out = []
    cpus = sorted({r["cpu"] for r in rows if r.get("cpu")})
    if cpus:
        out += [f"CPU: {'; '.join(cpus)}", ""]
    if markdown:
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" if i < 3 or i == len(head) - 1 else "---:" for i in range(len(head))) + "|")
        out += ["| " + " | ".join(ln) + " |" for ln in lines]
        out.append("")
        out.append(f"**{geo}**")
    else:
        w = [max(len(head[i]), *(len(ln[i]) for ln in lines)) for i in range(len(head))]
        out.append("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        out += ["  ".join(c.ljust(w[i]) for i, c in enumerate(ln)) for ln in lines]
        out.append("")
        out.append(geo)
    if g["flags"]:
        out.append("")
        out.append("flags:" if not markdown else "Flags:")
        out += [("- " if markdown else "  ") + f for f in g["flags"]]
    return "\n".join(out)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return platform.processor() or "unknown"
    field = lambda k: next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith(k)), "")
    name = field("model name")
    if field("vendor_id") in ("GenuineIntel", "AuthenticAMD"):
        name += f" (family {field('cpu family')} model {field('model')})"
    return name or "unknown"


CPU_MODEL = cpu_model()
ORT_DIR = os.path.abspath(os.environ["ORT_NODE_DIR"]) if os.environ.get("ORT_NODE_DIR") else None


def cort_isa_line(a):
    """The 'isa:' line of `cort --version` under the CORT_ISA cort's processes get."""
    env = dict(os.environ)
    if a.isa:
        env["CORT_ISA"] = a.isa
    p = subprocess.run([a.cort, "--version"], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"run_bench: {a.cort} --version failed: {(p.stderr or p.stdout).strip()}")
    line = next((ln[len("isa: "):] for ln in p.stdout.splitlines() if ln.startswith("isa: ")), "unknown")
    return line, line.split()[0]


def machine(a):
    cpu = CPU_MODEL
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"cpu": cpu, "nproc": os.cpu_count(), "kernel": platform.release(),
            "cort_isa": a.cort_isa, "cort_isa_line": a.cort_isa_line, "ort_dir": ORT_DIR,
            "cort_commit": rev.stdout.strip() if rev.returncode == 0 else None}


def main(argv):
    a = parse_args(argv)
    if a.report:
        with open(a.report) as f:
            saved = json.load(f)
        names = list(dict.fromkeys(r["model"] for r in saved["rows"]))
        threads = list(dict.fromkeys(r["threads"] for r in saved["rows"]))
        rows, summary = summarize(saved["records"], names, threads)  # recomputed: current flag rules
        print(json.dumps({"machine": saved["machine"], "rows": rows, "summary": summary}, indent=1) if a.json
              else table(rows, summary, a.markdown))
        return 0
    if not os.access(a.cort, os.X_OK):
        sys.exit(f"run_bench: {a.cort} not found; build first (make) or pass --cort BIN")
    if not shutil.which("node"):
        sys.exit("run_bench: node is required for ONNX Runtime (apt-get install nodejs)")
    a.cort_isa_line, a.cort_isa = cort_isa_line(a)
    tg = targets(a)
    # installs onnxruntime-node@1.30.0 into build/ort/ on first use (see bench/ort_reference.js)
    subprocess.run(["node", "-e", f"require({json.dumps(os.path.join(REPO, 'bench', 'ort_reference.js'))}).loadOrt()"],
                   check=True)

    started = time.time()
    info = dict(machine(a), date=time.strftime("%Y-%m-%d %H:%M %Z"), load_start=os.getloadavg(),
                argv=argv, rounds=a.rounds, threads=a.threads, warmup=a.warmup)
    log(f"== {info['cpu']}; cort isa {a.cort_isa_line}")
    if ORT_DIR:
        log(f"== ORT from ORT_NODE_DIR={ORT_DIR}" +
            (" (bench/ort_avx2_copy.py: ORT's AVX2 kernels)" if os.path.basename(ORT_DIR) == "ort-avx2" else ""))
    log(f"== {len(tg)} model(s) x threads {a.threads} x {a.rounds} round(s); load average "
        f"{' '.join(f'{x:.2f}' for x in info['load_start'])} on {info['nproc']} cores")
    # A speed-up from a wrong kernel is no speed-up: check outputs against ORT's where stored
    # (bench/compare_ort.sh / ort_reference.js write them), with docs/ort_comparison.md's tolerances.
    info["check"] = {}
    for name, model, inputs in tg if a.check else []:
        # int8 outputs legitimately differ from ORT's (its AVX2 u8 x s8 path saturates, cort's is exact):
        # docs/quantization.md compares them by cosine instead.
        if name in INT8_MODELS:
            continue
        if inputs and os.path.isfile(os.path.join(inputs, "output_0.pb")):
            p = subprocess.run([a.cort, "test", "--rtol", "1e-3", "--atol", "1e-4", os.path.dirname(inputs)],
                               capture_output=True, text=True, timeout=a.timeout)
            info["check"][name] = "pass" if p.returncode == 0 else "FAIL"
            if p.returncode != 0:
                log(f"   {name}: cort's outputs differ from ORT's (cort test); its timings are flagged")
    runs = {}
    for name, model, inputs in tg:
        runs[name] = pilot_runs(a, name, model, inputs)
        log(f"   {name}: {runs[name]} runs per process")
    records = []
    for rnd in range(a.rounds):
        for name, model, inputs in tg:
            for t in a.threads:
                pair(a, name, model, inputs, t, runs[name], records, rnd)
    # Re-measure configurations whose per-process medians disagree, still as cort/ORT pairs.
    for extra in range(a.retry_noisy):
        noisy = [(n, m, i, t) for n, m, i in tg for t in a.threads
                 if a.rounds + extra > 1 and max(spread(ok(records, n, t, "cort")),
                                                 spread(ok(records, n, t, "ort"))) > NOISY_SPREAD]
        if not noisy:
            break
        log(f"== re-measuring {len(noisy)} noisy configuration(s)")
        for n, m, i, t in noisy:
            pair(a, n, m, i, t, runs[n], records, a.rounds + extra)

    names = [n for n, _, _ in tg]
    rows, summary = summarize(records, names, a.threads)
    for name, verdict in info["check"].items():
        if verdict != "pass":
            summary["flags"].insert(0, f"{name}: cort's outputs do not match ORT's (cort test) — timings not comparable")
    info.update(load_end=os.getloadavg(), elapsed_s=round(time.time() - started, 1), runs=runs)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"machine": info, "rows": rows, "summary": summary, "records": records}, f, indent=1)
    log(f"== {info['elapsed_s']:.0f} s; load average now "
        f"{' '.join(f'{x:.2f}' for x in info['load_end'])}; raw records in {a.out}")
    if a.json:
        print(json.dumps({"machine": info, "rows": rows, "summary": summary}, indent=1))
    else:
        print(table(rows, summary, a.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
