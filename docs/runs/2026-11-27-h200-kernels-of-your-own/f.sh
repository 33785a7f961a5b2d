#!/bin/bash
# The final head's bundle, in what device time was left: run.sh demo (every pattern), then the GPU
# trials of constant memory and modules (the code the last change moved).
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 ./run.sh demo > $OUT/demo.log 2>&1; echo "run.sh demo rc=$?"
tail -28 $OUT/demo.log
timeout 40 tests/tests-gpu constant 2>&1 | tail -2
timeout 20 tests/tests-gpu modules:: 2>&1 | tail -2
