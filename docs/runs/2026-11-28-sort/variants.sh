#!/bin/bash
# Tile-shape variants of sort_onesweep, each an examples/sort_throughput built with its own
# sm_90 PTX, packed as .gpu/v.tar.xz (variants/<name>); then CUB through CuPy in the same run,
# and ncu's per-kernel durations over the first variant's sort of 2^24 keys.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tar xJf .gpu/v.tar.xz
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
for v in variants/*; do
  name=$(basename "$v")
  echo "== $name"
  timeout 150 "$v" "${MAX_N:-268435456}" "${REPS:-9}" > "$OUT/$name.log" 2>&1
  echo "exit $?" >> "$OUT/$name.log"
  grep -E "sort::|exit|rror|panick|mismatch" "$OUT/$name.log"
done
if [ -z "${NOPEERS:-}" ]; then
echo "== peers"
timeout 150 python3 "$here/peers_sort.py" "${MAX_N:-268435456}" > "$OUT/peers.log" 2>&1
grep -E "CUB keys|CUB pairs|argsort" "$OUT/peers.log"
fi
if [ -n "${NCU:-}" ]; then
  first=$(ls variants | head -1)
  timeout 200 ncu -k regex:sort_ --launch-skip 120 --launch-count 5 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    variants/$first 16777216 1 > "$OUT/ncu.log" 2>&1
  grep -E "sort_|duration|registers|warps_active|issue_active|dram__" "$OUT/ncu.log" | head -40
fi
