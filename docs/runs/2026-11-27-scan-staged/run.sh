#!/bin/bash
# One bundle of the submitted code, in two calls (each under the device's 10 minutes):
#   STEP=a: run.sh tests, then limit.py (what stops the scan short of the copy);
#   STEP=b: the scan and operator sweeps beside torch and CuPy, then compute-sanitizer's four
#           tools over demo reduce and demo scan (SANITIZE=0 skips them).
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
# The bundle's PTX is the committed prebuilt PTX (carried without it, to fit).
mkdir -p ptx && cp ../cpu/ptx/gpu_sm_*.ptx ptx/
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
D=../docs/runs/2026-11-27-scan-staged
if [ "$STEP" = a ]; then
  timeout 450 ./run.sh tests > $R/tests.log 2>&1; echo "run.sh tests rc=$?"
  grep -E '^== test executable|^test result' $R/tests.log | paste - - | awk '{print $4, $7, $8, $9, $10, $11, $12}'
  grep -E 'FAILED|panicked|failed' $R/tests.log | head -10
  timeout 120 python3 $D/limit.py ptx/gpu_sm_90.ptx > $R/limit.txt 2>&1; echo "limit rc=$?"
  sed -n '/% of the copy/,$p' $R/limit.txt
else
  P="scan-i32 scan-f32 scan-max-f32 reduce-max-f32 reduce-min-f32 reduce-argmax-f32 reduce-prod-f32 reduce-max-i32 reduce-min-i32 reduce-argmax-i32 reduce-prod-i32 reduce-sum-i64 reduce-sum-f64"
  timeout ${SWEEP_S:-300} ./run.sh sweep $R/sweep $P > $R/sweep.log 2>&1; echo "sweep rc=$?"
  python3 ../docs/runs/2026-11-27-every-type-and-operator/table.py $R/sweep/sweep.json > $R/table.txt 2>&1
  cat $R/table.txt
  if [ "${SANITIZE:-1}" = 1 ]; then
    timeout 270 ./run.sh sanitize reduce scan > $R/sanitize.log 2>&1; echo "sanitize rc=$?"
    tail -14 $R/sanitize.log
  fi
fi
cd $OUT && tar czf r.tgz r && rm -rf r
