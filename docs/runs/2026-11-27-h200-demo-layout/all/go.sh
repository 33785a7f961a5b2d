#!/bin/bash
# One H200 call: old and new `demo all --format json`, their structure and speed compared, then run.sh tests.
start=$(date +%s)
R=$OUT/r; mkdir -p $R
tar xJf .gpu/b.tar.xz && xz -dc .gpu/old-demo.xz > old-demo && chmod +x old-demo
export NCCL_NVLS_ENABLE=0
cd bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
/usr/bin/time -f "old all %e s" timeout 200 ../old-demo all --format json > $R/old.json 2> $R/old.err; echo "old rc=$?" >> $R/old.err
/usr/bin/time -f "new all %e s" timeout 200 bin/demo all --format json > $R/new.json 2> $R/new.err; echo "new rc=$?" >> $R/new.err
python3 ../xtask/peers/same_tables.py $R/old.json $R/new.json > $R/same_tables.txt 2>&1; echo "same_tables rc=$?" >> $R/same_tables.txt
bin/demo compare $R/old.json $R/new.json > $R/compare.txt 2>&1; echo "compare rc=$?" >> $R/compare.txt
left=$(( 585 - ($(date +%s) - start) ))
echo "tests get ${left}s" > $R/tests.log
timeout $left ./run.sh tests >> $R/tests.log 2>&1; echo "tests rc=$?" >> $R/tests.log
tail -3 $R/old.err $R/new.err; cat $R/same_tables.txt; tail -30 $R/compare.txt; grep -E "test result|passed|failed|rc=" $R/tests.log | tail -25
