"""The rows of a demo sweep.json: time, GB/s, % of the read-only ceiling and of the copy, the
fastest peer of the same run and the speed ratio (peer time / ours)."""
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"] if isinstance(d, dict) else d
print(f"{'pattern':<18} {'n':>11} {'ms':>8} {'GB/s':>7} {'%read':>6} {'%copy':>6} {'best peer':<18} {'peer ms':>8} {'ratio':>6} ok")
for r in rows:
    peers = r.get("peers") or []
    best = min(peers, key=lambda p: p["median_ms"]) if peers else None
    ratio = best["median_ms"] / r["median_ms"] if best else float("nan")
    pat = (r.get('case') or r).get('pattern')
    print(f"{pat:<18} {r['elements']:>11} {r['median_ms']:8.4f} {r['gbps']:7.1f} {r['percent_of_read']:6.1f} {r['percent_of_copy']:6.1f} "
          f"{(best['peer'] if best else '-'):<18} {(best['median_ms'] if best else float('nan')):8.4f} {ratio:6.3f} {r['passed']}")
