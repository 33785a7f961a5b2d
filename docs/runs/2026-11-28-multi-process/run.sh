#!/bin/bash
# One device call over a bundle of this checkout (packed as .gpu/b.tar.xz, the PTX from cpu/ptx),
# on whatever GPUs the machine has (2 in this session's runs: no 4-GPU kind was lent):
#   STEP=j  run.sh tests (every test executable, the multi-process tests at the rank counts the
#           GPUs allow), then examples/shard_offsets (one GPU's sum at the 3-rank shard offsets,
#           128-byte against 2 MiB aligned), then demo multi-gpu --processes N up to 64 MiB.
#   STEP=k  on a 4-GPU kind, over a trimmed bundle (bin/demo, tests/tests-multi_process, run.sh
#           and peers.py alone, stripped, so that it and the tracked tree fit the 64 MiB a call
#           may carry): the multi-process tests at 2 and 4 ranks, then run.sh multi-process (the
#           PyTorch peer, demo multi-gpu --processes N, the same under torchrun).
#   STEP=l  over a whole bundle (its logs over 40 KB now stored compressed, so that it fits):
#           run.sh tests (every test executable; the multi-process tests at 2 and 4 ranks), then
#           compute-sanitizer memcheck over demo multi-gpu --processes 2 (NCCL's kernels
#           excluded, as run.sh sanitize does).
#   STEP=m  run.sh multi-process (the peer, --processes N, torchrun), then the one-process demo
#           multi-gpu beside the same peer file (NCCL's all-reduce and the lab's ring).
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
n=$(nvidia-smi -L | wc -l)
case "${STEP:-j}" in
  j)
    echo "== run.sh tests"
    timeout 390 ./run.sh tests > "$OUT/tests.log" 2>&1
    echo "exit $?" >> "$OUT/tests.log"
    grep -E "^== |test result|FAILED|failed|panicked|exit|all passed" "$OUT/tests.log" | head -60
    echo "== examples/shard_offsets"
    timeout 60 examples/shard_offsets > "$OUT/shard_offsets.log" 2>&1
    echo "exit $?" >> "$OUT/shard_offsets.log"
    cat "$OUT/shard_offsets.log"
    echo "== demo multi-gpu --processes $n (up to 64 MiB)"
    timeout 100 bin/demo multi-gpu --processes "$n" --max-bytes 67108864 --out "$OUT/processes" > "$OUT/processes.log" 2>&1
    echo "exit $?" >> "$OUT/processes.log"
    grep -E "^\| [1-8] |^\| GPUs|^\| [0-9]+ (KiB|MiB)|results:|lowest|exit|error" "$OUT/processes.log" | head -40
    ;;
  k)
    echo "== tests-multi_process"
    timeout 150 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    grep -E "^test |test result|exit" "$OUT/multi_process_tests.log" | head -20
    echo "== run.sh multi-process"
    timeout 330 ./run.sh multi-process "$OUT/mp" > "$OUT/multi_process_demo.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_demo.log"
    grep -E "^\| (1|2|3|4) |^\| [0-9]+ (KiB|MiB|GiB) |results:|lowest|FAIL|failed|error|exit|same results" "$OUT/multi_process_demo.log" | head -80
    ;;
  l)
    echo "== run.sh tests"
    timeout 420 ./run.sh tests > "$OUT/tests.log" 2>&1
    echo "exit $?" >> "$OUT/tests.log"
    grep -E "^== |test result|FAILED|failed|panicked|exit|all passed" "$OUT/tests.log" | head -60
    echo "== compute-sanitizer memcheck, 2 ranks"
    timeout 140 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
      --kernel-name-exclude kns=nccl --print-limit 50 \
      bin/demo multi-gpu --processes 2 --size 100003 --max-bytes 1048576 --reps 2 > "$OUT/memcheck.log" 2>&1
    echo "exit $?" >> "$OUT/memcheck.log"
    grep -vE "^=========     |^========= *$" "$OUT/memcheck.log" | grep -E "=====|exit|error" | head -30
    ;;
  m)
    echo "== run.sh multi-process"
    timeout 330 ./run.sh multi-process "$OUT/mp" > "$OUT/multi_process_demo.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_demo.log"
    grep -E "^\| (1|2|3|4) |^\| [0-9]+ (KiB|MiB|GiB) |results:|lowest|FAIL|failed|error|exit|same results" "$OUT/multi_process_demo.log" | head -70
    echo "== demo multi-gpu (one process), the peer of this run"
    timeout 200 bin/demo multi-gpu --peers "$OUT/mp/peers.json" --out "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    grep -E "^\||lowest|exit|error" "$OUT/one_process.log" | head -50
    ;;
esac
