#!/bin/bash
# The final head's bundle: run.sh tests, run.sh demo (every pattern), and compute-sanitizer's
# four tools over the module trials.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz
export NCCL_NVLS_ENABLE=0
cd bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
timeout 300 ./run.sh tests > $R/tests.log 2>&1; echo "tests rc=$?" >> $R/tests.log
timeout 200 ./run.sh demo > $R/demo.log 2>&1; echo "demo rc=$?" >> $R/demo.log
for tool in memcheck racecheck synccheck initcheck; do
  timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool $tool tests/tests-gpu modules:: > $R/san-$tool.log 2>&1; echo "$tool rc=$?" >> $R/san-$tool.log
done
grep -E "test result|rc=|all passed|FAILED" $R/tests.log | tail -16
tail -25 $R/demo.log
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|rc=" $R/san-*.log
