"""cort-serve against real clients: Python requests and curl over loopback.

Every endpoint, every v2 datatype in JSON and binary form, output filters, versions, dynamic
batching, bad input of every kind (each a clear 4xx and the server still up), slow clients and a
SIGTERM while requests are in flight. Results are compared with `cort run` on the same inputs.

Needs CORT_SERVE_BIN (the cort-serve binary) and CORT_BIN (the cort CLI); scripts/run_tests.sh sets
both. Run: CORT_SERVE_BIN=build/bin/cort-serve CORT_BIN=build/bin/cort python3 -m pytest tests/serve
"""
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time

import numpy as np
import onnx
import pytest
import requests
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVE = os.environ.get("CORT_SERVE_BIN", os.path.join(ROOT, "build", "bin", "cort-serve"))
CORT = os.environ.get("CORT_BIN", os.path.join(ROOT, "build", "bin", "cort"))
# under sanitizers everything is slower; timeouts scale with this
SLOW = float(os.environ.get("CORT_SERVE_TEST_SLOWDOWN", "1"))

pytestmark = pytest.mark.skipif(not os.path.exists(SERVE), reason="cort-serve not built (libmicrohttpd-dev, libjansson-dev)")

# v2 datatype -> (ONNX element type, numpy dtype)
TYPES = {
    "BOOL": (TensorProto.BOOL, np.bool_),
    "UINT8": (TensorProto.UINT8, np.uint8),
    "UINT16": (TensorProto.UINT16, np.uint16),
    "UINT32": (TensorProto.UINT32, np.uint32),
    "UINT64": (TensorProto.UINT64, np.uint64),
    "INT8": (TensorProto.INT8, np.int8),
    "INT16": (TensorProto.INT16, np.int16),
    "INT32": (TensorProto.INT32, np.int32),
    "INT64": (TensorProto.INT64, np.int64),
    "FP16": (TensorProto.FLOAT16, np.float16),
    "FP32": (TensorProto.FLOAT, np.float32),
    "FP64": (TensorProto.DOUBLE, np.float64),
    "BF16": (TensorProto.BFLOAT16, None),
    "BYTES": (TensorProto.STRING, object),
}


def save(model, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


def identity_model():
    """One Identity per datatype: x_T -> y_T, shape [N, 3]."""
    nodes, ins, outs = [], [], []
    for name, (et, _) in TYPES.items():
        ins.append(helper.make_tensor_value_info("x_" + name, et, ["N", 3]))
        outs.append(helper.make_tensor_value_info("y_" + name, et, ["N", 3]))
        nodes.append(helper.make_node("Identity", ["x_" + name], ["y_" + name]))
    g = helper.make_graph(nodes, "types", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def add_model(k):
    """y = x + k for x float [N, 4]; also z = x * 2 (a second output to filter)."""
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "k"], ["y"]), helper.make_node("Mul", ["x", "two"], ["z"])],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor("k", TensorProto.FLOAT, [], [float(k)]),
         helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def static_model():
    """x float [2, 3] (static) -> Relu."""
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "static",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def slow_model(steps=12, n=768):
    """x float [1, 1] broadcast to [n, n] and multiplied by itself `steps` times (~2 * steps * n^3
    flops; node boundaries every n^3 multiply-adds, where a cancelled run stops)."""
    nodes = [helper.make_node("Expand", ["x", "shape"], ["m0"])]
    for i in range(steps):
        nodes.append(helper.make_node("MatMul", ["m%d" % i, "m0"], ["m%d" % (i + 1)]))
    nodes.append(helper.make_node("ReduceSum", ["m%d" % steps], ["y"], keepdims=0))
    g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
                          [helper.make_tensor("shape", TensorProto.INT64, [2], [n, n])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def sequence_model():
    """An output v2 cannot carry: a sequence of tensors."""
    g = helper.make_graph([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0)], "seq",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


class Server:
    def __init__(self, args, env=None):
        self.proc = subprocess.Popen([SERVE, "--host", "127.0.0.1", "--port", "0"] + args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError("cort-serve did not start: " + line + self.proc.stderr.read())
        self.port = int(line.rsplit(":", 1)[1].split()[0])
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        out, err = self.proc.communicate()
        return self.proc.returncode, out, err


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    d = tmp_path_factory.mktemp("repo")
    save(identity_model(), str(d / "types" / "1" / "model.onnx"))
    save(add_model(1), str(d / "add" / "1" / "model.onnx"))
    save(add_model(2), str(d / "add" / "2" / "model.onnx"))
    save(static_model(), str(d / "static" / "1" / "model.onnx"))
    save(sequence_model(), str(d / "seq" / "1" / "model.onnx"))
    os.makedirs(str(d / "digits" / "1"))
    os.symlink(os.path.join(ROOT, "demo", "digits_cnn.onnx"), str(d / "digits" / "1" / "model.onnx"))
    with open(str(d / "digits" / "config"), "w") as f:
        f.write("# comment\nthreads = 1\noptimization_level = 2\n")
    return d


# Every functional test runs three times: small models' runs on the HTTP thread (the default for
# runs under 1 ms), every run through run_async (--inline-max-us 0), and that again with the polling
# threads waiting in poll(2) (--http-poll poll), where suspending and resuming a connection works
# differently inside libmicrohttpd.
@pytest.fixture(scope="module", params=["inline", "run_async", "run_async-poll"])
def server(repo, request):
    s = Server(["--model-repository", str(repo), "--max-body-bytes", "1048576", "--timeout", "2",
                "--max-elements", "1000000"] + (["--inline-max-us", "0"] if request.param != "inline" else []) +
               (["--http-poll", "poll"] if request.param.endswith("-poll") else []))
    s.inline = request.param == "inline"
    yield s
    rc, _, err = s.stop()
    assert rc == 0, err


def infer(server, model, body, version=None, **kw):
    path = "/v2/models/%s%s/infer" % (model, "/versions/" + version if version else "")
    return requests.post(server.url + path, data=json.dumps(body) if not isinstance(body, (bytes, str)) else body, **kw)


def bf16_bits(a):
    return (np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def sample(dt, rng):
    if dt == "BOOL":
        return rng.integers(0, 2, (2, 3)).astype(bool)
    if dt == "BYTES":
        return np.array([["a", "bc", ""], ["dé", "x y", "z"]], dtype=object)
    if dt in ("FP16", "FP32", "FP64"):
        return rng.standard_normal((2, 3)).astype(TYPES[dt][1])
    if dt == "BF16":
        return np.array([[1.0, -2.5, 0.15625], [3.0, 0.0078125, -7.0]], np.float32)
    info = np.iinfo(TYPES[dt][1])
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, (2, 3)).astype(TYPES[dt][1])


def test_health_and_metadata(server):
    r = requests.get(server.url + "/v2/health/live")
    assert r.status_code == 200 and r.json() == {"live": True}
    r = requests.get(server.url + "/v2/health/ready")
    assert r.status_code == 200 and r.json() == {"ready": True}
    r = requests.get(server.url + "/v2")
    meta = r.json()
    assert meta["name"] == "cort" and "binary_tensor_data" in meta["extensions"] and meta["version"]
    r = requests.get(server.url + "/v2/models/add")
    m = r.json()
    assert r.status_code == 200
    assert m["name"] == "add" and m["versions"] == ["1", "2"] and m["platform"] == "onnx_onnxv1"
    assert m["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 4]}]
    assert [o["name"] for o in m["outputs"]] == ["y", "z"]
    r = requests.get(server.url + "/v2/models/add/versions/1")
    assert r.status_code == 200 and r.json()["versions"] == ["1"]
    assert requests.get(server.url + "/v2/models/add/ready").json()["ready"] is True
    assert requests.get(server.url + "/v2/models/add/versions/2/ready").status_code == 200
    r = requests.get(server.url + "/v2/models/types")
    dts = {i["name"][2:]: i["datatype"] for i in r.json()["inputs"]}
    assert dts == {k: k for k in TYPES}


def test_every_datatype_json_and_binary(server):
    rng = np.random.default_rng(0)
    inputs_json, inputs_bin, blobs, expected = [], [], [], {}
    for dt in TYPES:
        a = sample(dt, rng)
        expected["y_" + dt] = a
        if dt == "BYTES":
            data = [s for s in a.flatten()]
            blob = b"".join(struct.pack("<I", len(s.encode())) + s.encode() for s in data)
        elif dt == "BF16":
            data = a.flatten().tolist()
            blob = bf16_bits(a).tobytes()
        elif dt == "BOOL":
            data = a.flatten().tolist()
            blob = a.astype(np.uint8).tobytes()
        else:
            data = a.tolist()   # nested form
            blob = a.tobytes()
        inputs_json.append({"name": "x_" + dt, "shape": [2, 3], "datatype": dt, "data": data})
        inputs_bin.append({"name": "x_" + dt, "shape": [2, 3], "datatype": dt, "parameters": {"binary_data_size": len(blob)}})
        blobs.append(blob)

    r = infer(server, "types", {"id": "json-1", "inputs": inputs_json})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["id"] == "json-1" and out["model_name"] == "types" and out["model_version"] == "1"
    for o in out["outputs"]:
        dt = o["datatype"]
        assert o["name"] == "y_" + dt and o["shape"] == [2, 3]
        want = expected[o["name"]]
        if dt == "BYTES":
            assert o["data"] == list(want.flatten())
        elif dt in ("FP16", "FP32", "FP64", "BF16"):
            np.testing.assert_array_equal(np.array(o["data"], np.float64), want.astype(np.float64).flatten())
        else:
            assert o["data"] == want.flatten().tolist()

    header = json.dumps({"inputs": inputs_bin, "parameters": {"binary_data_output": True}}).encode()
    r = requests.post(server.url + "/v2/models/types/infer", data=header + b"".join(blobs),
                      headers={"Inference-Header-Content-Length": str(len(header)),
                               "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    hlen = int(r.headers["Inference-Header-Content-Length"])
    meta = json.loads(r.content[:hlen])
    at = hlen
    for o, blob in zip(meta["outputs"], blobs):
        size = o["parameters"]["binary_data_size"]
        assert r.content[at:at + size] == blob, o["name"]
        at += size
    assert at == len(r.content)



def test_binary_inputs_in_place_and_copied(server):
    """Binary sections aligned for their type are used in place, the others copied: orders that put
    the same FP64/INT64/FP32 tensors at aligned and at odd offsets must answer the same bytes, and
    with a JSON header of every length mod 8 (the body buffer is padded so the binary part starts
    on a cache line; a wrong pad or offset shows up as shifted data)."""
    rng = np.random.default_rng(7)
    blobs = {}
    for dt in TYPES:
        a = sample(dt, rng)
        if dt == "BYTES":
            blobs[dt] = b"".join(struct.pack("<I", len(x.encode())) + x.encode() for x in a.flatten())
        elif dt == "BF16":
            blobs[dt] = bf16_bits(a).tobytes()
        else:
            blobs[dt] = a.tobytes()
    names = list(TYPES)
    orders = [names, names[::-1], [names[(i * 5) % len(names)] for i in range(len(names))]]
    assert all(sorted(o) == sorted(names) for o in orders)
    for order in orders:
        for pad in range(8):
            inputs = [{"name": "x_" + dt, "shape": [2, 3], "datatype": dt,
                       "parameters": {"binary_data_size": len(blobs[dt])}} for dt in order]
            header = json.dumps({"id": "p" * pad, "inputs": inputs,
                                 "outputs": [{"name": "y_" + dt, "parameters": {"binary_data": True}} for dt in order]}).encode()
            r = requests.post(server.url + "/v2/models/types/infer",
                              data=header + b"".join(blobs[dt] for dt in order),
                              headers={"Inference-Header-Content-Length": str(len(header)),
                                       "Content-Type": "application/octet-stream"})
            assert r.status_code == 200, r.text
            got = binary_outputs(r)
            for dt in order:
                assert got["y_" + dt] == blobs[dt], (order, pad, dt)


def run_cli(model, x, tmp_path):
    np.save(str(tmp_path / "x.npy"), x)
    out = tmp_path / "out"
    subprocess.run([CORT, "run", model, "--input", "image=" + str(tmp_path / "x.npy"), "--output-dir", str(out)],
                   check=True, capture_output=True)
    return np.load(str(out / "output_0.npy"))


def test_results_equal_cort_run(server, tmp_path):
    x = np.stack([np.load(os.path.join(ROOT, "demo", "samples", f)) for f in ["sample_%d.npy" % i for i in range(4)]])
    x = x.reshape(-1, 1, 8, 8).astype(np.float32)
    want = run_cli(os.path.join(ROOT, "demo", "digits_cnn.onnx"), x, tmp_path)
    body = {"inputs": [{"name": "image", "shape": list(x.shape), "datatype": "FP32", "data": x.flatten().tolist()}]}
    r = infer(server, "digits", body)
    assert r.status_code == 200, r.text
    got = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(r.json()["outputs"][0]["shape"])
    np.testing.assert_array_equal(got, want)   # 9 significant digits carry float32 exactly
    body["outputs"] = [{"name": "logits", "parameters": {"binary_data": True}}]
    r = infer(server, "digits", body)
    hlen = int(r.headers["Inference-Header-Content-Length"])
    got = np.frombuffer(r.content[hlen:], np.float32).reshape(want.shape)
    np.testing.assert_array_equal(got, want)
    # curl, the other client the issue names
    p = subprocess.run(["curl", "-s", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-",
                        server.url + "/v2/models/digits/infer"], input=json.dumps(body).encode(), capture_output=True, check=True)
    assert p.stdout.startswith(b'{"model_name":"digits"')


def test_versions_and_output_filter(server):
    x = [[1.0, 2.0, 3.0, 4.0]]
    body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": x}]}
    assert infer(server, "add", body, version="1").json()["outputs"][0]["data"] == [2.0, 3.0, 4.0, 5.0]
    assert infer(server, "add", body, version="2").json()["outputs"][0]["data"] == [3.0, 4.0, 5.0, 6.0]
    assert infer(server, "add", body).json()["model_version"] == "2"   # no version: the highest
    body["outputs"] = [{"name": "z"}]
    outs = infer(server, "add", body).json()["outputs"]
    assert [o["name"] for o in outs] == ["z"] and outs[0]["data"] == [2.0, 4.0, 6.0, 8.0]


@pytest.mark.parametrize("body,fragment", [
    ("{not json", "malformed JSON"),
    ("[1,2]", "not a JSON object"),
    ({"inputs": "x"}, "no \"inputs\" array"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64", "data": [1, 2, 3, 4]}]}, "datatype FP64 does not match the model's FP32"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP33", "data": [1, 2, 3, 4]}]}, "unknown datatype"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3]}]}, "holds 3 elements but shape needs 4"),
    ({"inputs": [{"name": "x", "shape": [1, 5], "datatype": "FP32", "data": [1, 2, 3, 4, 5]}]}, "x"),
    ({"inputs": [{"name": "x", "shape": [1 << 40, 1 << 30], "datatype": "FP32", "data": [1]}]}, "the server's limit"),
    ({"inputs": [{"name": "x", "shape": [-1, 4], "datatype": "FP32", "data": [1]}]}, "non-negative"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, "a", 4]}]}, "element 2 is not a number"),
    ({"inputs": [{"name": "q", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}, "has no input 'q'"),
    ({"inputs": []}, "input 'x' of model 'add' is missing"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}] * 2}, "inputs given but model"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}], "outputs": [{"name": "w"}]}, "no output 'w'"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "parameters": {"binary_data_size": 16}}]}, "only 0 bytes"),
    ({"id": 5, "inputs": []}, "\"id\" is not a string"),
    ({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}]}, "nested deeper"),
])
def test_bad_requests_get_400(server, body, fragment):
    r = infer(server, "add", body, version="1")
    assert r.status_code == 400, r.text
    assert fragment in r.json()["error"]
    assert requests.get(server.url + "/v2/health/live").status_code == 200


def test_static_shape_mismatch_names_input(server):
    r = infer(server, "static", {"inputs": [{"name": "x", "shape": [3, 2], "datatype": "FP32", "data": [0] * 6}]})
    assert r.status_code == 400 and "x" in r.json()["error"]
    r = infer(server, "static", {"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": [-1, 2, -3, 4, -5, 6]}]})
    assert r.json()["outputs"][0]["data"] == [0, 2, 0, 4, 0, 6]


def test_binary_errors(server):
    header = json.dumps({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "parameters": {"binary_data_size": 16}}]}).encode()
    for extra, fragment in [(b"\0" * 8, "only 8 bytes"), (b"\0" * 20, "follow the JSON but the inputs use 16")]:
        r = requests.post(server.url + "/v2/models/add/versions/1/infer", data=header + extra,
                          headers={"Inference-Header-Content-Length": str(len(header))})
        assert r.status_code == 400 and fragment in r.json()["error"], r.text
    r = requests.post(server.url + "/v2/models/add/versions/1/infer", data=header,
                      headers={"Inference-Header-Content-Length": str(len(header) + 100)})
    assert r.status_code == 400
    # BYTES binary with a length running past the end
    h = json.dumps({"inputs": [{"name": "x_BYTES", "shape": [1, 1], "datatype": "BYTES", "parameters": {"binary_data_size": 6}}]}).encode()
    r = requests.post(server.url + "/v2/models/types/infer", data=h + struct.pack("<I", 50) + b"ab",
                      headers={"Inference-Header-Content-Length": str(len(h))})
    assert r.status_code == 400 and "claims 50 bytes" in r.json()["error"]


def test_not_found_and_methods(server):
    assert requests.get(server.url + "/v2/models/nope").status_code == 404
    r = requests.get(server.url + "/v2/models/add/versions/9")
    assert r.status_code == 404 and "no version '9'" in r.json()["error"]
    assert infer(server, "nope", {"inputs": []}).status_code == 404
    assert requests.get(server.url + "/v3").status_code == 404
    assert requests.get(server.url + "/v2/models/add/infer").status_code == 405


def test_oversized_body_gets_413(server):
    r = requests.post(server.url + "/v2/models/add/infer", data=b"x" * (2 << 20))
    assert r.status_code == 413
    assert requests.get(server.url + "/v2/health/live").status_code == 200


def test_sequence_output_is_an_error(server):
    r = infer(server, "seq", {"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    assert r.status_code == 500 and "not a tensor" in r.json()["error"]


def test_slow_client_is_dropped_and_others_served(server):
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"POST /v2/models/add/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"inp")
    r = requests.get(server.url + "/v2/health/ready")   # served while the slow one stalls
    assert r.status_code == 200
    s.settimeout(30 * SLOW)
    t0 = time.time()
    data = s.recv(100)   # the server closes it after --timeout 2 s of silence
    assert data == b"" or b"HTTP/1.1" in data
    assert time.time() - t0 < 25 * SLOW
    s.close()


def test_metrics(server):
    infer(server, "add", {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}, version="1")
    r = requests.get(server.url + "/metrics")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    lines = {l.split(" ")[0]: l.split(" ")[1] for l in r.text.splitlines() if l and not l.startswith("#")}
    assert int(lines['cort_requests_total{model="add",version="1"}']) >= 1
    assert int(lines['cort_request_failures_total{model="add",version="1"}']) >= 1   # the 400s above
    assert lines['cort_request_duration_seconds_bucket{model="add",version="1",le="+Inf"}'] == \
        lines['cort_request_duration_seconds_count{model="add",version="1"}']
    inline = int(lines['cort_inline_requests_total{model="add",version="1"}'])
    assert inline >= 1 if server.inline else inline == 0


def test_connection_gauges(server):
    """cort_http_connections counts each polling thread's open connections (the share that decides
    how many requests a thread runs itself): 3 keep-alive sessions add 3, closing them takes 3 away."""
    def total():
        text = requests.get(server.url + "/metrics", headers={"Connection": "close"}).text
        return sum(int(l.split(" ")[1]) for l in text.splitlines() if l.startswith("cort_http_connections{"))

    def settle(want):
        # the server notices a closed socket (this test's earlier /metrics connections too) on its
        # next poll, so the count is watched until it reaches the value, not read once
        deadline = time.time() + 20 * SLOW
        n = total()
        while n != want and time.time() < deadline:
            time.sleep(0.05)
            n = total()
        return n

    assert settle(1) == 1   # only the /metrics request's own connection
    sessions = [requests.Session() for _ in range(3)]
    for s in sessions:
        assert s.get(server.url + "/v2/health/live").status_code == 200
    assert settle(4) == 4
    for s in sessions:
        s.close()
    assert settle(1) == 1


@pytest.mark.parametrize("path", ["inline", "run_async"])
def test_request_timeout_cancels_the_run(tmp_path, path):
    """request_timeout_ms = 1 in the slow model's config: its run (12 MatMuls of 768^2, far longer
    than 1 ms on any machine) is cancelled at a node boundary and answered 504 with the timeout in
    the message, on the HTTP thread and through run_async alike; the fast model next to it, which
    has no timeout, still answers, and so does the slow one's next request."""
    save(slow_model(), str(tmp_path / "slow" / "1" / "model.onnx"))
    with open(str(tmp_path / "slow" / "config"), "w") as f:
        f.write("request_timeout_ms = 1\n")
    save(add_model(1), str(tmp_path / "add" / "1" / "model.onnx"))
    s = Server(["--model-repository", str(tmp_path)] + (["--inline-max-us", "0"] if path == "run_async" else []))
    try:
        body = {"inputs": [{"name": "x", "shape": [1, 1], "datatype": "FP32", "data": [0.001]}]}
        for _ in range(2):
            r = infer(s, "slow", body, timeout=120 * SLOW)
            assert r.status_code == 504, r.text
            assert "request timeout of 1 ms" in r.json()["error"] and "'slow'" in r.json()["error"]
        r = infer(s, "add", {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
        assert r.status_code == 200 and r.json()["outputs"][0]["data"] == [2.0, 3.0, 4.0, 5.0]
        text = requests.get(s.url + "/metrics").text
        lines = {l.split(" ")[0]: int(float(l.split(" ")[1])) for l in text.splitlines() if l and not l.startswith("#")}
        assert lines['cort_request_timeouts_total{model="slow",version="1"}'] == 2
        assert lines['cort_request_timeouts_total{model="add",version="1"}'] == 0
        assert lines['cort_inline_requests_total{model="slow",version="1"}'] == (2 if path == "inline" else 0)
    finally:
        rc, _, err = s.stop()
    assert rc == 0, err


@pytest.mark.parametrize("poll", ["epoll", "poll"])
def test_sigterm_under_load_loses_no_request(tmp_path, poll):
    """8 keep-alive clients send requests back to back (half to a model run on the HTTP thread, half
    to one whose config sends every run through run_async) when SIGTERM arrives. Every request that
    reached the server is answered: 200, or 503 once draining; a client may only fail to connect
    afterwards (listening socket closed), never lose an answer on a connection the server took."""
    save(add_model(1), str(tmp_path / "fast" / "1" / "model.onnx"))
    save(add_model(2), str(tmp_path / "queued" / "1" / "model.onnx"))
    with open(str(tmp_path / "queued" / "config"), "w") as f:
        f.write("inline_max_us = 0\n")
    s = Server(["--model-repository", str(tmp_path), "--drain-timeout", "30", "--http-poll", poll])
    outcomes, lost = [], []
    stop = threading.Event()

    def client(i):
        model, k = ("fast", 1.0) if i % 2 == 0 else ("queued", 2.0)
        body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [float(i), 1, 2, 3]}]}
        with requests.Session() as sess:
            while not stop.is_set():
                try:
                    r = sess.post(s.url + "/v2/models/%s/infer" % model, data=json.dumps(body), timeout=60 * SLOW)
                except requests.exceptions.ConnectionError as e:
                    # refused: the server had stopped listening, nothing was sent
                    if "refused" not in str(e).lower():
                        lost.append(repr(e))
                    return
                outcomes.append(r.status_code)
                if r.status_code == 200:
                    assert r.json()["outputs"][0]["data"] == [float(i) + k, 1 + k, 2 + k, 3 + k]
                elif r.status_code != 503:
                    lost.append("status %d: %s" % (r.status_code, r.text))
                    return

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.5 * SLOW)
    answered_before = len(outcomes)
    s.proc.send_signal(signal.SIGTERM)
    try:
        rc = s.proc.wait(timeout=60 * SLOW)
    finally:
        stop.set()
        for t in threads:
            t.join()
    _, out, err = s.stop()
    assert rc == 0, err
    assert not lost, lost[:5]
    assert answered_before > 0 and outcomes.count(200) >= answered_before
    assert set(outcomes) <= {200, 503}


def test_long_runs_leave_the_http_thread(repo):
    """--inline-max-us 1: the first run is made on the HTTP thread and measured (never under 1 µs);
    from then on the model counts as long, so its runs go to run_async except every 256th request,
    which measures it again (here the second)."""
    s = Server(["--model-repository", str(repo), "--inline-max-us", "1"])
    try:
        body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
        for _ in range(10):
            r = infer(s, "add", body, version="1")
            assert r.status_code == 200 and r.json()["outputs"][0]["data"] == [2.0, 3.0, 4.0, 5.0]
        text = requests.get(s.url + "/metrics").text
        lines = {l.split(" ")[0]: int(float(l.split(" ")[1])) for l in text.splitlines() if l and not l.startswith("#")}
        assert lines['cort_requests_total{model="add",version="1"}'] == 10
        assert lines['cort_inline_requests_total{model="add",version="1"}'] == 2
    finally:
        rc, _, err = s.stop()
    assert rc == 0, err


@pytest.mark.parametrize("poll", ["epoll", "poll"])
def test_dynamic_batching_and_drain(repo, poll):
    """8 clients at once against --max-batch 8: merged into batches, each answer its own rows; a
    SIGTERM while requests wait in the batcher loses none of them."""
    s = Server(["--model-repository", str(repo), "--max-batch", "8", "--batch-delay-us", str(int(300000 * SLOW)),
                "--http-poll", poll])
    results, errors = {}, []

    def client(i):
        x = [[float(i), float(i) + 0.5, -1.0, 2.0]] * (1 + i % 3)
        try:
            r = infer(s, "add", {"id": str(i), "inputs": [{"name": "x", "shape": [len(x), 4], "datatype": "FP32", "data": x}]},
                      version="1", timeout=60 * SLOW)
            results[i] = (r.status_code, r.json())
        except Exception as e:   # noqa: BLE001 - recorded and asserted below
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.1 * SLOW)
    s.proc.send_signal(signal.SIGTERM)   # the requests are waiting for company in the batcher now
    for t in threads:
        t.join()
    rc, out, err = s.stop()
    assert rc == 0, err
    assert "stopped" in out
    assert not errors, errors
    for i, (code, body) in results.items():
        assert code == 200, body
        assert body["id"] == str(i)
        rows = 1 + i % 3
        assert body["outputs"][0]["shape"] == [rows, 4]
        assert body["outputs"][0]["data"] == [float(i) + 1, float(i) + 1.5, 0.0, 3.0] * rows
    assert len(results) == 8


def test_batching_metrics(repo):
    s = Server(["--model-repository", str(repo), "--max-batch", "16", "--batch-delay-us", str(int(200000 * SLOW))])
    try:
        threads = [threading.Thread(target=infer, args=(s, "add", {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32",
                                                                               "data": [1, 2, 3, 4]}]}), kwargs={"version": "2"})
                   for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        text = requests.get(s.url + "/metrics").text
        lines = {l.split(" ")[0]: int(float(l.split(" ")[1])) for l in text.splitlines() if l and not l.startswith("#")}
        assert lines['cort_requests_total{model="add",version="2"}'] == 6
        assert lines['cort_batched_requests_total{model="add",version="2"}'] >= 2
        assert lines['cort_batches_total{model="add",version="2"}'] < 6
    finally:
        rc, _, err = s.stop()
    assert rc == 0, err


def test_queue_full_gets_429(repo):
    s = Server(["--model-repository", str(repo), "--max-queue", "1", "--max-batch", "4",
                "--batch-delay-us", str(int(500000 * SLOW))])
    codes = []
    try:
        def one():
            r = infer(s, "add", {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}, version="1")
            codes.append(r.status_code)
        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        rc, _, err = s.stop()
    assert rc == 0, err
    assert codes.count(200) >= 1 and codes.count(429) >= 1 and set(codes) <= {200, 429}


def test_command_line_models_and_bad_repository(tmp_path):
    s = Server([os.path.join(ROOT, "demo", "digits_cnn.onnx"), "mlp=" + os.path.join(ROOT, "demo", "digits_cnn.onnx")])
    try:
        assert requests.get(s.url + "/v2/models/digits_cnn").status_code == 200
        assert requests.get(s.url + "/v2/models/mlp/versions/1").status_code == 200
    finally:
        assert s.stop()[0] == 0
    (tmp_path / "m" / "1").mkdir(parents=True)
    (tmp_path / "m" / "1" / "model.onnx").write_bytes(b"not a model")
    p = subprocess.run([SERVE, "--port", "0", "--model-repository", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "model 'm' version 1" in p.stderr
    (tmp_path / "m" / "1" / "model.onnx").unlink()
    save(static_model(), str(tmp_path / "m" / "1" / "model.onnx"))
    (tmp_path / "m" / "config").write_text("threads = lots\n")
    p = subprocess.run([SERVE, "--port", "0", "--model-repository", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "config:1: bad value 'lots' for 'threads'" in p.stderr


def test_bad_options_are_usage_errors():
    for args in (["--http-poll", "select"], ["--http-poll"], ["--http-threads", "0"], ["--max-batch", "-1"]):
        p = subprocess.run([SERVE, "--port", "0"] + args + [os.path.join(ROOT, "demo", "digits_cnn.onnx")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "usage: cort-serve" in p.stderr + p.stdout, (args, p.stderr)


# ---- the JSON fast path: data arrays scanned straight into tensors, responses written by hand ----


def single_identity_model(dt):
    """x_T -> y_T, shape [N, 3], for one datatype (the fast-path tests send one input at a time)."""
    et = TYPES[dt][0]
    g = helper.make_graph([helper.make_node("Identity", ["x_" + dt], ["y_" + dt])], "id_" + dt,
                          [helper.make_tensor_value_info("x_" + dt, et, ["N", 3])],
                          [helper.make_tensor_value_info("y_" + dt, et, ["N", 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def fast(tmp_path_factory):
    d = tmp_path_factory.mktemp("fastrepo")
    for dt in TYPES:
        save(single_identity_model(dt), str(d / ("id_" + dt) / "1" / "model.onnx"))
    save(add_model(1), str(d / "add" / "1" / "model.onnx"))
    s = Server(["--model-repository", str(d), "--max-body-bytes", "1048576", "--max-elements", "1000000"])
    yield s
    rc, _, err = s.stop()
    assert rc == 0, err


def extreme_floats32(rng, n):
    """Random float32 bit patterns (every exponent, subnormals included) and the edge values."""
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    a = bits.view(np.float32)
    a = a[np.isfinite(a)]
    edges = np.array([0.0, -0.0, 1.0, -1.0, np.finfo(np.float32).max, -np.finfo(np.float32).max,
                      np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal,
                      -np.finfo(np.float32).smallest_subnormal, 3.4028235e38, 1.1754942e-38, 16777217.0, 0.1], np.float32)
    return np.concatenate([edges, a]).astype(np.float32)


def binary_outputs(r):
    hlen = int(r.headers["Inference-Header-Content-Length"])
    meta = json.loads(r.content[:hlen])
    out, at = {}, hlen
    for o in meta["outputs"]:
        size = o["parameters"]["binary_data_size"]
        out[o["name"]] = r.content[at:at + size]
        at += size
    return out


def post_raw(server, model, text, **kw):
    return requests.post(server.url + "/v2/models/%s/infer" % model, data=text.encode(), **kw)


@pytest.mark.parametrize("spelling", ["repr", "%.9g", "%.17g", "%.6e", "%.12E"])
def test_json_fp32_values_exact(fast, spelling):
    """Every spelling reads as the correctly rounded double narrowed to float32 (what jansson's path
    and numpy give); the JSON answer reads back to the same bits."""
    rng = np.random.default_rng(7)
    a = extreme_floats32(rng, 3000)
    a = a[: len(a) // 3 * 3]
    text = [repr(float(v)) if spelling == "repr" else spelling % float(v) for v in a]
    # correctly rounded double -> float32; an integer token is a JSON integer, so "-0" is 0 (jansson's reading)
    want = np.array([np.float32(float(int(t)) if t.lstrip("-").isdigit() else float(t)) for t in text], np.float32)
    body = '{"inputs":[{"name":"x_FP32","shape":[%d,3],"datatype":"FP32","data":[%s]}],' \
           '"outputs":[{"name":"y_FP32"}]}' % (len(a) // 3, ",".join(text))
    r = post_raw(fast, "id_FP32", body)
    assert r.status_code == 200, r.text
    got = np.array(r.json()["outputs"][0]["data"], np.float64).astype(np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()   # -0 and subnormals included
    # binary output: the tensor itself, before the writer
    body = body.replace('"outputs":[{"name":"y_FP32"}]', '"outputs":[{"name":"y_FP32","parameters":{"binary_data":true}}]')
    r = post_raw(fast, "id_FP32", body)
    got = np.frombuffer(binary_outputs(r)["y_FP32"], np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def jansson_real(v, digits):
    """A real as the server writes it: printf's %.<digits>g, then a '.0' or an exponent without '+'
    or leading zeros, as jansson spells reals."""
    t = "%.*g" % (digits, v)
    if "e" in t:
        mant, ex = t.split("e")
        t = mant + "e" + ("-" if ex[0] == "-" else "") + (ex.lstrip("+-").lstrip("0") or "0")
    elif "." not in t:
        t += ".0"
    return t


def test_json_fp32_output_text(fast):
    """FP32 answers are written without printf where the value allows (a float's exact binary value
    to 9 digits, rounded half to even): the text must be printf's %.9g all the same, for every binade
    in and around that range, subnormals, zeros and values that round up to a new power of ten."""
    rng = np.random.default_rng(11)
    a = extreme_floats32(rng, 6000)
    edges = []
    for k in range(-10, 14):
        p = np.float32(10.0 ** k)
        edges += [p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf)),
                  np.float32(9.9999999e0 * 10.0 ** k), np.float32(9.99999999e0 * 10.0 ** k)]
    edges += [np.float32(2.0 ** -23), np.float32(2.0 ** 39), np.nextafter(np.float32(2.0 ** 39), np.float32(0)),
              np.float32(2.0 ** -24), np.float32(0.1), np.float32(1 / 3), np.float32(16777216.0), np.float32(123456.5)]
    a = np.concatenate([a, np.array(edges, np.float32), -np.array(edges, np.float32)])
    a = a[: len(a) // 3 * 3]
    data = ",".join(repr(float(v)) for v in a)
    body = '{"inputs":[{"name":"x_FP32","shape":[%d,3],"datatype":"FP32","data":[%s]}]}' % (len(a) // 3, data)
    r = post_raw(fast, "id_FP32", body)
    assert r.status_code == 200, r.text
    text = r.text[r.text.index('"data":[') + 8:]
    got = text[:text.index("]")].split(",")
    want = [jansson_real(float(v), 9) for v in a]
    assert len(got) == len(want)
    bad = [(g, w) for g, w in zip(got, want) if g != w]
    assert not bad, bad[:10]


def test_json_fp64_and_special_values_exact(fast):
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 1 << 63, 3000, dtype=np.int64).astype(np.uint64) | (rng.integers(0, 2, 3000).astype(np.uint64) << 63)
    a = bits.view(np.float64)
    a = np.concatenate([[0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 9007199254740993.0,
                         0.1, 123456789012345678.0], a[np.isfinite(a)]])
    a = a[: len(a) // 3 * 3]
    data = ",".join(repr(float(v)) for v in a)
    body = '{"inputs":[{"name":"x_FP64","shape":[%d,3],"datatype":"FP64","data":[%s]}],"outputs":[{"name":"y_FP64"}]}' % (len(a) // 3, data)
    r = post_raw(fast, "id_FP64", body)
    assert r.status_code == 200, r.text
    got = np.array(r.json()["outputs"][0]["data"], np.float64)
    assert got.view(np.uint64).tolist() == a.view(np.uint64).tolist()
    # NaN and infinities as the strings v2 uses, integers spelled for reals, -0 as an integer is +0
    special = '["NaN","Infinity","-Infinity",-0,-0.0,7]'
    for dt, npt in [("FP32", np.float32), ("FP64", np.float64), ("FP16", np.float16)]:
        body = '{"inputs":[{"name":"x_%s","shape":[2,3],"datatype":"%s","data":%s}],' \
               '"outputs":[{"name":"y_%s","parameters":{"binary_data":true}}]}' % (dt, dt, special, dt)
        r = post_raw(fast, "id_" + dt, body)
        assert r.status_code == 200, r.text
        got = np.frombuffer(binary_outputs(r)["y_" + dt], npt)
        assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf and got[5] == 7
        assert not np.signbit(got[3]) and np.signbit(got[4])
        r = post_raw(fast, "id_" + dt, body.replace(',"parameters":{"binary_data":true}', ""))
        assert r.json()["outputs"][0]["data"][:3] == ["NaN", "Infinity", "-Infinity"]


def test_json_integers_at_their_limits(fast):
    limits = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767), "UINT16": (0, 65535),
              "INT32": (-2 ** 31, 2 ** 31 - 1), "UINT32": (0, 2 ** 32 - 1), "INT64": (-2 ** 63, 2 ** 63 - 1), "UINT64": (0, 2 ** 63 - 1)}
    for dt, (lo, hi) in limits.items():
        data = [lo, hi, 0, lo + 1, hi - 1, 1]
        r = infer(fast, "id_" + dt, {"inputs": [{"name": "x_" + dt, "shape": [2, 3], "datatype": dt, "data": data}],
                                    "outputs": [{"name": "y_" + dt}]})
        assert r.status_code == 200, r.text
        assert r.json()["outputs"][0]["data"] == data
        for bad in (lo - 1, hi + 1):
            r = infer(fast, "id_" + dt, {"inputs": [{"name": "x_" + dt, "shape": [1, 3], "datatype": dt, "data": [0, bad, 0]}]})
            assert r.status_code == 400, (dt, bad, r.text)
            assert "element 1" in r.json()["error"] or "malformed JSON" in r.json()["error"]
    # UINT64 above 2^63 - 1 goes in binary and comes back as an exact JSON integer
    big = np.array([[2 ** 64 - 1, 2 ** 63, 5]], np.uint64)
    header = json.dumps({"inputs": [{"name": "x_UINT64", "shape": [1, 3], "datatype": "UINT64",
                                     "parameters": {"binary_data_size": 24}}], "outputs": [{"name": "y_UINT64"}]}).encode()
    r = requests.post(fast.url + "/v2/models/id_UINT64/infer", data=header + big.tobytes(),
                      headers={"Inference-Header-Content-Length": str(len(header))})
    assert r.status_code == 200 and r.json()["outputs"][0]["data"] == [2 ** 64 - 1, 2 ** 63, 5]


def test_json_nested_flat_whitespace_and_huge(fast):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    forms = [a.tolist(), a.flatten().tolist(), [a.tolist()], [[[v] for v in row] for row in a.tolist()], [[], a.tolist(), [[]]]]
    for data in forms:
        r = infer(fast, "id_FP32", {"inputs": [{"name": "x_FP32", "shape": [4, 3], "datatype": "FP32", "data": data}],
                                    "outputs": [{"name": "y_FP32"}]})
        assert r.status_code == 200, r.text
        np.testing.assert_array_equal(np.array(r.json()["outputs"][0]["data"], np.float32), a.flatten())
    text = '{ "inputs" : [ { "data" :\n [ [ 1 ,\t2,3 ]\r\n,[4 , 5, 6 ] ] , "name":"x_INT32","shape":[2,3],"datatype":"INT32"} ] }'
    r = post_raw(fast, "id_INT32", text)
    assert r.status_code == 200, r.text
    assert r.json()["outputs"][0]["data"] == [1, 2, 3, 4, 5, 6]
    # a large tensor (about 0.7 MB of JSON): every value arrives
    n = 20000
    b = rng.standard_normal((n, 3)).astype(np.float32)
    body = '{"inputs":[{"name":"x_FP32","shape":[%d,3],"datatype":"FP32","data":[%s]}],' \
           '"outputs":[{"name":"y_FP32","parameters":{"binary_data":true}}]}' % (n, ",".join("%.9g" % v for v in b.flatten()))
    assert len(body) < 1048576
    r = post_raw(fast, "id_FP32", body)
    assert r.status_code == 200, r.text
    np.testing.assert_array_equal(np.frombuffer(binary_outputs(r)["y_FP32"], np.float32), b.flatten())


@pytest.mark.parametrize("data,fragment", [
    ("[1,2,3,4,]", "malformed JSON"), ("[1,2,,4]", "malformed JSON"), ("[1 2,3,4]", "malformed JSON"),
    ("[01,2,3,4]", "malformed JSON"), ("[1.,2,3,4]", "malformed JSON"), ("[.5,2,3,4]", "malformed JSON"),
    ("[1e,2,3,4]", "malformed JSON"), ("[-,2,3,4]", "malformed JSON"), ("[+1,2,3,4]", "malformed JSON"),
    ("[0x10,2,3,4]", "malformed JSON"), ("[1.2.3,2,3,4]", "malformed JSON"), ("[NaN,2,3,4]", "malformed JSON"),
    ("[Infinity,2,3,4]", "malformed JSON"), ("[1e999,2,3,4]", "malformed JSON"), ("[1,2,3,4", "malformed JSON"),
    ("[[1,2],[3,4]]]", "malformed JSON"), ('[1,2,"nan",4]', "element 2 is not a number"),
    ("[1,2,true,4]", "element 2 is not a number"), ("[1,2,null,4]", "element 2 is not a number"),
    ("[1,2,{},4]", "element 2 is not a number"), ("[1,2,3]", "holds 3 elements but shape needs 4"),
    ("[1,2,3,4,5]", "holds 5 elements but shape needs 4"), ("[" * 18 + "1,2,3,4" + "]" * 18, "nested deeper"),
])
def test_json_malformed_numbers_get_400(fast, data, fragment):
    body = '{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":%s}]}' % data
    r = post_raw(fast, "add/versions/1", body)
    assert r.status_code == 400, r.text
    assert fragment in r.json()["error"], r.json()["error"]


def test_json_duplicate_and_odd_keys(fast):
    # a duplicate "data" key is jansson's error; an escaped key name still means "data"
    r = post_raw(fast, "add/versions/1", '{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4],"data":[1,2,3,4]}]}')
    assert r.status_code == 400 and "duplicate" in r.json()["error"], r.text
    r = post_raw(fast, "add/versions/1", '{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","d\\u0061ta":[1,2,3,4]}]}')
    assert r.status_code == 200 and r.json()["outputs"][0]["data"] == [2.0, 3.0, 4.0, 5.0], r.text
    r = post_raw(fast, "add/versions/1", '{"id":"a\\"b","inputs":[{"data":[1,2,3,4],"name":"x","shape":[1,4],"datatype":"FP32"}]}')
    assert r.status_code == 200 and r.json()["id"] == 'a"b', r.text
