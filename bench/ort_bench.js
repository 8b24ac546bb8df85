#!/usr/bin/env node
// ONNX Runtime's counterpart of `cort bench`: the same measurements, the same JSON keys.
//
//   node bench/ort_bench.js MODEL [--threads N] [--runs N] [--warmup N] [--input-dir DIR]
//                           [--seed S] [--dim NAME=VALUE] [--opt LEVEL] [--json] [--profile PREFIX]
//
// --profile PREFIX writes ORT's own per-node profile (PREFIX_<date>.json, every run incl. warmup);
// bench/ort_profile.py summarizes it like `cort bench --profile`.
//
// MODEL is a model.onnx file or a folder holding one. The session uses the CPU
// execution provider, graphOptimizationLevel 'all' (--opt to change),
// intraOpNumThreads N and interOpNumThreads 1 (--threads 0 leaves both at ORT's
// default). Inputs come from DIR/input_K.pb (K = input position, as in `cort
// bench`); inputs without a file get seeded random values from the declared
// type, generated exactly as `cort bench --seed S` does (splitmix64: floats
// uniform in [-1, 1), integers 0..3, bools 0/1; unknown dims take --dim or 1),
// so both runtimes see identical inputs.
//
// Timing follows cmd_bench.c: session creation, one first run, WARMUP untimed
// runs, RUNS timed runs of `await session.run(feeds)` (the public API; its
// setImmediate/promise hop is reported as js_overhead_ms so tiny models can be
// judged). peak_rss_kb is process.resourceUsage().maxRSS and includes node
// itself; base_rss_kb is the RSS before ORT was loaded, so peak - base is ORT's
// share. Keep OMP_NUM_THREADS / OPENBLAS_NUM_THREADS at 1 in the environment
// (bench/run_bench.py does) so no library starts extra threads.
'use strict';

const baseRssKb = Math.round(process.memoryUsage().rss / 1024);

const fs = require('fs');
const path = require('path');
const { ORT_VERSION, loadOrt, decodeTensor, listIndexed } = require('./ort_reference.js');

function usage(msg) {
  if (msg) process.stderr.write(`ort_bench: ${msg}\n`);
  process.stderr.write('usage: node bench/ort_bench.js MODEL [--threads N] [--runs N] [--warmup N] ' +
                       '[--input-dir DIR] [--seed S] [--dim NAME=VALUE] [--opt LEVEL] [--json] [--profile PREFIX]\n');
  process.exit(msg ? 2 : 0);
}

function parseArgs(argv) {
  const o = { model: null, threads: 0, runs: 20, warmup: 3, inputDir: null, seed: 0n, dims: {}, opt: 'all', json: false, profile: null };
  const int = (a, v, min) => {
    if (!/^\d+$/.test(v) || Number(v) < min) usage(`${a} needs an integer >= ${min}, got '${v}'`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
    if (a === '--threads') o.threads = int(a, next(), 0);
    else if (a === '--runs') o.runs = int(a, next(), 1);
    else if (a === '--warmup') o.warmup = int(a, next(), 0);
    else if (a === '--input-dir') o.inputDir = next();
    else if (a === '--seed') { const v = next(); int(a, v, 0); o.seed = BigInt(v); }
    else if (a === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(next());
      if (!m) usage('--dim needs NAME=VALUE');
      o.dims[m[1]] = Number(m[2]);
    } else if (a === '--opt') o.opt = next();
    else if (a === '--json') o.json = true;
    else if (a === '--profile') o.profile = next();
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (!o.model) o.model = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!o.model) usage('missing MODEL');
  if (!['disabled', 'basic', 'extended', 'layout', 'all'].includes(o.opt)) usage(`bad --opt ${o.opt}`);
  if (fs.existsSync(o.model) && fs.statSync(o.model).isDirectory()) o.model = path.join(o.model, 'model.onnx');
  return o;
}

// ---- cort's random inputs (tools/cort/valueio.c), bit for bit ----

const M64 = (1n << 64n) - 1n;
class SplitMix64 {
  constructor(seed) { this.state = seed & M64; }
  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & M64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
    return z ^ (z >> 31n);
  }
  unit() { return Number(this.next() >> 11n) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }  // [-1, 1)
}

const f32buf = new Float32Array(1), u32buf = new Uint32Array(f32buf.buffer);
function f32ToF16(x) {  // round to nearest even, as cort_f32_to_f16
  f32buf[0] = x;
  const b = u32buf[0], sign = (b >>> 16) & 0x8000;
  let exp = ((b >>> 23) & 0xff) - 127 + 15, mant = b & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp, half = 1 << (shift - 1);
    let h = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > half || (rest === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (exp << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return sign | h;
}

const CTORS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function randomTensor(ort, meta, dimValues, rng) {
  if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor; give it with --input-dir`);
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : (dimValues[d] ?? 1)));
  const n = dims.reduce((a, b) => a * b, 1);
  if (meta.type === 'string') {
    const data = [];
    for (let i = 0; i < n; i++) { rng.next(); data.push(`s${Number(rng.next() % 10n)}`); }
    return new ort.Tensor('string', data, dims);
  }
  const Ctor = CTORS[meta.type];
  if (!Ctor) throw new Error(`cannot generate random values of type ${meta.type} for input '${meta.name}'`);
  const data = new Ctor(n);
  for (let i = 0; i < n; i++) {
    const small = Number(rng.next() & 3n);
    switch (meta.type) {
      case 'float32': case 'float64': data[i] = rng.unit(); break;
      case 'float16': data[i] = f32ToF16(rng.unit()); break;
      case 'int64': data[i] = BigInt(small); break;
      case 'uint64': data[i] = BigInt(small); break;
      case 'bool': data[i] = small & 1; break;
      default: data[i] = small;
    }
  }
  return new ort.Tensor(meta.type, data, dims);
}

// ---- measurement ----

// onnxruntime-node initialises its OrtEnv lazily inside the first InferenceSession.create.
function initOrtEnv() {
  const key = Object.keys(require.cache).find((k) => /onnxruntime-node[\\/]dist[\\/]binding\.js$/.test(k));
  if (!key) return null;
  const t0 = nowMs();
  require.cache[key].exports.initOrt();
  return nowMs() - t0;
}

function nowMs() { return Number(process.hrtime.bigint()) / 1e6; }

function quantile(sorted, q) {  // same rule as cli_quantile
  const n = sorted.length;
  if (!n) return 0;
  if (q === 0.5) return n % 2 ? sorted[n >> 1] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  const rank = Math.min(n, Math.max(1, Math.ceil(q * n - 1e-6)));
  return sorted[rank - 1];
}

async function jsOverheadMs() {  // what the setImmediate + promise around every session.run costs
  const t = [];
  for (let i = 0; i < 200; i++) {
    const t0 = nowMs();
    await new Promise((resolve) => setImmediate(() => resolve(null)));
    t.push(nowMs() - t0);
  }
  t.sort((a, b) => a - b);
  return quantile(t, 0.5);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const sessOpts = { graphOptimizationLevel: o.opt, executionProviders: ['cpu'] };
  if (o.profile) { sessOpts.enableProfiling = true; sessOpts.profileFilePrefix = o.profile; }
  if (o.threads > 0) { sessOpts.intraOpNumThreads = o.threads; sessOpts.interOpNumThreads = 1; }

  // create_ms is what a fresh process pays for its first session, as for cort: ORT's one-time
  // environment setup (initOrt, ~90 ms on the reference machine) plus the session itself.
  // The two parts are also reported separately.
  let t0 = nowMs();
  const envInitMs = initOrtEnv();
  const session = await ort.InferenceSession.create(o.model, sessOpts);
  const createMs = nowMs() - t0;

  const feeds = {};
  const names = session.inputNames;
  if (o.inputDir) {
    if (!fs.existsSync(o.inputDir) || !fs.statSync(o.inputDir).isDirectory())
      throw new Error(`--input-dir '${o.inputDir}' is not a directory`);
    for (const k of listIndexed(o.inputDir, 'input')) {
      if (k >= names.length) continue;
      const t = decodeTensor(fs.readFileSync(path.join(o.inputDir, `input_${k}.pb`)));
      feeds[names[k]] = new ort.Tensor(t.type, t.data, t.dims);
    }
  }
  const rng = new SplitMix64(o.seed);
  session.inputMetadata.forEach((meta, k) => {
    if (!feeds[names[k]]) feeds[names[k]] = randomTensor(ort, meta, o.dims, rng);
  });

  let firstMs = 0;
  const lat = [];
  for (let r = 0; r < 1 + o.warmup + o.runs; r++) {
    t0 = nowMs();
    await session.run(feeds);
    const ms = nowMs() - t0;
    if (r === 0) firstMs = ms;
    else if (r > o.warmup) lat.push(ms);
  }
  lat.sort((a, b) => a - b);
  const peakRssKb = process.resourceUsage().maxRSS;  // kB on Linux
  const overhead = await jsOverheadMs();
  if (o.profile) session.endProfiling();
  await session.release();

  const res = {
    model: o.model, threads: o.threads, create_ms: createMs, env_init_ms: envInitMs, first_run_ms: firstMs,
    median_ms: quantile(lat, 0.5), p90_ms: quantile(lat, 0.9), min_ms: lat[0], runs: o.runs, warmup: o.warmup,
    peak_rss_kb: peakRssKb, base_rss_kb: baseRssKb, js_overhead_ms: overhead, ort_version: ORT_VERSION,
  };
  if (o.json) {
    const r4 = (x) => (typeof x === 'number' && !Number.isInteger(x) ? Number(x.toFixed(4)) : x);
    console.log(JSON.stringify(Object.fromEntries(Object.entries(res).map(([k, v]) => [k, r4(v)]))));
  } else {
    const g = (x) => x.toPrecision(4);
    console.log(`model:          ${res.model}`);
    console.log(`threads:        ${o.threads || 'default'}`);
    console.log(`session create: ${g(createMs)} ms` + (envInitMs === null ? '' : ` (ORT environment ${g(envInitMs)} ms)`));
    console.log(`first run:      ${g(firstMs)} ms`);
    console.log(`latency:        median ${g(res.median_ms)} ms, p90 ${g(res.p90_ms)} ms, min ${g(res.min_ms)} ms ` +
                `(${o.runs} runs, ${o.warmup} warmup)`);
    console.log(`peak RSS:       ${peakRssKb} kB (node alone ${baseRssKb} kB)`);
  }
}

main().catch((e) => { process.stderr.write(`ort_bench: ${e.message}\n`); process.exit(1); });
