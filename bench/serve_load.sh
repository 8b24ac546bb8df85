#!/usr/bin/env bash
# Load test of cort-serve with wrk, next to the same number of in-process run_async calls:
#
#   bench/serve_load.sh BUILD MODEL.onnx [CONNECTIONS=64] [SECONDS=30] [THREADS=1]
#   FORMAT=binary bench/serve_load.sh ...   (inputs in the binary tensor data extension; default json)
#   SERVE_ARGS="--max-batch 32" bench/serve_load.sh ...   (more cort-serve options)
#   SYMBOLIC_BATCH=1 bench/serve_load.sh ...   (serve, and run in-process, a copy of MODEL whose inputs'
#                                            and outputs' dimension 0 is symbolic, so --max-batch can merge)
#   SERVER_CPUS=1 CLIENT_CPUS=0 bench/serve_load.sh ...   (taskset: cort-serve and then the in-process
#                                            runs on SERVER_CPUS, wrk on CLIENT_CPUS, so the load
#                                            generator takes no CPU from either side)
#   ROUNDS=5 bench/serve_load.sh ...   (alternate the two sides 5 times; per-pair ratios and their median)
#   SIGTERM_AFTER=5 bench/serve_load.sh ...   (SIGTERM to cort-serve 5 s into the load: wrk's "read" or
#                                            "timeout" socket errors would be answers lost; "connect"/
#                                            "write" ones are connections refused once it stopped listening)
#
# Starts BUILD/bin/cort-serve on a free loopback port with MODEL (symbolic dimensions = 1, random
# float inputs, JSON body), runs `wrk -t1 -cCONNECTIONS -dSECONDS --latency` against its infer
# endpoint, then BUILD/bin/cort_serve_inprocess with CONNECTIONS runs in flight for SECONDS, and
# prints both. Not part of make check (docs/serving.md holds the results). Needs wrk (Debian).
set -euo pipefail
BUILD=${1:?usage: bench/serve_load.sh BUILD MODEL.onnx [CONNECTIONS] [SECONDS] [THREADS]}
MODEL=${2:?model}
CONNS=${3:-64}
SECS=${4:-30}
THREADS=${5:-1}
command -v wrk >/dev/null || { echo "serve_load.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
FORMAT=${FORMAT:-json}
if [ -n "${SYMBOLIC_BATCH:-}" ]; then
    NAME=$(basename "$MODEL" .onnx)
    [ "$NAME" = model ] && NAME=$(basename "$(dirname "$MODEL")")
    /usr/bin/python3 - "$MODEL" "$TMP/$NAME.onnx" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
init = {i.name for i in m.graph.initializer}
for v in [i for i in m.graph.input if i.name not in init] + list(m.graph.output):
    d = v.type.tensor_type.shape.dim[0]
    d.ClearField("dim_value")
    d.dim_param = "batch"
onnx.save(m, sys.argv[2])
PY
    MODEL="$TMP/$NAME.onnx"
fi
/usr/bin/python3 - "$MODEL" "$TMP" "$FORMAT" <<'PY'
import json, sys, numpy as np, onnx
from onnx import TensorProto
m = onnx.load(sys.argv[1], load_external_data=False)
init = {i.name for i in m.graph.initializer}
dt = {TensorProto.FLOAT: "FP32", TensorProto.INT64: "INT64", TensorProto.INT32: "INT32", TensorProto.DOUBLE: "FP64"}
rng = np.random.default_rng(0)
inputs, blobs = [], []
binary = sys.argv[3] == "binary"
for i in m.graph.input:
    if i.name in init:
        continue
    t = i.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
    n = int(np.prod(shape)) if shape else 1
    npt = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32, TensorProto.DOUBLE: np.float64}[t.elem_type]
    a = rng.random(n).astype(npt) if dt[t.elem_type].startswith("FP") else np.ones(n, npt)
    if binary:
        inputs.append({"name": i.name, "shape": shape, "datatype": dt[t.elem_type], "parameters": {"binary_data_size": a.nbytes}})
        blobs.append(a.tobytes())
    else:
        inputs.append({"name": i.name, "shape": shape, "datatype": dt[t.elem_type], "data": a.tolist()})
header = json.dumps({"inputs": inputs}).encode()
body = header + b"".join(blobs)
open(sys.argv[2] + "/body.bin", "wb").write(body)
extra = 'wrk.headers["Inference-Header-Content-Length"] = "%d"\n' % len(header) if binary else ""
lua = ('wrk.method = "POST"\nwrk.headers["Content-Type"] = "%s"\n%slocal f = io.open("%s/body.bin", "rb")\nwrk.body = f:read("*a")\nf:close()\n'
       % ("application/octet-stream" if binary else "application/json", extra, sys.argv[2]))
open(sys.argv[2] + "/post.lua", "w").write(lua)
print("request body: %d bytes" % len(body))
PY
NAME=$(basename "$MODEL" .onnx)
[ "$NAME" = model ] && NAME=$(basename "$(dirname "$MODEL")")
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# One cort-serve run under wrk; appends its requests/s to $TMP/serve_rates.
serve_round() {
    ${SERVER_CPUS:+taskset -c $SERVER_CPUS} "$BUILD/bin/cort-serve" --host 127.0.0.1 --port 0 --threads "$THREADS" --max-queue 100000 ${SERVE_ARGS:-} "$NAME=$MODEL" >"$TMP/serve.out" 2>&1 &
    PID=$!
    for _ in $(seq 100); do grep -q "listening on" "$TMP/serve.out" && break; sleep 0.1; done
    PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/serve.out")
    [ -n "$PORT" ] || { cat "$TMP/serve.out"; exit 1; }
    echo "== cort-serve: wrk -t1 -c$CONNS -d${SECS}s, model $NAME, $FORMAT inputs, $THREADS intra-op thread(s), CPU: $(lscpu | sed -n 's/^Model name: *//p')"
    C0=$(cpu_ticks $PID)
    if [ -n "${SIGTERM_AFTER:-}" ]; then
        (sleep "$SIGTERM_AFTER"; kill -TERM $PID) &
        wrk -t1 -c"$CONNS" -d"${SECS}s" --timeout 30s --latency -s "$TMP/post.lua" "http://127.0.0.1:$PORT/v2/models/$NAME/infer"
        wait $PID && echo "cort-serve exited 0 after SIGTERM under load"
        tail -2 "$TMP/serve.out"
        exit 0
    fi
    /usr/bin/time -f "wrk CPU: %U s user + %S s system" \
        ${CLIENT_CPUS:+taskset -c $CLIENT_CPUS} wrk -t1 -c"$CONNS" -d"${SECS}s" --timeout 30s --latency -s "$TMP/post.lua" "http://127.0.0.1:$PORT/v2/models/$NAME/infer" 2>&1 | tee "$TMP/wrk.out"
    C1=$(cpu_ticks $PID)
    # server CPU per request (user + system of the cort-serve process): on a machine shared with wrk and
    # other work this compares more fairly with the in-process CPU per run than throughput does
    REQS=$(awk '/requests in/{print $1}' "$TMP/wrk.out")
    awk -v t=$((C1 - C0)) -v hz="$(getconf CLK_TCK)" -v n="$REQS" 'BEGIN { printf "cort-serve CPU: %.2f s = %.1f us per request\n", t / hz, n ? t / hz / n * 1e6 : 0 }'
    curl -s "http://127.0.0.1:$PORT/metrics" | grep -E "^cort_(requests|request_failures|batches|batched_requests|inline_requests)_total" || true
    kill -TERM $PID
    wait $PID && echo "cort-serve exited 0 after SIGTERM"
    awk '/^Requests\/sec:/{print $2}' "$TMP/wrk.out" >> "$TMP/serve_rates"
}

# The same number of run_async calls in flight in one process; appends its runs/s to $TMP/inproc_rates.
inprocess_round() {
    echo "== in-process: $CONNS run_async calls in flight for ${SECS}s"
    ${SERVER_CPUS:+taskset -c $SERVER_CPUS} "$BUILD/bin/cort_serve_inprocess" "$MODEL" "$CONNS" "$SECS" "$THREADS" | tee "$TMP/inproc.out"
    sed -n 's/.* \([0-9.]*\) runs\/s.*/\1/p' "$TMP/inproc.out" >> "$TMP/inproc_rates"
}

# The host's speed drifts by a third over tens of seconds on shared VMs: ROUNDS > 1 alternates the
# two sides and reports the ratio of each adjacent pair and their median.
ROUNDS=${ROUNDS:-1}
for r in $(seq "$ROUNDS"); do
    [ "$ROUNDS" -gt 1 ] && echo "=== round $r of $ROUNDS"
    serve_round
    inprocess_round
done
if [ "$ROUNDS" -gt 1 ]; then
    paste "$TMP/serve_rates" "$TMP/inproc_rates" | awk '{ printf "round %d: cort-serve %.1f req/s, in-process %.1f runs/s, ratio %.3f\n", NR, $1, $2, $1 / $2 }'
    paste "$TMP/serve_rates" "$TMP/inproc_rates" | awk '{ printf "%.6f\n", $1 / $2 }' | sort -g |
        awk '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "median throughput ratio over %d rounds: %.3f\n", NR, m }'
fi
