#!/usr/bin/env node
// Fill a backend-test folder's expected outputs from ONNX Runtime.
//
//   node bench/ort_reference.js [--threads N] [--opt LEVEL] [--time ITERS] [--json] DIR...
//
// For each DIR (containing model.onnx and test_data_set_*/input_K.pb) this
// runs onnxruntime-node 1.30 on every data set and writes
// test_data_set_*/output_K.pb (ONNX TensorProto, raw_data, named after the
// graph output). With --time it also reports ORT's median latency over ITERS
// runs of data set 0, so cort's timings can be compared on the same machine.
// --json prints one JSON object per model instead of a text line.
// If DIR/torch_output_K.npy exists (written by make_models.py) the maximum
// difference between ORT and PyTorch is printed as a sanity check of the
// reference itself.
//
// onnxruntime-node is looked up in: $ORT_NODE_DIR, normal require(),
// REPO/build/ort; if absent it is installed into REPO/build/ort with
// `npm install --ignore-scripts onnxruntime-node@1.30.0` (the CPU binaries
// ship inside the package; the install script only fetches CUDA extras).
'use strict';

const fs = require('fs');
const path = require('path');
const { execSync } = require('child_process');

const ORT_VERSION = '1.30.0';
const REPO = path.resolve(__dirname, '..');

function loadOrt() {
  // an explicit ORT_NODE_DIR (e.g. bench/ort_avx2_copy.py's copy) is that ORT or an error, never
  // silently another one
  if (process.env.ORT_NODE_DIR) return require(path.resolve(process.env.ORT_NODE_DIR, 'node_modules', 'onnxruntime-node'));
  const candidates = ['onnxruntime-node'];
  const local = path.join(REPO, 'build', 'ort');
  candidates.push(path.join(local, 'node_modules', 'onnxruntime-node'));
  for (const c of candidates) {
    try { return require(c); } catch (e) { /* try next */ }
  }
  process.stderr.write(`onnxruntime-node not found; installing ${ORT_VERSION} into ${local}\n`);
  fs.mkdirSync(local, { recursive: true });
  if (!fs.existsSync(path.join(local, 'package.json')))
    fs.writeFileSync(path.join(local, 'package.json'), '{"name":"cort-ort-reference","private":true}\n');
  execSync(`npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@${ORT_VERSION}`,
           { cwd: local, stdio: ['ignore', process.stderr, process.stderr] });
  return require(path.join(local, 'node_modules', 'onnxruntime-node'));
}

// ---------------------------------------------------------------------------
// Minimal protobuf codec for onnx.TensorProto (only the fields tensors use).
// ---------------------------------------------------------------------------

// ONNX TensorProto.DataType -> [ort type name, typed array ctor]
const DTYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const ORT_TO_ONNX = {};
for (const [k, v] of Object.entries(DTYPES)) ORT_TO_ONNX[v[0]] = Number(k);

class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  eof() { return this.pos >= this.buf.length; }
  varint() {
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error('truncated length-delimited field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

function toInt64(v) { return BigInt.asIntN(64, v); }

// Returns { name, dims: number[], type: ort type, data: TypedArray }.
function decodeTensor(buf) {
  const r = new Reader(buf);
  const t = { name: '', dims: [], dataType: 0, raw: null, floats: [], ints: [], doubles: [] };
  const packedOrOne = (wire, fixed, readOne, sink) => {
    if (wire === 2) {
      const sub = new Reader(r.bytes());
      while (!sub.eof()) sink.push(readOne(sub));
    } else {
      sink.push(readOne(r));
    }
  };
  const f32 = (rd) => { const v = rd.buf.readFloatLE(rd.pos); rd.pos += 4; return v; };
  const f64 = (rd) => { const v = rd.buf.readDoubleLE(rd.pos); rd.pos += 8; return v; };
  const vint = (rd) => rd.varint();
  while (!r.eof()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: packedOrOne(wire, false, vint, t.dims); break;
      case 2: t.dataType = Number(r.varint()); break;
      case 4: packedOrOne(wire, true, f32, t.floats); break;
      case 5: case 7: case 11: packedOrOne(wire, false, vint, t.ints); break;
      case 8: t.name = r.bytes().toString('utf8'); break;
      case 9: t.raw = Buffer.from(r.bytes()); break;  // copy: aligned, owned
      case 10: packedOrOne(wire, true, f64, t.doubles); break;
      case 13: throw new Error('external tensor data is not supported');
      default: r.skip(wire);
    }
  }
  const info = DTYPES[t.dataType];
  if (!info) throw new Error(`unsupported tensor data_type ${t.dataType}`);
  const [type, Ctor] = info;
  const dims = t.dims.map((d) => Number(toInt64(d)));
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.raw) {
    data = new Ctor(t.raw.buffer, t.raw.byteOffset, t.raw.length / Ctor.BYTES_PER_ELEMENT);
  } else if (t.dataType === 1) {
    data = Float32Array.from(t.floats);
  } else if (t.dataType === 11) {
    data = Float64Array.from(t.doubles);
  } else if (t.dataType === 7) {
    data = BigInt64Array.from(t.ints.map(toInt64));
  } else if (t.dataType === 13) {
    data = BigUint64Array.from(t.ints.map((v) => BigInt.asUintN(64, v)));
  } else {
    // int32_data carries every small integer type, bool and float16 bits.
    data = Ctor.from(t.ints.map((v) => Number(toInt64(v))));
  }
  if (data.length !== count) throw new Error(`tensor '${t.name}' has ${data.length} elements, dims say ${count}`);
  return { name: t.name, dims, type, data };
}

function varintBytes(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}

function fieldBytes(field, payload) {
  return Buffer.concat([varintBytes((field << 3) | 2), varintBytes(payload.length), payload]);
}

// TensorProto with dims (field 1, unpacked like the proto2 Python writer),
// data_type (2), name (8) and raw_data (9).
function encodeTensor(name, type, dims, data) {
  const dataType = ORT_TO_ONNX[type];
  if (!dataType) throw new Error(`cannot encode output '${name}' of type ${type}`);
  const parts = [];
  for (const d of dims) parts.push(varintBytes(1 << 3), varintBytes(d));
  parts.push(varintBytes(2 << 3), varintBytes(dataType));
  parts.push(fieldBytes(8, Buffer.from(name, 'utf8')));
  parts.push(fieldBytes(9, Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------
// .npy reader (little-endian float32/float64 only), for the torch check.
// ---------------------------------------------------------------------------

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const body = Buffer.from(buf.subarray(start));
  if (header.includes("'<f4'")) return new Float32Array(body.buffer, body.byteOffset, body.length / 4);
  if (header.includes("'<f8'")) return new Float64Array(body.buffer, body.byteOffset, body.length / 8);
  return null;
}

// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { threads: 0, opt: 'all', time: 0, json: false, dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
    if (a === '--threads' || a === '-j') opts.threads = parseInt(next(), 10);
    else if (a === '--opt') opts.opt = next();
    else if (a === '--time') opts.time = parseInt(next(), 10);
    else if (a === '--json') opts.json = true;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else opts.dirs.push(a);
  }
  if (!opts.dirs.length) usage('no model directory given');
  if (!['disabled', 'basic', 'extended', 'layout', 'all'].includes(opts.opt)) usage(`bad --opt ${opts.opt}`);
  return opts;
}

function usage(msg) {
  if (msg) process.stderr.write(`ort_reference: ${msg}\n`);
  process.stderr.write('usage: node bench/ort_reference.js [--threads N] [--opt all|extended|basic|disabled] [--time ITERS] [--json] MODEL_DIR...\n');
  process.exit(msg ? 2 : 0);
}

function dataSets(dir) {
  return fs.readdirSync(dir).filter((d) => /^test_data_set_\d+$/.test(d)).sort()
    .map((d) => path.join(dir, d));
}

function listIndexed(dir, prefix) {
  return fs.readdirSync(dir).map((f) => new RegExp(`^${prefix}_(\\d+)\\.pb$`).exec(f)).filter(Boolean)
    .map((m) => Number(m[1])).sort((a, b) => a - b);
}

async function processDir(ort, dir, opts) {
  const modelPath = path.join(dir, 'model.onnx');
  const sessOpts = { graphOptimizationLevel: opts.opt, executionProviders: ['cpu'] };
  if (opts.threads > 0) { sessOpts.intraOpNumThreads = opts.threads; sessOpts.interOpNumThreads = 1; }
  const session = await ort.InferenceSession.create(modelPath, sessOpts);
  const name = path.basename(path.resolve(dir));
  const report = { name, outputs: [] };
  let firstFeeds = null;
  for (const ds of dataSets(dir)) {
    const feeds = {};
    const idx = listIndexed(ds, 'input');
    if (idx.length !== session.inputNames.length)
      throw new Error(`${ds}: ${idx.length} input files, model has ${session.inputNames.length} inputs`);
    idx.forEach((k, i) => {
      const t = decodeTensor(fs.readFileSync(path.join(ds, `input_${k}.pb`)));
      const inName = session.inputNames.includes(t.name) ? t.name : session.inputNames[i];
      feeds[inName] = new ort.Tensor(t.type, t.data, t.dims);
    });
    if (!firstFeeds) firstFeeds = feeds;
    const results = await session.run(feeds);
    session.outputNames.forEach((outName, k) => {
      const t = results[outName];
      fs.writeFileSync(path.join(ds, `output_${k}.pb`), encodeTensor(outName, t.type, t.dims, t.data));
      if (ds.endsWith('test_data_set_0')) {
        const o = { name: outName, dims: t.dims, type: t.type };
        const npy = path.join(dir, `torch_output_${k}.npy`);
        if (fs.existsSync(npy) && (t.type === 'float32' || t.type === 'float64')) {
          const ref = readNpy(npy);
          if (ref && ref.length === t.data.length) {
            let maxAbs = 0, maxRef = 0;
            for (let i = 0; i < ref.length; i++) {
              maxAbs = Math.max(maxAbs, Math.abs(ref[i] - t.data[i]));
              maxRef = Math.max(maxRef, Math.abs(ref[i]));
            }
            o.torchMaxAbs = maxAbs;
            o.maxAbsValue = maxRef;
          }
        }
        report.outputs.push(o);
      }
    });
  }
  if (opts.time > 0 && firstFeeds) {
    await session.run(firstFeeds);  // warm-up
    const times = [];
    for (let i = 0; i < opts.time; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(firstFeeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    report.medianMs = times[times.length >> 1];
    report.minMs = times[0];
  }
  await session.release();
  return report;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  let failed = 0;
  for (const dir of opts.dirs) {
    try {
      const r = await processDir(ort, dir, opts);
      if (opts.json) { console.log(JSON.stringify(r)); continue; }
      const outs = r.outputs.map((o) => {
        let s = `${o.name} ${o.type}[${o.dims.join(',')}]`;
        if (o.torchMaxAbs !== undefined)
          s += ` |ort-torch|max=${o.torchMaxAbs.toExponential(2)} (|y|max=${o.maxAbsValue.toPrecision(3)})`;
        return s;
      }).join('; ');
      const timing = r.medianMs !== undefined ? `  ort median ${r.medianMs.toFixed(2)} ms (min ${r.minMs.toFixed(2)})` : '';
      console.log(`${r.name}: ${outs}${timing}`);
    } catch (e) {
      failed++;
      console.error(`${dir}: ERROR ${e.message}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

// bench/ort_bench.js reuses the loader and the TensorProto codec.
module.exports = { ORT_VERSION, loadOrt, decodeTensor, encodeTensor, listIndexed };

if (require.main === module) main();
