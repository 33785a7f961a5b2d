#!/bin/bash
# One device call over a bundle of this checkout (packed as .gpu/b.tar.xz, the PTX from cpu/ptx):
#   STEP=a  the multi-process tests (2 and 4 ranks), then run.sh multi-process (the peer,
#           demo multi-gpu --processes N, the same under torchrun), then the one-process demo
#           multi-gpu for comparison.
#   STEP=g  the multi-process tests, run.sh multi-process, the one-process demo with this run's
#           peer, memcheck over 2 ranks, then one GPU's sharded-sum row at the shard lengths.
#   STEP=h  run.sh tests (every test executable).
#   STEP=i  the multi-process tests, demo multi-gpu --processes N up to 1 MiB, the four
#           compute-sanitizer tools over 2 ranks.
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
    echo "== what torchrun gives its workers"
    for how in "--standalone" "--master-addr 127.0.0.1 --master-port 29533"; do
      echo "-- torchrun $how"
      timeout 60 torchrun $how --nproc-per-node 2 --no-python bash -c \
        'env | grep -E "^(MASTER_[A-Z]+|TORCHELASTIC_[A-Z_]+|RANK|LOCAL_RANK|WORLD_SIZE)=" | sort | tr "\n" " "; echo' 2>&1 | grep -v "^W1127" | head -30
    done > "$OUT/torchrun_env.txt"
    cat "$OUT/torchrun_env.txt"
    echo "== tests-gpu multi_gpu (the ring on 4 GPUs)"
    timeout 200 tests/tests-gpu multi_gpu --include-ignored > "$OUT/tests_multi_gpu.log" 2>&1
    echo "exit $?" >> "$OUT/tests_multi_gpu.log"
    tail -6 "$OUT/tests_multi_gpu.log"
    echo "== demo multi-gpu (one process)"
    timeout 240 bin/demo multi-gpu --peers ../docs/runs/2026-11-27-multi-process/r1_h200x4/mp/peers.json \
      --out "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    grep -E "^\||GPU\(s\)|lowest|exit|error" "$OUT/one_process.log" | head -60
    n=$(nvidia-smi -L | wc -l)
    echo "== demo multi-gpu --processes $n"
    timeout 240 bin/demo multi-gpu --processes "$n" --peers ../docs/runs/2026-11-27-multi-process/r1_h200x4/mp/peers.json \
      --out "$OUT/processes" > "$OUT/processes.log" 2>&1
    echo "exit $?" >> "$OUT/processes.log"
    grep -E "^\||results:|lowest|exit|error" "$OUT/processes.log" | head -60
    echo "== torchrun --standalone --nproc-per-node $n --no-python demo multi-gpu"
    timeout 240 torchrun --standalone --nproc-per-node "$n" --no-python bin/demo multi-gpu \
      --peers ../docs/runs/2026-11-27-multi-process/r1_h200x4/mp/peers.json --out "$OUT/torchrun" \
      > "$OUT/torchrun.log" 2>&1
    echo "exit $?" >> "$OUT/torchrun.log"
    grep -E "^\||results:|lowest|exit|error" "$OUT/torchrun.log" | head -60
    if diff <(grep '^results:' "$OUT/processes.log") <(grep '^results:' "$OUT/torchrun.log"); then
      echo "the same results under --processes $n and torchrun"
    else
      echo "RESULTS DIFFER"
    fi
    ;;
  c)
    n=$(nvidia-smi -L | wc -l)
    echo "== tests-multi_process"
    timeout 200 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    tail -9 "$OUT/multi_process_tests.log"
    echo "== tests-gpu multi_gpu"
    timeout 200 tests/tests-gpu multi_gpu --include-ignored > "$OUT/tests_multi_gpu.log" 2>&1
    echo "exit $?" >> "$OUT/tests_multi_gpu.log"
    tail -4 "$OUT/tests_multi_gpu.log"
    echo "== run.sh multi-process"
    timeout 330 ./run.sh multi-process "$OUT/mp" > "$OUT/multi_process_demo.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_demo.log"
    grep -E "^\| (1|2|3|4) |^\| [0-9]+ (KiB|MiB|GiB)|results:|lowest|FAIL|error|exit|same results" "$OUT/multi_process_demo.log" | head -90
    echo "== demo multi-gpu (one process)"
    timeout 200 bin/demo multi-gpu --peers "$OUT/mp/peers.json" --out "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    grep -E "^\||lowest|exit|error" "$OUT/one_process.log" | head -40
    echo "== compute-sanitizer memcheck, 2 ranks"
    timeout 150 compute-sanitizer --tool memcheck --target-processes all --print-limit 20 \
      bin/demo multi-gpu --processes 2 --size 100003 --max-bytes 1048576 --reps 2 > "$OUT/memcheck.log" 2>&1
    echo "exit $?" >> "$OUT/memcheck.log"
    grep -E "ERROR SUMMARY|exit|Program hit" "$OUT/memcheck.log" | head
    ;;
  d)
    echo "== compute-sanitizer memcheck, 2 ranks, this project's kernels (NCCL's excluded, as in run.sh sanitize)"
    timeout 200 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
      --kernel-name-exclude kns=nccl --print-limit 50 \
      bin/demo multi-gpu --processes 2 --size 100003 --max-bytes 1048576 --reps 2 > "$OUT/memcheck.log" 2>&1
    echo "exit $?" >> "$OUT/memcheck.log"
    grep -vE "^=========     |^========= *$" "$OUT/memcheck.log" | grep -E "=====|exit|error" | head -30
    ;;
  e)
    n=$(nvidia-smi -L | wc -l)
    echo "== tests-multi_process"
    timeout 120 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    tail -9 "$OUT/multi_process_tests.log"
    echo "== demo multi-gpu --processes $n (the peer: r1's torch.distributed timings, another run)"
    timeout 200 bin/demo multi-gpu --processes "$n" --peers ../docs/runs/2026-11-27-multi-process/r1_h200x4/mp/peers.json \
      --out "$OUT/processes" > "$OUT/processes.log" 2>&1
    echo "exit $?" >> "$OUT/processes.log"
    grep -E "^\| [1-4] |^\| [0-9]+ (KiB|MiB|GiB)|results:|lowest|exit|error" "$OUT/processes.log" | head -60
    ;;
  f)
    echo "== run.sh multi-gpu (the peer, then demo multi-gpu: one process, NCCL and the ring)"
    timeout 400 ./run.sh multi-gpu "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    grep -E "^\||lowest|exit|error|FAIL" "$OUT/one_process.log" | head -40
    ;;
  g)
    n=$(nvidia-smi -L | wc -l)
    echo "== tests-multi_process"
    timeout 120 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    tail -9 "$OUT/multi_process_tests.log"
    echo "== run.sh multi-process (the peer, --processes $n, torchrun)"
    timeout 300 ./run.sh multi-process "$OUT/mp" > "$OUT/multi_process_demo.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_demo.log"
    grep -E "^\| (1|2|3|4) |^\| [0-9]+ (KiB|MiB|GiB)|results:|lowest|FAIL|error|exit|same results" "$OUT/multi_process_demo.log" | head -90
    echo "== demo multi-gpu (one process), the peer of this run"
    timeout 150 bin/demo multi-gpu --peers "$OUT/mp/peers.json" --out "$OUT/one" > "$OUT/one_process.log" 2>&1
    echo "exit $?" >> "$OUT/one_process.log"
    grep -E "^\||lowest|exit|error" "$OUT/one_process.log" | head -40
    echo "== compute-sanitizer memcheck, 2 ranks (NCCL's kernels excluded, as run.sh sanitize)"
    timeout 120 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
      --kernel-name-exclude kns=nccl --print-limit 50 \
      bin/demo multi-gpu --processes 2 --size 100003 --max-bytes 1048576 --reps 2 > "$OUT/memcheck.log" 2>&1
    echo "exit $?" >> "$OUT/memcheck.log"
    grep -vE "^=========     |^========= *$" "$OUT/memcheck.log" | grep -E "=====|exit|error" | head -30
    echo "== one GPU (device 0), the sharded sum's rows at the shard lengths of 4 and 3 GPUs and the whole input"
    for size in 268435456 357913920 1073741824; do
      CUDA_VISIBLE_DEVICES=0 timeout 90 bin/demo multi-gpu --processes 1 --size $size --max-bytes 1048576 \
        --out "$OUT/one_gpu_$size" > "$OUT/one_gpu_$size.log" 2>&1
      echo "exit $?" >> "$OUT/one_gpu_$size.log"
      grep -E "^\| 1 |^\| GPUs|exit" "$OUT/one_gpu_$size.log" | head -3
    done
    ;;
  h)
    echo "== run.sh tests"
    timeout 570 ./run.sh tests > "$OUT/tests.log" 2>&1
    echo "exit $?" >> "$OUT/tests.log"
    grep -E "^== |test result|FAILED|failed|exit|all passed" "$OUT/tests.log" | head -60
    ;;
  i)
    n=$(nvidia-smi -L | wc -l)
    echo "== tests-multi_process"
    timeout 150 tests/tests-multi_process --include-ignored > "$OUT/multi_process_tests.log" 2>&1
    echo "exit $?" >> "$OUT/multi_process_tests.log"
    grep -E "^test |test result|rank|Error|panicked" "$OUT/multi_process_tests.log" | head -20
    echo "== demo multi-gpu --processes $n (up to 1 MiB)"
    timeout 150 bin/demo multi-gpu --processes "$n" --max-bytes 1048576 --out "$OUT/processes" > "$OUT/processes.log" 2>&1
    echo "exit $?" >> "$OUT/processes.log"
    grep -E "^\| [1-8] |^\| GPUs|results:|exit|error" "$OUT/processes.log" | head -20
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool, 2 ranks (NCCL's kernels excluded)"
      timeout 120 compute-sanitizer --tool $tool --target-processes all --report-api-errors no \
        --kernel-name-exclude kns=nccl --print-limit 20 \
        bin/demo multi-gpu --processes 2 --size 100003 --max-bytes 4096 --reps 2 > "$OUT/$tool.log" 2>&1
      echo "exit $?" >> "$OUT/$tool.log"
      grep -E "ERROR SUMMARY|^exit" "$OUT/$tool.log" | head -4
    done
    ;;
esac
