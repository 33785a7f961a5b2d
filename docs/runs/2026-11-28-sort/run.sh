#!/bin/bash
# One device call over a bundle of this checkout (packed as .gpu/b.tar.xz, the PTX from cpu/ptx):
#   STEP=a  the sort's GPU trials (tests-gpu sort::), examples/sort_throughput, the peers
#           (peers_sort.py: CuPy's CUB sort, torch.sort, torch.argsort), compute-sanitizer's four
#           tools over a short sort_throughput.
#   STEP=b  ncu over the first sort::keys u32 of 2^24 keys.
#   STEP=c  ncu --set detailed over one pass of it.
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
