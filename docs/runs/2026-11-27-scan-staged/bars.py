"""The done-when of the operator reductions and the scans from a sweep.json: per pattern, the
ratio (fastest peer's time / ours) at each size 2^20..2^30, its geometric mean, the % of the
read-only ceiling at 2^28, and the scans' % of the copy at 2^26, 2^28, 2^30."""
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"] if isinstance(d, dict) else d
by = {}
for r in rows:
    pat = (r.get("case") or r).get("pattern")
    by.setdefault(pat, []).append(r)
print(f"{'pattern':<18} {'min ratio 2^20..2^30':>21} {'geomean':>8} {'%read 2^28':>10} {'%copy 2^26/28/30':>18}")
for pat, rs in by.items():
    ratios, read28, copies = [], None, []
    for r in rs:
        n = r["elements"]
        peers = r.get("peers") or []
        if peers and (1 << 20) <= n <= (1 << 30):
            best = min(p["median_ms"] for p in peers)
            ratios.append(best / r["median_ms"])
        if n == 1 << 28:
            read28 = r["percent_of_read"]
        if n in (1 << 26, 1 << 28, 1 << 30):
            copies.append(r["percent_of_copy"])
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    mn = min(ratios) if ratios else float("nan")
    print(f"{pat:<18} {mn:21.3f} {gm:8.3f} {read28 if read28 is not None else float('nan'):10.1f} {'/'.join(f'{c:.1f}' for c in copies):>18}")
