#!/usr/bin/env node
// Runs ONNX Runtime (onnxruntime-node 1.30) on the scikit-learn test models of tests/models/ml and
// prints one JSON line per model: its tensor outputs on test_data_set_0, or the error ORT raised.
// tests/models/ml/compare_ort.py reads these lines and compares them with cort and scikit-learn.
//
//   node bench/ml_ort_outputs.js DIR...        (ORT from $ORT_NODE_DIR or REPO/build/ort)
//
// Install ORT with: npm install --ignore-scripts onnxruntime-node@1.30.0 --prefix build/ort
'use strict';

const fs = require('fs');
const path = require('path');

const REPO = path.resolve(__dirname, '..');
function loadOrt() {
  const dirs = [process.env.ORT_NODE_DIR, path.join(REPO, 'build', 'ort')].filter(Boolean);
  for (const d of dirs) {
    try { return require(path.join(d, 'node_modules', 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  return require('onnxruntime-node');
}

// TensorProto decoding: the fields numpy_helper.from_array writes (dims, data_type, name,
// raw_data, string_data) and the typed repeated fields.
function reader(buf) {
  let pos = 0;
  const varint = () => {
    let r = 0n, s = 0n;
    for (;;) { const b = buf[pos++]; r |= BigInt(b & 0x7f) << s; if (!(b & 0x80)) return r; s += 7n; }
  };
  return {
    done: () => pos >= buf.length,
    key: () => { const k = Number(varint()); return [k >> 3, k & 7]; },
    varint,
    bytes: () => { const n = Number(varint()); const b = buf.subarray(pos, pos + n); pos += n; return b; },
    skip: (w) => { if (w === 0) varint(); else if (w === 1) pos += 8; else if (w === 5) pos += 4; else if (w === 2) { const n = Number(varint()); pos += n; } },
  };
}
const TYPES = { 1: 'float32', 6: 'int32', 7: 'int64', 8: 'string', 11: 'float64' };
function decodeTensor(buf) {
  const r = reader(buf);
  const t = { dims: [], type: 0, name: '', raw: null, strings: [], f32: [], f64: [], i64: [] };
  while (!r.done()) {
    const [f, w] = r.key();
    if (f === 1) { if (w === 2) { const b = reader(r.bytes()); while (!b.done()) t.dims.push(Number(b.varint())); } else t.dims.push(Number(r.varint())); }
    else if (f === 2) t.type = Number(r.varint());
    else if (f === 6) t.strings.push(Buffer.from(r.bytes()).toString('utf8'));
    else if (f === 8) t.name = Buffer.from(r.bytes()).toString('utf8');
    else if (f === 9) t.raw = Buffer.from(r.bytes());
    else if (f === 4 && w === 2) { const b = Buffer.from(r.bytes()); for (let i = 0; i < b.length; i += 4) t.f32.push(b.readFloatLE(i)); }
    else if (f === 10 && w === 2) { const b = Buffer.from(r.bytes()); for (let i = 0; i < b.length; i += 8) t.f64.push(b.readDoubleLE(i)); }
    else if (f === 7 && w === 2) { const b = reader(r.bytes()); while (!b.done()) t.i64.push(BigInt.asIntN(64, b.varint())); }
    else r.skip(w);
  }
  return t;
}
function toOrt(ort, t) {
  const type = TYPES[t.type];
  if (!type) throw new Error(`input element type ${t.type} not handled`);
  let data;
  if (type === 'string') data = t.strings;
  else if (t.raw) {
    const C = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array }[type];
    const copy = Buffer.from(t.raw);
    data = new C(copy.buffer, copy.byteOffset, copy.length / C.BYTES_PER_ELEMENT);
  } else data = type === 'float32' ? Float32Array.from(t.f32) : type === 'float64' ? Float64Array.from(t.f64) : BigInt64Array.from(t.i64);
  return new ort.Tensor(type, data, t.dims);
}

async function main() {
  const ort = loadOrt();
  for (const dir of process.argv.slice(2)) {
    const name = path.basename(path.resolve(dir));
    const res = { model: name };
    try {
      const sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), { intraOpNumThreads: 1 });
      const feeds = {};
      sess.inputNames.forEach((n, i) => {
        feeds[n] = toOrt(ort, decodeTensor(fs.readFileSync(path.join(dir, 'test_data_set_0', `input_${i}.pb`))));
      });
      const out = await sess.run(feeds);
      res.outputs = sess.outputNames.map((n) => {
        const v = out[n];
        if (!v || !v.type) return { name: n, error: 'not a tensor' };
        return { name: n, type: v.type, dims: v.dims, data: Array.from(v.data, (x) => (typeof x === 'bigint' ? Number(x) : x)) };
      });
    } catch (e) {
      res.error = String(e.message || e).split('\n')[0];
    }
    console.log(JSON.stringify(res));
  }
}
main();
