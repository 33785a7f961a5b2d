#!/usr/bin/env bash
tar xJf .gpu/b.tar.xz; cd bundle; export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CS=/usr/local/cuda/bin/compute-sanitizer
./run.sh tests > $OUT/tests.log 2>&1; echo "run.sh tests rc=$?"
grep -E 'passed|failed|FAILED' $OUT/tests.log | tail -25
for t in memcheck racecheck synccheck initcheck; do
  for f in modules:: vector_add:: ; do
    $CS --tool $t --error-exitcode 99 tests/tests-gpu $f > $OUT/cs_${t}_${f%::}.log 2>&1
    echo "$t $f rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/cs_${t}_${f%::}.log | tail -1) $(grep -E '^test result' $OUT/cs_${t}_${f%::}.log | tail -1)"
  done
done
./run.sh sanitize vector-add reduce scan bandwidth > $OUT/sanitize.log 2>&1; echo "sanitize rc=$?"
tail -22 $OUT/sanitize.log
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
