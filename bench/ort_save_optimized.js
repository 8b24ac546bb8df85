#!/usr/bin/env node
// Graphs as ONNX Runtime's optimizer leaves them: lets onnxruntime-node 1.30 save its optimized
// graph of each model and checks that cort runs the saved graph to ORT's output on the original.
//
//   node bench/ort_save_optimized.js [--out DIR] [--level extended|basic|all] [--rtol R] [--atol A]
//                                    [--cort PATH] MODELDIR...
//
// MODELDIR is a backend-test folder (model.onnx + test_data_set_0/input_K.pb, as written by
// bench/make_models.py or bench/make_hf_bert.py). For each one this writes
//   OUT/NAME/model.onnx                       ORT's saved graph (optimizedModelFilePath)
//   OUT/NAME/test_data_set_0/input_K.pb       the same inputs
//   OUT/NAME/test_data_set_0/output_K.pb      ORT's outputs on the ORIGINAL model
// then runs `cort run` on the saved graph (level 0, so cort's own fusions are not what is tested)
// and prints per model: the saved graph's com.microsoft ops, max |cort - ort| per output, the
// worst |cort - ort| / (atol + rtol |ort|) (<= 1 passes) and, as a yardstick, max |ORT on the
// saved graph - ORT on the original|. Exit status 1 if any model fails to load or to match.
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { loadOrt, decodeTensor, encodeTensor, listIndexed } = require('./ort_reference.js');

const REPO = path.resolve(__dirname, '..');

function parseArgs(argv) {
  const o = { out: path.join(REPO, 'build', 'ort_saved'), level: 'extended', rtol: 1e-3, atol: 1e-4,
              cort: path.join(REPO, 'build', 'bin', 'cort'), dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') o.out = argv[++i];
    else if (a === '--level') o.level = argv[++i];
    else if (a === '--rtol') o.rtol = Number(argv[++i]);
    else if (a === '--atol') o.atol = Number(argv[++i]);
    else if (a === '--cort') o.cort = argv[++i];
    else if (a.startsWith('--')) { console.error(`unknown option ${a}`); process.exit(2); }
    else o.dirs.push(a);
  }
  if (!o.dirs.length) { console.error('usage: ort_save_optimized.js [--out DIR] MODELDIR...'); process.exit(2); }
  return o;
}

async function runOrt(ort, modelPath, feedsOf, optimizedPath, level) {
  const so = { graphOptimizationLevel: level, executionProviders: ['cpu'], intraOpNumThreads: 1,
               interOpNumThreads: 1 };
  if (optimizedPath) so.optimizedModelFilePath = optimizedPath;
  const s = await ort.InferenceSession.create(modelPath, so);
  const res = await s.run(feedsOf(s));
  const outs = s.outputNames.map((n) => ({ name: n, t: res[n] }));
  await s.release();
  return outs;
}

// the saved graph's operator histogram, from `cort info`
function savedOps(cort, model) {
  try {
    const txt = execFileSync(cort, ['info', model], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = txt.split('\n');
    const at = lines.findIndex((l) => l.startsWith('operators'));
    const ops = [];
    for (let i = at + 1; at >= 0 && i < lines.length && /^\s+\S+\s+\d+$/.test(lines[i]); i++) {
      const [op, n] = lines[i].trim().split(/\s+/);
      ops.push(`${op}x${n}`);
    }
    return ops.join(' ');
  } catch (e) { return `(cort info failed: ${(e.stderr || e.message).toString().split('\n')[0]})`; }
}

function maxErr(got, want, rtol, atol) {
  let abs = 0, ratio = 0, ymax = 0;
  for (let i = 0; i < want.length; i++) {
    const g = Number(got[i]), w = Number(want[i]), d = Math.abs(g - w);
    if (Number.isNaN(d)) return { abs: NaN, ratio: Infinity, ymax };
    abs = Math.max(abs, d);
    ymax = Math.max(ymax, Math.abs(w));
    ratio = Math.max(ratio, d / (atol + rtol * Math.abs(w)));
  }
  return { abs, ratio, ymax };
}

async function processDir(ort, dir, o) {
  const name = path.basename(path.resolve(dir));
  const odir = path.join(o.out, name), ds = path.join(odir, 'test_data_set_0');
  fs.mkdirSync(ds, { recursive: true });
  const src = path.join(dir, 'test_data_set_0');
  const inputs = listIndexed(src, 'input').map((k) => {
    const buf = fs.readFileSync(path.join(src, `input_${k}.pb`));
    fs.writeFileSync(path.join(ds, `input_${k}.pb`), buf);
    return decodeTensor(buf);
  });
  const feedsOf = (s) => {
    const f = {};
    inputs.forEach((t, i) => {
      const n = s.inputNames.includes(t.name) ? t.name : s.inputNames[i];
      f[n] = new ort.Tensor(t.type, t.data, t.dims);
    });
    return f;
  };
  const saved = path.join(odir, 'model.onnx');
  const ref = await runOrt(ort, path.join(dir, 'model.onnx'), feedsOf, null, 'disabled');
  const ortSaved = await runOrt(ort, path.join(dir, 'model.onnx'), feedsOf, saved, o.level);
  ref.forEach((r, k) => fs.writeFileSync(path.join(ds, `output_${k}.pb`),
                                         encodeTensor(r.name, r.t.type, r.t.dims, r.t.data)));
  const rep = { name, ops: savedOps(o.cort, saved), outputs: [], ok: true };
  const cdir = path.join(odir, 'cort_out');
  fs.rmSync(cdir, { recursive: true, force: true });
  try {
    execFileSync(o.cort, ['run', saved, '--input-dir', ds, '--output-dir', cdir, '--output-format', 'pb',
                          '--optimization', '0', '--threads', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    rep.ok = false;
    rep.error = (e.stderr || e.message).toString().trim().split('\n').slice(-1)[0];
    return rep;
  }
  ref.forEach((r, k) => {
    const got = decodeTensor(fs.readFileSync(path.join(cdir, `output_${k}.pb`)));
    const e = maxErr(got.data, r.t.data, o.rtol, o.atol);
    const eo = maxErr(ortSaved[k].t.data, r.t.data, o.rtol, o.atol);
    const shapeOk = got.dims.join(',') === r.t.dims.join(',');
    rep.outputs.push({ name: r.name, dims: r.t.dims, maxAbs: e.abs, ratio: e.ratio, ymax: e.ymax,
                       ortSavedMaxAbs: eo.abs, shapeOk });
    if (!shapeOk || !(e.ratio <= 1)) rep.ok = false;
  });
  return rep;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  let bad = 0;
  for (const dir of o.dirs) {
    let r;
    try { r = await processDir(ort, dir, o); } catch (e) { r = { name: dir, ok: false, error: e.message, outputs: [] }; }
    if (!r.ok) bad++;
    const outs = r.outputs.map((x) => `${x.name}[${x.dims.join(',')}] max|cort-ort|=${x.maxAbs.toExponential(2)} ` +
      `tol-ratio=${x.ratio.toFixed(3)} |y|max=${x.ymax.toPrecision(3)} max|ortSaved-ort|=${x.ortSavedMaxAbs.toExponential(2)}` +
      (x.shapeOk ? '' : ' SHAPE MISMATCH')).join('; ');
    console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name}: ${r.error ? 'ERROR ' + r.error : outs}`);
    if (r.ops) console.log(`     saved ops: ${r.ops}`);
  }
  console.log(`${o.dirs.length - bad} passed, ${bad} failed`);
  process.exit(bad ? 1 : 0);
}

main();
