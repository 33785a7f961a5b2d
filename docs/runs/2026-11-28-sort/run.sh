#!/bin/bash
# One device call over a bundle of this checkout (packed as .gpu/b.tar.xz, the PTX from cpu/ptx):
#   STEP=a  the sort's GPU trials (tests-gpu sort::), examples/sort_throughput, the peers
#           (peers_sort.py: CuPy's CUB sort, torch.sort, torch.argsort), compute-sanitizer's four
#           tools over a short sort_throughput.
#   STEP=b  ncu over the first sort::keys u32 of 2^24 keys.
#   STEP=c  ncu --set detailed over one pass of it.
#   STEP=d  over a mini bundle (bin/demo, peers.py): demo sort, compute-sanitizer's four tools
#           over demo sort --size 100003, peers.py --sweep over the sort sweeps, then demo sweep
#           of them beside those peers (REPS reps, default 20).
#   STEP=e  over a mini bundle (bin/demo, tests/tests-gpu): the sort's GPU trials (the ladder's
#           among them), demo sort (the entry points and the ladder), compute-sanitizer's four
#           tools over demo sort --size 100003.
#   STEP=f  over a whole bundle: run.sh tests, then ncu (a few metrics: time, warp instructions,
#           issue slots busy, warps active, DRAM bytes, registers) over the launches of one sort
#           of 2^24 u32 keys, the library's (examples/sort_throughput) and CUB's (CuPy's
#           ndarray.sort), in the same run.
#   STEP=g  over a whole bundle: run.sh tests, then compute-sanitizer's four tools over
#           demo sort --size 100003 (the entry points, the ladder, the segmented sort).
#   STEP=h  over a whole bundle: demo sort (2^24 keys), then run.sh sweep of the four sort sweeps
#           (peers.py and demo sweep in the same run).
# Logs go to $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tar xJf .gpu/b.tar.xz
cd bundle
mkdir -p ptx && cp ../cpu/ptx/gpu_sm_*.ptx ptx/
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
case "${STEP:-a}" in
  e)
    echo "== tests-gpu sort::"
    timeout 240 tests/tests-gpu sort:: --include-ignored > "$OUT/tests_sort.log" 2>&1
    echo "exit $?" >> "$OUT/tests_sort.log"
    grep -E "FAILED|failed|panicked|test result|^exit" "$OUT/tests_sort.log" | head -30
    echo "== demo sort"
    timeout 150 bin/demo sort > "$OUT/demo_sort.log" 2>&1
    echo "exit $?" >> "$OUT/demo_sort.log"
    grep -E "^\||exit|error" "$OUT/demo_sort.log" | grep -v "^|--" | head -20
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool (demo sort --size 100003)"
      timeout 100 compute-sanitizer --tool $tool --print-limit 10 bin/demo sort --size 100003 --reps 2 > "$OUT/$tool.log" 2>&1
      echo "exit $?" >> "$OUT/$tool.log"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" "$OUT/$tool.log" | head -4
    done
    ;;
  d)
    reps=${REPS:-20}
    echo "== demo sort"
    timeout 120 bin/demo sort --out "$OUT/demo" > "$OUT/demo_sort.log" 2>&1
    echo "exit $?" >> "$OUT/demo_sort.log"
    grep -E "^\||exit|error" "$OUT/demo_sort.log" | head -20
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool (demo sort --size 100003)"
      timeout 100 compute-sanitizer --tool $tool --print-limit 10 bin/demo sort --size 100003 --reps 2 > "$OUT/$tool.log" 2>&1
      echo "exit $?" >> "$OUT/$tool.log"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" "$OUT/$tool.log" | head -4
    done
    sorts="sort-keys-u32 sort-keys-f32 sort-pairs-u32 sort-argsort-f32"
    echo "== peers.py --sweep ($sorts)"
    timeout 200 python3 peers.py --sweep "$OUT/sweep-peers.json" --demo bin/demo --reps "$reps" --patterns $sorts > "$OUT/peers.log" 2>&1
    echo "exit $?" >> "$OUT/peers.log"
    tail -3 "$OUT/peers.log"
    echo "== demo sweep $sorts"
    timeout 240 bin/demo sweep $sorts --reps "$reps" --peers "$OUT/sweep-peers.json" --out "$OUT/sweep" > "$OUT/sweep.log" 2>&1
    echo "exit $?" >> "$OUT/sweep.log"
    grep -vE "^sweep: " "$OUT/sweep.log" | grep -E "^\||^#|exit|error" | head -60
    ;;
  a)
    echo "== tests-gpu sort::"
    timeout 240 tests/tests-gpu sort:: --include-ignored > "$OUT/tests_sort.log" 2>&1
    echo "exit $?" >> "$OUT/tests_sort.log"
    grep -E "FAILED|failed|panicked|test result|^exit" "$OUT/tests_sort.log" | head -30
    echo "== examples/sort_throughput"
    timeout 120 examples/sort_throughput > "$OUT/sort_throughput.log" 2>&1
    echo "exit $?" >> "$OUT/sort_throughput.log"
    cat "$OUT/sort_throughput.log"
    echo "== peers"
    timeout 120 python3 "$here/peers_sort.py" > "$OUT/peers.log" 2>&1
    echo "exit $?" >> "$OUT/peers.log"
    cat "$OUT/peers.log"
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool (sort_throughput up to 2^20)"
      timeout 100 compute-sanitizer --tool $tool --print-limit 10 examples/sort_throughput 1048576 2 > "$OUT/$tool.log" 2>&1
      echo "exit $?" >> "$OUT/$tool.log"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" "$OUT/$tool.log" | head -4
    done
    ;;
esac
case "${STEP:-a}" in
  g)
    echo "== run.sh tests"
    timeout 400 ./run.sh tests > "$OUT/tests.log" 2>&1
    echo "exit $?" >> "$OUT/tests.log"
    grep -E "^== |test result|FAILED|failed|panicked|exit|all passed" "$OUT/tests.log" | grep -v "^== test executable" | head -40
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool (demo sort --size 100003)"
      timeout 80 compute-sanitizer --tool $tool --print-limit 10 bin/demo sort --size 100003 --reps 2 > "$OUT/$tool.log" 2>&1
      echo "exit $?" >> "$OUT/$tool.log"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" "$OUT/$tool.log" | head -4
    done
    ;;
  h)
    echo "== demo sort"
    timeout 150 bin/demo sort --out "$OUT/demo" > "$OUT/demo_sort.log" 2>&1
    echo "exit $?" >> "$OUT/demo_sort.log"
    grep -E "^\||exit|error" "$OUT/demo_sort.log" | grep -v "^|--" | head -30
    sorts="sort-keys-u32 sort-keys-f32 sort-pairs-u32 sort-argsort-f32"
    echo "== run.sh sweep $sorts"
    timeout 400 ./run.sh sweep "$OUT/sweep" $sorts > "$OUT/sweep.log" 2>&1
    echo "exit $?" >> "$OUT/sweep.log"
    grep -vE "^sweep: " "$OUT/sweep.log" | grep -E "^\||^#|exit|error|FAIL" | head -70
    ;;
  f)
    echo "== run.sh tests"
    timeout 420 ./run.sh tests > "$OUT/tests.log" 2>&1
    echo "exit $?" >> "$OUT/tests.log"
    grep -E "^== |test result|FAILED|failed|panicked|exit|all passed" "$OUT/tests.log" | head -60
    metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__block_size,launch__grid_size
    echo "== ncu: the library's sort::keys u32 of 2^24 keys (histogram and 4 passes)"
    timeout 200 ncu -k regex:"sort_(onesweep|histogram)_u32" --launch-skip 120 --launch-count 5 \
      --metrics "$metrics" examples/sort_throughput 16777216 1 > "$OUT/ncu_lab.log" 2>&1
    echo "exit $?" >> "$OUT/ncu_lab.log"
    cat > /tmp/cub_sort.py <<'PY'
import cupy
a = cupy.random.randint(0, 2**32, size=1 << 24, dtype=cupy.uint64).astype(cupy.uint32)
for _ in range(2):
    b = a.copy()
    b.sort()
cupy.cuda.runtime.deviceSynchronize()
PY
    echo "== ncu: CUB's DeviceRadixSort u32 of 2^24 keys (CuPy's ndarray.sort)"
    timeout 200 ncu -k regex:DeviceRadixSort --launch-skip 0 --launch-count 12 \
      --metrics "$metrics" python3 /tmp/cub_sort.py > "$OUT/ncu_cub.log" 2>&1
    echo "exit $?" >> "$OUT/ncu_cub.log"
    for f in ncu_lab ncu_cub; do
      echo "-- $f"
      grep -E "^  [A-Za-z_]|gpu__time|inst_executed|issue_active|warps_active|dram__bytes|dram__throughput|registers|block_size|grid_size|^exit" "$OUT/$f.log" \
        | sed -E 's/ +/ /g' | head -130
    done
    ;;
  b)
    echo "== ncu: the first sort::keys u32 of 2^24 keys (histogram and 4 passes)"
    timeout 400 ncu -k regex:sort_ --launch-skip 120 --launch-count 5 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      examples/sort_throughput 16777216 1 > "$OUT/ncu.log" 2>&1
    echo "exit $?" >> "$OUT/ncu.log"
    grep -E "sort_|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Stall|Warp Cycles Per Issued|^exit" "$OUT/ncu.log" | head -120
    ;;
esac
case "${STEP:-a}" in
  c)
    echo "== ncu --set detailed: the second pass of the first sort::keys u32 of 2^24 keys"
    timeout 300 ncu -k regex:sort_onesweep --launch-skip 97 --launch-count 1 --set detailed \
      examples/sort_throughput 16777216 1 > "$OUT/ncu_detailed.log" 2>&1
    echo "exit $?" >> "$OUT/ncu_detailed.log"
    grep -E "Duration|Throughput|Executed Ipc|Issue Slots|Instructions|Bank|Conflict|Occupancy|Stall|Warp Cycles|Shared|L1|L2|^exit" "$OUT/ncu_detailed.log" | head -90
    ;;
esac
