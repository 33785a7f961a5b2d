#!/bin/bash
# ABBA: the host-bound patterns (bandwidth, md, multi-gpu, conv2d), new then old then old then new.
R=$OUT/r; mkdir -p $R
[ -x bundle/bin/demo ] || tar xJf .gpu/b.tar.xz; [ -x old-demo ] || { xz -dc .gpu/old-demo.xz > old-demo && chmod +x old-demo; }
export NCCL_NVLS_ENABLE=0
cd bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
for round in 1 2; do
  if [ $round = 1 ]; then order="new old"; else order="old new"; fi
  for who in $order; do
    bin=bin/demo; [ $who = old ] && bin=../old-demo
    for p in bandwidth md multi-gpu conv2d; do
      /usr/bin/time -f "$who $p %e s" timeout 100 $bin $p --format json > $R/$who-$round-$p.json 2>> $R/times.txt || echo "$who $p rc=$?" >> $R/times.txt
    done
  done
done
cat $R/times.txt
python3 ../.gpu/abba.py $R | tee $R/abba.md
cd $R && tar czf runs.tgz *.json && rm *.json
