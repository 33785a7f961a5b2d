#!/bin/bash
# One device call on a 4-GPU kind over a trimmed bundle of this checkout (.gpu/b.tar.xz:
# bin/demo, tests/tests-multi_process, run.sh and peers.py alone, so that it and the tracked tree
# fit the 64 MiB a call may carry): the multi-process tests at 2 and 4 ranks, then
# run.sh multi-process (the PyTorch peer, demo multi-gpu --processes N, the same under torchrun).
# Logs go to $OUT.
set -u
cd "$(dirname "$0")/../../.."
tar xJf .gpu/b.tar.xz
cd bundle
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
lib=$(python3 -c 'import glob,os,nvidia; r=[os.path.dirname(p) for p in nvidia.__path__]; print(sorted(glob.glob(os.path.join(r[0],"nvidia","**","libnccl.so*"),recursive=True))[0])')
mkdir -p /tmp/ncclink && ln -sf "$lib" /tmp/ncclink/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclink:$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "== tests-multi_process"
timeout 150 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
echo "exit $?" >> "$OUT/multi_process_tests.log"
grep -E "^test |test result|exit" "$OUT/multi_process_tests.log" | head -20
echo "== run.sh multi-process"
timeout 330 ./run.sh multi-process "$OUT/mp" > "$OUT/multi_process_demo.log" 2>&1
echo "exit $?" >> "$OUT/multi_process_demo.log"
grep -E "^\| (1|2|3|4) |^\| [0-9]+ (KiB|MiB|GiB) |results:|lowest|FAIL|failed|error|exit|same results" "$OUT/multi_process_demo.log" | head -80
