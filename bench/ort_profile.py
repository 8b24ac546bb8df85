#!/usr/bin/env python3
"""Summarize an ONNX Runtime profile (ort_bench.js --profile PREFIX) like `cort bench --profile`:
time per op type and the slowest nodes, per run, skipping the first SKIP runs (first run + warmup).

    /usr/bin/python3 bench/ort_profile.py PREFIX_*.json [--skip 4] [--top 15]
"""
import argparse, json, collections

ap = argparse.ArgumentParser()
ap.add_argument('profile')
ap.add_argument('--skip', type=int, default=4, help='runs to ignore at the start (first run + warmup)')
ap.add_argument('--top', type=int, default=15)
a = ap.parse_args()
ev = json.load(open(a.profile))
runs = [e for e in ev if e.get('cat') == 'Session' and e.get('name') == 'model_run']
runs.sort(key=lambda e: e['ts'])
if len(runs) <= a.skip:
    raise SystemExit('profile holds %d runs, nothing left after --skip %d' % (len(runs), a.skip))
start = runs[a.skip]['ts']
n = len(runs) - a.skip
by_type, by_node = collections.defaultdict(float), collections.defaultdict(float)
types_of = {}
for e in ev:
    if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time') or e['ts'] < start:
        continue
    node = e['name'][:-len('_kernel_time')]
    op = e.get('args', {}).get('op_name', '?')
    by_type[op] += e['dur'] / 1000.0 / n
    by_node[node] += e['dur'] / 1000.0 / n
    types_of[node] = op
total = sum(by_type.values())
run_ms = sorted(r['dur'] / 1000.0 for r in runs[a.skip:])[n // 2]
print('ORT profile: %d runs, median run %.4g ms, node time %.4g ms per run' % (n, run_ms, total))
print('  %-24s %10s %7s' % ('op type', 'ms/run', 'share'))
for op, ms in sorted(by_type.items(), key=lambda x: -x[1]):
    print('  %-24s %10.4f %6.1f%%' % (op, ms, 100 * ms / total))
print('  %-40s %-16s %10s' % ('slowest nodes', 'op type', 'ms/run'))
for node, ms in sorted(by_node.items(), key=lambda x: -x[1])[:a.top]:
    k = node if len(node) <= 40 else '...' + node[-37:]
    print('  %-40s %-16s %10.4f' % (k, types_of[node], ms))
