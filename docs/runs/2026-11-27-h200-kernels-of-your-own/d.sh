#!/bin/bash
# The submitted head's bundle: run.sh tests (the template's GPU tests included), compute-sanitizer
# over the template's trials, the safe kernels' and the module trials, demo vector-add
# old/new/old/new, the launch cost.
R=$OUT/r; mkdir -p $R
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
timeout 330 ./run.sh tests > $R/tests.log 2>&1; echo "run.sh tests rc=$?" | tee -a $R/tests.log
grep -E '^== test executable|^test result' $R/tests.log | paste - - | awk '{print $4, $7, $8, $9, $10, $11, $12}'
CS=/usr/local/cuda/bin/compute-sanitizer
T=$(ls tests/template-app-gpu* | head -1)
for t in memcheck racecheck synccheck initcheck; do
  $CS --tool $t --error-exitcode 99 $T > $R/cs_${t}_template.log 2>&1
  echo "$t template rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/cs_${t}_template.log | tail -1) $(grep -E '^test result' $R/cs_${t}_template.log | tail -1 | cut -c1-40)"
  for f in vector_add:: modules:: ; do
    $CS --tool $t --error-exitcode 99 tests/tests-gpu $f > $R/cs_${t}_${f%::}.log 2>&1
    echo "$t $f rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/cs_${t}_${f%::}.log | tail -1) $(grep -E '^test result' $R/cs_${t}_${f%::}.log | tail -1 | cut -c1-40)"
  done
done
for w in old new old new; do
  if [ $w = old ]; then d=bin/demo-old; else d=bin/demo; fi
  echo "== $w" >> $R/vector_add.txt; $d vector-add >> $R/vector_add.txt 2>&1
done
grep -E '^== |\| vector' $R/vector_add.txt
for w in new old; do
  if [ $w = old ]; then b=examples/launch_overhead-old; else b=examples/launch_overhead; fi
  echo "== $w" >> $R/overhead.txt; timeout 90 $b >> $R/overhead.txt 2>&1
done
cat $R/overhead.txt
cd $OUT && tar czf r.tgz r && rm -rf r
