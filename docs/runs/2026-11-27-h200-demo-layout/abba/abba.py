"""ABBA comparison of the old and new demo's host-bound patterns: per pattern, each measurement's
speedup old/new in round 1 (new ran first) and round 2 (old ran first), and their geometric mean."""
import json, math, sys
R = sys.argv[1]
def meas(path):
    r = json.load(open(path)); d = {}
    for s in r['sections']:
        for b in s['blocks']:
            if 'table' in b:
                for m in b['table']['measurements']:
                    if m['median_ms'] > 0:
                        d[(b['table']['id'], m['variant'], m.get('series'), m.get('x'))] = m['median_ms']
    return d
print('| pattern | measurements | geomean old/new, round 1 (new first) | round 2 (old first) | both rounds | slowest best-of-table (both rounds) |')
print('|---|---|---|---|---|---|')
for p in ['bandwidth', 'md', 'multi-gpu', 'conv2d']:
    rounds = []
    for k in (1, 2):
        o, n = meas(f'{R}/old-{k}-{p}.json'), meas(f'{R}/new-{k}-{p}.json')
        rounds.append({key: o[key] / n[key] for key in o if key in n})
    g = lambda d: math.exp(sum(math.log(v) for v in d.values()) / len(d))
    both = {k: math.sqrt(rounds[0][k] * rounds[1][k]) for k in rounds[0] if k in rounds[1]}
    # best of each table (fastest old median, round 2) and its two-round speedup
    o2 = meas(f'{R}/old-2-{p}.json'); best = {}
    for key, ms in o2.items():
        t = (key[0], key[2], key[3])
        if t not in best or ms < o2[best[t]]: best[t] = key
    worst = min((both[k], k) for k in best.values() if k in both)
    print(f'| {p} | {len(both)} | {g(rounds[0]):.3f} | {g(rounds[1]):.3f} | {g(both):.3f} | {worst[0]:.3f} {worst[1][0]}/{worst[1][1]} |')
