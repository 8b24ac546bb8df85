#!/usr/bin/env python3
"""Per-node A/B of cort builds: alternating `cort bench --profile --json` processes, each node's minimum
over the rounds, summed by name pattern. On a VM whose processes run at one of several speeds, per-node
minimums over alternating rounds compare builds where whole-model medians cannot; where the speed is the
vCPU's (a 1-thread process on vCPU 1 of the 2-vCPU Zen 5 VM of 2026-12-06 ran 20 % slower than on vCPU 0),
`--cpus 0` pins every process to one.

    /usr/bin/python3 bench/profile_ab.py MODEL THREADS ROUNDS RUNS NAME=CORT_BINARY ... [--pattern P ...] [--cpus LIST]
"""
import argparse, collections, json, subprocess

ap = argparse.ArgumentParser()
ap.add_argument('model')
ap.add_argument('threads')
ap.add_argument('rounds', type=int)
ap.add_argument('runs')
ap.add_argument('builds', nargs='+', metavar='NAME=BINARY')
ap.add_argument('--pattern', action='append', default=[], help='sum the nodes whose name contains P (repeatable)')
ap.add_argument('--cpus', help='run every process under taskset -c CPUS (a VM whose vCPUs run at different speeds)')
a = ap.parse_args()
builds = [b.split('=', 1) for b in a.builds]
best = {n: collections.defaultdict(lambda: float('inf')) for n, _ in builds}
medians = {n: [] for n, _ in builds}
for _ in range(a.rounds):
    for name, binary in builds:
        pin = ['taskset', '-c', a.cpus] if a.cpus else []
        out = subprocess.run(pin + [binary, 'bench', a.model, '--threads', a.threads, '--runs', a.runs, '--warmup', '5',
                              '--profile', '100000', '--json'], capture_output=True, text=True, check=True).stdout
        j = json.loads(out)
        medians[name].append(round(j['median_ms'], 3))
        for p in j['profile']:
            best[name][p['name']] = min(best[name][p['name']], p['ms'])
for name, _ in builds:
    print('%s: medians %s, sum of per-node minimums %.3f ms' % (name, medians[name], sum(best[name].values())))
for pat in a.pattern:
    print('  %-16s ' % pat + '  '.join('%s %.3f' % (n, sum(v for k, v in best[n].items() if pat in k)) for n, _ in builds))
