#!/bin/bash
# One device call over a bundle of this checkout (packed as .gpu/b.tar.xz, the PTX from cpu/ptx):
#   STEP=a  the multi-process tests (2 and 4 ranks), then run.sh multi-process (the peer,
#           demo multi-gpu --processes N, the same under torchrun), then the one-process demo
#           multi-gpu for comparison.
# Logs go to $OUT.
set -u
cd "$(dirname "$0")/../../.."
tar xJf .gpu/b.tar.xz
cd bundle
mkdir -p ptx && cp ../cpu/ptx/gpu_sm_*.ptx ptx/
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
lib=$(python3 -c 'import glob,os,nvidia; r=[os.path.dirname(p) for p in nvidia.__path__]; print(sorted(glob.glob(os.path.join(r[0],"nvidia","**","libnccl.so*"),recursive=True))[0])')
mkdir -p /tmp/ncclink && ln -sf "$lib" /tmp/ncclink/libnccl.so
export LD_LIBRARY_PATH=/tmp/ncclink:$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
case "${STEP:-a}" in
  a)
    echo "== tests-multi_process"
    (time timeout 240 tests/tests-multi_process --include-ignored) > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    tail -25 "$OUT/multi_process_tests.log"
    echo "== run.sh multi-process"
    (time timeout 400 ./run.sh multi-process "$OUT/mp") > "$OUT/multi_process_demo.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_demo.log"
    grep -E "^\||results:|rank 0 of|lowest|FAIL|error|exit|same results|real" "$OUT/multi_process_demo.log" | head -150
    ;;
  b)
    echo "== demo multi-gpu (one process)"
    timeout 300 bin/demo multi-gpu --out "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    head -40 "$OUT/one_process.log"
    ;;
esac
