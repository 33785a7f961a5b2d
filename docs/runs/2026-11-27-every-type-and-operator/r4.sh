#!/bin/bash
# The H100 side, in the device time left: the operator and scan sweeps beside torch and CuPy
# first, then the operator trials of every (operator, type) pair.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
mkdir -p ptx && cp ../cpu/ptx/gpu_sm_*.ptx ptx/
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
P="scan-i32 scan-f32 scan-max-f32 reduce-max-f32 reduce-min-f32 reduce-argmax-f32 reduce-prod-f32 reduce-max-i32 reduce-min-i32 reduce-argmax-i32 reduce-prod-i32 reduce-sum-i64 reduce-sum-f64"
timeout 240 ./run.sh sweep $R/sweep $P > $R/sweep.log 2>&1; echo "sweep rc=$?"
python3 ../docs/runs/2026-11-27-every-type-and-operator/table.py $R/sweep/sweep.json > $R/table.txt 2>&1
cat $R/table.txt
(cd $OUT && tar czf r.tgz r)
timeout 100 tests/tests-gpu reduce::ops > $R/tests-reduce-ops.log 2>&1; echo "tests-gpu reduce::ops rc=$?"; grep -E '^test result' $R/tests-reduce-ops.log
timeout 60 tests/tests-gpu scan::ops::sum > $R/tests-scan-sum.log 2>&1; echo "tests-gpu scan::ops::sum rc=$?"; grep -E '^test result' $R/tests-scan-sum.log
cd $OUT && rm -f r.tgz && tar czf r.tgz r && rm -rf r
