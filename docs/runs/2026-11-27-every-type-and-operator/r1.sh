#!/bin/bash
# First look at the operators: the reduction trials (every (operator, type) pair), then the ten
# operator sweeps beside torch and CuPy (CUB), on one bundle.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
timeout 200 tests/tests-gpu reduce > $R/tests-reduce.log 2>&1; echo "tests-gpu reduce rc=$?"
grep -E '^test result|FAILED|failed' $R/tests-reduce.log | head -20
P="reduce-max-f32 reduce-min-f32 reduce-argmax-f32 reduce-prod-f32 reduce-max-i32 reduce-min-i32 reduce-argmax-i32 reduce-prod-i32 reduce-sum-i64 reduce-sum-f64"
timeout 330 ./run.sh sweep $R/sweep $P > $R/sweep.log 2>&1; echo "sweep rc=$?"
python3 - $R/sweep/sweep.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"] if isinstance(d, dict) else d
print(f"{'pattern':<18} {'n':>11} {'ms':>8} {'GB/s':>7} {'%read':>6} {'best peer':<18} {'peer ms':>8} {'ratio':>6} ok")
for r in rows:
    peers = r.get("peers") or []
    best = min(peers, key=lambda p: p["median_ms"]) if peers else None
    ratio = best["median_ms"] / r["median_ms"] if best else float("nan")
    pat = (r.get('case') or r).get('pattern')
    print(f"{pat:<18} {r['elements']:>11} {r['median_ms']:8.4f} {r['gbps']:7.1f} {r['percent_of_read']:6.1f} "
          f"{(best['peer'] if best else '-'):<18} {(best['median_ms'] if best else float('nan')):8.4f} {ratio:6.3f} {r['passed']}")
PY
echo "== scan tile shape (old signature)"
timeout 120 python3 ../docs/runs/2026-11-27-every-type-and-operator/scan_tune.py ptx/gpu_sm_90.ptx 2>&1 | tee $R/scan_tune.txt
cd $OUT && tar czf r.tgz r && rm -rf r
