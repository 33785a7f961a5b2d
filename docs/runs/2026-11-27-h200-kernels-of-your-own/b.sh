#!/bin/bash
# demo all, old (bf442f0's bundle) and new, compared; launch_overhead old, new, new, old.
R=$OUT/r; mkdir -p $R
[ -x bundle/bin/demo-old ] || tar xJf .gpu/b.tar.xz
cd bundle
export NCCL_NVLS_ENABLE=0
/usr/bin/time -f "old all %e s" timeout 200 bin/demo-old all --format json > $R/old.json 2> $R/old.err; echo "old rc=$?" >> $R/old.err
/usr/bin/time -f "new all %e s" timeout 200 bin/demo all --format json > $R/new.json 2> $R/new.err; echo "new rc=$?" >> $R/new.err
python3 ../xtask/peers/same_tables.py $R/old.json $R/new.json > $R/same_tables.txt 2>&1; echo "same_tables rc=$?" >> $R/same_tables.txt
bin/demo compare $R/old.json $R/new.json > $R/compare.txt 2>&1; echo "compare rc=$?" >> $R/compare.txt
for w in old new new old; do
  if [ $w = old ]; then b=examples/launch_overhead-old; else b=examples/launch_overhead; fi
  echo "== $w" >> $R/overhead.txt; timeout 60 $b >> $R/overhead.txt 2>&1
done
tail -2 $R/old.err $R/new.err; cat $R/same_tables.txt; tail -12 $R/compare.txt; cat $R/overhead.txt
cd $OUT && tar czf r.tgz r && rm -rf r
