#!/bin/bash
# Two GPUs: the multi-GPU trials (the ring's safe add_into among them) and memcheck over them.
rm -rf bundle; tar xJf .gpu/b.tar.xz; cd bundle
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 tests/tests-gpu multi_gpu:: 2>&1 | tail -4
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck tests/tests-gpu all_reduce::Ring 2>&1 | grep -E 'ERROR SUMMARY|^test result'
