"""Per pattern, the best (fastest old) variant of each table and its speedup old/new from two
`demo all --format json` reports: `python3 best_of_table.py old.json new.json`."""
import json, sys
from collections import defaultdict

def meas(path):
    r = json.load(open(path)); d = {}
    for s in r['sections']:
        for b in s['blocks']:
            if 'table' in b:
                for m in b['table']['measurements']:
                    if m['median_ms'] > 0:
                        d[(s['pattern'], b['table']['id'], m['variant'], m.get('series'), m.get('x'))] = m['median_ms']
    return d

old, new = meas(sys.argv[1]), meas(sys.argv[2])
best = {}
for k, ms in old.items():
    t = k[:2]
    if t not in best or ms < old[best[t]]:
        best[t] = k
per = defaultdict(list)
for t, k in best.items():
    if k in new:
        per[t[0]].append((old[k] / new[k], k))
print('| pattern | tables | worst old/new of a best variant | where (old -> new ms) |')
print('|---|---|---|---|')
for p, v in per.items():
    r, k = min(v)
    print(f'| {p} | {len(v)} | {r:.3f} | {k[1]} / {k[2]}{"" if k[3] is None else " / " + str(k[3])}{"" if k[4] is None else " @ " + str(k[4])} ({old[k]:.4f} -> {new[k]:.4f}) |')
