#!/bin/bash
# run.sh tests from a bundle of the kit branch, then compute-sanitizer's four tools over the module trials.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz
export NCCL_NVLS_ENABLE=0
cd bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
timeout 420 ./run.sh tests > $R/tests.log 2>&1; echo "tests rc=$?" >> $R/tests.log
for tool in memcheck racecheck synccheck initcheck; do
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool $tool tests/tests-gpu modules:: > $R/san-$tool.log 2>&1; echo "$tool rc=$?" >> $R/san-$tool.log
done
grep -E "test result|rc=|all passed|FAILED|failed" $R/tests.log | tail -20
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|test result|rc=" $R/san-*.log
grep -E "modules::" $R/tests.log | head
