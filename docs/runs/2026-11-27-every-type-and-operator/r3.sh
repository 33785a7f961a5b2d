#!/bin/bash
# One bundle of the submitted code: run.sh tests, the operator and scan sweeps beside torch and
# CuPy, the scan's tile shape, and compute-sanitizer's four tools over demo reduce and demo scan.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
# The bundle's PTX is the committed prebuilt PTX (carried without it, to fit).
mkdir -p ptx && cp ../cpu/ptx/gpu_sm_*.ptx ptx/
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
if [ "${TESTS:-all}" = all ]; then
  timeout 420 ./run.sh tests > $R/tests.log 2>&1; echo "run.sh tests rc=$?"
  grep -E '^== test executable|^test result' $R/tests.log | paste - - | awk '{print $4, $7, $8, $9, $10, $11, $12}'
else
  timeout 200 tests/tests-gpu $TESTS > $R/tests.log 2>&1; echo "tests-gpu $TESTS rc=$?"
  grep -E '^test result' $R/tests.log
fi
grep -E 'FAILED|panicked' $R/tests.log | head -10
P="scan-i32 scan-f32 scan-max-f32 reduce-max-f32 reduce-min-f32 reduce-argmax-f32 reduce-prod-f32 reduce-max-i32 reduce-min-i32 reduce-argmax-i32 reduce-prod-i32 reduce-sum-i64 reduce-sum-f64"
timeout 420 ./run.sh sweep $R/sweep $P > $R/sweep.log 2>&1; echo "sweep rc=$?"
python3 ../docs/runs/2026-11-27-every-type-and-operator/table.py $R/sweep/sweep.json
echo "== scan tile shape"
timeout 100 python3 ../docs/runs/2026-11-27-every-type-and-operator/scan_tune.py ptx/gpu_sm_90.ptx init 2>&1 | tee $R/scan_tune.txt
if [ "${SANITIZE:-1}" = 1 ]; then
  timeout 300 ./run.sh sanitize reduce scan > $R/sanitize.log 2>&1; echo "sanitize rc=$?"
  tail -14 $R/sanitize.log
fi
cd $OUT && tar czf r.tgz r && rm -rf r
