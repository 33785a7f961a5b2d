#!/bin/bash
# The scans with operators, the scan by key and the segmented reductions: their trials, the scan
# sweeps beside torch and CuPy, the look-back's tile shape, and demo scan's tables.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
timeout 240 tests/tests-gpu scan > $R/tests-scan.log 2>&1; echo "tests-gpu scan rc=$?"
grep -E '^test result|FAILED|panicked' $R/tests-scan.log | head -20
timeout 120 tests/tests-gpu reduce::segmented > $R/tests-segmented.log 2>&1; echo "tests-gpu reduce::segmented rc=$?"
grep -E '^test result|FAILED|panicked' $R/tests-segmented.log | head -20
timeout 200 ./run.sh sweep $R/sweep scan-i32 scan-f32 scan-max-f32 > $R/sweep.log 2>&1; echo "sweep rc=$?"
python3 ../docs/runs/2026-11-27-every-type-and-operator/table.py $R/sweep/sweep.json
echo "== scan tile shape"
timeout 100 python3 ../docs/runs/2026-11-27-every-type-and-operator/scan_tune.py ptx/gpu_sm_90.ptx init 2>&1 | tee $R/scan_tune.txt
timeout 150 bin/demo scan > $R/demo-scan.log 2>&1; echo "demo scan rc=$?"
grep -A60 "operators" $R/demo-scan.log | head -70
cd $OUT && tar czf r.tgz r && rm -rf r
