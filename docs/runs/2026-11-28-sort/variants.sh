#!/bin/bash
# Tile-shape variants of sort_onesweep, each an examples/sort_throughput built with its own
# sm_90 PTX, packed as .gpu/v.tar.xz (variants/<name>); then CUB through CuPy in the same run
# (unless NOPEERS), and with NCU ncu's per-kernel durations over the first variant's sort of 2^24
# keys. PROFILE=1 instead runs only ncu --set full over one sort_onesweep pass (2^24 u32 keys) of
# the first variant and writes the SASS source page (per-instruction executed counts and stall
# samples) as CSV.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tar xJf .gpu/v.tar.xz
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
if [ -n "${PROFILE:-}" ]; then
  first=$(ls variants | head -1)
  timeout 300 ncu -k regex:sort_onesweep --launch-skip 97 --launch-count 1 --set full \
    --import-source no -o /tmp/prof variants/$first 16777216 1 > "$OUT/ncu_full.log" 2>&1
  echo "exit $?"
  ncu -i /tmp/prof.ncu-rep --page details > "$OUT/details.txt" 2>&1
  ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1
  grep -E "Duration|Executed Ipc|Issue Slots|Registers|Achieved Occupancy" "$OUT/details.txt" | head
  exit 0
fi
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
